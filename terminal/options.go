package terminal

import (
	"log/slog"
	"time"
)

// Defaults of Options and CreateOptions.
const (
	DefaultScrollback    = 2 << 20
	DefaultBatchInterval = 4 * time.Millisecond
	DefaultKillGrace     = 2 * time.Second
	DefaultCols          = 80
	DefaultRows          = 24

	// maxBatch caps the bytes of one Output.
	maxBatch = 256 << 10
	// flushNow is the backlog from which a subscription sends at once instead
	// of waiting BatchInterval for more.
	flushNow = 32 << 10
	// maxPendingInput caps the input queued for one terminal.
	maxPendingInput = 1 << 20
	// readBuf is the PTY reader's buffer.
	readBuf = 64 << 10
)

// Options configure a Manager. Zero values take the defaults.
type Options struct {
	// Scrollback is the ring buffer of each terminal in bytes (default 2 MiB).
	Scrollback int
	// BatchInterval is how long a subscription waits to coalesce small
	// outputs into one Output (default 4ms).
	BatchInterval time.Duration
	// SubscriberBuffer is how many bytes a subscriber may lag behind the
	// newest output before it is dropped (default and maximum: Scrollback).
	SubscriberBuffer int
	// KillGrace is the time between SIGTERM and SIGKILL (default 2s).
	KillGrace time.Duration
	// Logger receives lifecycle records (default slog.Default()).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Scrollback <= 0 {
		o.Scrollback = DefaultScrollback
	}
	if o.BatchInterval <= 0 {
		o.BatchInterval = DefaultBatchInterval
	}
	if o.SubscriberBuffer <= 0 || o.SubscriberBuffer > o.Scrollback {
		o.SubscriberBuffer = o.Scrollback
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// CreateOptions describe a new terminal.
type CreateOptions struct {
	ProjectID string
	// ProjectDir is the project's root; the cwd must lie inside it.
	ProjectDir string
	// Cwd is relative to ProjectDir, or absolute inside it (symlinks
	// resolved); empty means ProjectDir.
	Cwd string
	// Shell is the shell to start (default $SHELL, else /bin/bash, else
	// /bin/sh; cmd.exe's COMSPEC on Windows). Ignored when Command is set.
	Shell string
	// Command, when set, runs instead of a login-like shell.
	Command []string
	// Env adds variables to the sanitized environment; they win.
	Env  map[string]string
	Cols uint16
	Rows uint16
	// Name is for display (default: the program's base name).
	Name string
}
