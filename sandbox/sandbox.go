// Package sandbox owns the OS-level sandbox that shell commands can run in
// (seed §8.4): bubblewrap on Linux (the whole system read-only, the workspace
// and temp dirs writable, a new pid namespace, the child dying with the
// sidecar), sandbox-exec on macOS (file writes limited to the workspace and
// temp dirs), none elsewhere. On both, the project's .git and .agent stay
// read-only (a command must not plant what the sidecar later runs outside
// the sandbox: a git config, an MCP server), the user's credential stores
// (~/.ssh, ~/.aws, ...) and the paths the host hides (its data dir) cannot
// be read, and the network is off unless the session allows it.
//
// Resolve detects what works here; Wrap turns a command's argv into the
// sandboxed argv; a Box holds one session's settings, which may change at
// runtime, and refuses to run a command when the sandbox is required but
// cannot be had.
//
// Concurrency: all functions and Box methods are safe for concurrent use.
// The availability probe runs once per process and is cached.
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
	// Network lets sandboxed commands use the network; off by default.
	Network bool
	// Hidden are paths the sandboxed command cannot read (an empty
	// directory or file in their place), on top of CredentialPaths: the
	// sidecar's data directory, for one.
	Hidden []string
}

// Status is what Resolve found: the sandbox as it really is.
type Status struct {
	Mode     Mode   `json:"mode"`
	Kind     string `json:"backend"`  // "bwrap" | "sandbox-exec" | "none"
	Enforced bool   `json:"enforced"` // commands really run confined
	// Network is whether commands can reach the network: true when the
	// session allows it, and whenever no sandbox is enforced.
	Network bool   `json:"network"`
	Reason  string `json:"reason,omitempty"`
}

// ProtectedNames are the entries of the workspace root that stay read-only
// inside the sandbox: what the sidecar itself reads and runs from (git's
// config and hooks, the project's MCP servers and agent files).
var ProtectedNames = []string{".git", ".agent"}

// credentialNames are the files and directories under the home directory
// that hold credentials: a sandboxed command runs without approval, so it
// must not be able to read (and, with the network allowed, send) them.
var credentialNames = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json",
	".netrc", ".git-credentials", ".config/gh", ".password-store", ".local/share/keyrings",
	"Library/Keychains",
}

// CredentialPaths lists the user's credential stores that exist here,
// resolved; Wrap hides them.
func CredentialPaths() []string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return nil
	}
	out := make([]string, 0, len(credentialNames))
	for _, n := range credentialNames {
		out = append(out, filepath.Join(home, filepath.FromSlash(n)))
	}
	return out
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
		return Status{Mode: ModeOff, Kind: KindNone, Network: true, Reason: "sandbox disabled by configuration"}, nil
	case ModeAuto, ModeRequired:
	default:
		return Status{}, fmt.Errorf("%w: %q", ErrUnknownMode, mode)
	}
	st := detect()
	st.Mode = mode
	st.Network = !st.Enforced || cfg.Network
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
	net := "network off"
	if st.Network {
		net = "network allowed"
	}
	switch st.Kind {
	case KindBwrap:
		return "bubblewrap: system read-only, writes limited to the workspace and temp dirs, .git and .agent read-only, credentials hidden, " + net
	case KindSandboxExec:
		return "sandbox-exec: writes limited to the workspace and temp dirs, .git and .agent read-only, credentials hidden, " + net
	}
	return st.Kind
}

// Wrap returns argv run inside the sandbox, or argv unchanged when the
// sandbox is not enforced. workspace and extraWritable stay writable, as do
// the temp dirs; the workspace's ProtectedNames stay read-only; the
// CredentialPaths are hidden; the network is cut unless st.Network.
func Wrap(st Status, workspace string, extraWritable []string, argv []string) []string {
	return wrap(st, workspace, extraWritable, nil, argv)
}

func wrap(st Status, workspace string, extraWritable, hidden []string, argv []string) []string {
	if !st.Enforced || len(argv) == 0 {
		return argv
	}
	writable := writableDirs(workspace, extraWritable)
	protected := protectedPaths(writable[0])
	h := hiddenPaths(writable[0], append(CredentialPaths(), hidden...))
	switch st.Kind {
	case KindBwrap:
		return wrapBwrap(writable, protected, h, st.Network, argv)
	case KindSandboxExec:
		return wrapSandboxExec(writable, protected, h, st.Network, argv)
	}
	return argv
}

// hidden is a path to hide and whether it is a directory.
type hidden struct {
	path string
	dir  bool
}

// hiddenPaths keeps the paths that exist (resolved), skipping any that
// holds the workspace or lies inside it: hiding those would hide the work.
func hiddenPaths(workspace string, paths []string) []hidden {
	var out []hidden
	seen := map[string]bool{}
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil || seen[real] || within(real, workspace) || within(workspace, real) {
			continue
		}
		seen[real] = true
		out = append(out, hidden{path: real, dir: fi.IsDir()})
	}
	return out
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// protectedPaths lists the ProtectedNames under the (resolved) workspace.
func protectedPaths(workspace string) []string {
	out := make([]string, len(ProtectedNames))
	for i, n := range ProtectedNames {
		out[i] = filepath.Join(workspace, n)
	}
	return out
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
