// Package sandbox owns the OS-level sandbox that shell commands can run in
// (seed §8.4): bubblewrap on Linux (the whole system read-only, the workspace
// and temp dirs writable), sandbox-exec on macOS (file writes limited to the
// workspace and temp dirs), none elsewhere. Resolve detects what works here;
// Wrap turns a command's argv into the sandboxed argv.
//
// Concurrency: all functions are safe for concurrent use. The availability
// probe runs once per process and is cached.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mode is the configured sandbox mode.
type Mode string

// Modes.
const (
	ModeAuto     Mode = "auto"     // use the sandbox when it works (default)
	ModeOff      Mode = "off"      // never use it
	ModeRequired Mode = "required" // fail loudly when it is not available
)

func (m Mode) String() string { return string(m) }

// ParseMode parses a mode name; "" is auto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return ModeAuto, nil
	case ModeAuto, ModeOff, ModeRequired:
		return m, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownMode, s)
}

// Kinds of sandbox.
const (
	KindBwrap       = "bwrap"
	KindSandboxExec = "sandbox-exec"
	KindNone        = "none"
)

// Config is the sandbox part of the engine options.
type Config struct {
	Mode          Mode
	ExtraWritable []string // more writable paths, e.g. a build cache
}

// Status is what Resolve found.
type Status struct {
	Mode     Mode   `json:"mode"`
	Kind     string `json:"kind"`     // "bwrap" | "sandbox-exec" | "none"
	Enforced bool   `json:"enforced"` // commands really run confined
	Reason   string `json:"reason,omitempty"`
}

// Sentinels.
var (
	ErrUnknownMode = errors.New("unknown sandbox mode")
	// ErrUnavailable: mode required, but no working sandbox here.
	ErrUnavailable = errors.New("sandbox required but not available")
)

// Resolve decides the sandbox for a configuration. In required mode an
// unavailable sandbox is an error that says what is missing; in auto mode it
// is a Status with Enforced false and the reason.
func Resolve(cfg Config) (Status, error) {
	mode := cfg.Mode
	if mode == "" {
		mode = ModeAuto
	}
	switch mode {
	case ModeOff:
		return Status{Mode: ModeOff, Kind: KindNone, Reason: "sandbox disabled by configuration"}, nil
	case ModeAuto, ModeRequired:
	default:
		return Status{}, fmt.Errorf("%w: %q", ErrUnknownMode, mode)
	}
	st := detect()
	st.Mode = mode
	if mode == ModeRequired && !st.Enforced {
		return st, fmt.Errorf("%w: %s", ErrUnavailable, st.Reason)
	}
	return st, nil
}

// Describe is a one-line description for logs and the UI.
func Describe(st Status) string {
	if !st.Enforced {
		if st.Reason == "" {
			return "no OS sandbox"
		}
		return "no OS sandbox: " + st.Reason
	}
	switch st.Kind {
	case KindBwrap:
		return "bubblewrap: system read-only, writes limited to the workspace and temp dirs"
	case KindSandboxExec:
		return "sandbox-exec: writes limited to the workspace and temp dirs"
	}
	return st.Kind
}

// Wrap returns argv run inside the sandbox, or argv unchanged when the
// sandbox is not enforced. workspace and extraWritable stay writable, as do
// the temp dirs.
func Wrap(st Status, workspace string, extraWritable []string, argv []string) []string {
	if !st.Enforced || len(argv) == 0 {
		return argv
	}
	writable := writableDirs(workspace, extraWritable)
	switch st.Kind {
	case KindBwrap:
		return wrapBwrap(writable, argv)
	case KindSandboxExec:
		return wrapSandboxExec(writable, argv)
	}
	return argv
}

// writableDirs lists the absolute, cleaned writable paths: the workspace,
// the temp dirs, and the extra ones. Symlinks are resolved when possible
// (macOS's /tmp is /private/tmp, and profiles match real paths).
func writableDirs(workspace string, extra []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	add(workspace)
	add(os.TempDir())
	add("/tmp")
	for _, p := range extra {
		add(p)
	}
	return out
}
