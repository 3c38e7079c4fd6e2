package vcs

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Mode is how a workspace's changes are tracked.
type Mode string

// Modes of seed §17.1.
const (
	// ModeOff tracks nothing (the default).
	ModeOff Mode = "off"
	// ModeAuto is native when the workspace is inside a git work tree, else
	// shadow.
	ModeAuto Mode = "auto"
	// ModeNative uses the workspace's own repository with a private index
	// and refs.
	ModeNative Mode = "native"
	// ModeShadow uses a separate repository at <workspace>/.agent/vcs.
	ModeShadow Mode = "shadow"
)

// ParseMode returns the Mode named s ("" is off).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return ModeOff, nil
	case ModeOff, ModeAuto, ModeNative, ModeShadow:
		return m, nil
	default:
		return ModeOff, fmt.Errorf("%w: %q (want off, auto, native or shadow)", ErrInvalidMode, s)
	}
}

// String returns the mode's name.
func (m Mode) String() string {
	if m == "" {
		return string(ModeOff)
	}
	return string(m)
}

// Config selects the tracking mode.
type Config struct {
	// Mode is off, auto, native or shadow; "" is off.
	Mode Mode `json:"mode"`
	// Git is the git binary; "" looks "git" up in PATH.
	Git string `json:"git,omitempty"`
}

// ShadowDir is the shadow repository's directory, relative to the workspace.
const ShadowDir = ".agent/vcs"

// Plan is a resolved Config: the mode in effect and where its repository is.
type Plan struct {
	// Requested is the configured mode.
	Requested Mode `json:"requested"`
	// Mode is the mode in effect: off, native or shadow, never auto.
	Mode Mode `json:"mode"`
	// Workspace is the workspace's absolute path, symlinks resolved.
	Workspace string `json:"workspace"`
	// GitDir is the repository (native: the workspace's, shadow:
	// <workspace>/.agent/vcs); empty when off.
	GitDir string `json:"gitDir,omitempty"`
	// Git is the git binary; empty when off.
	Git string `json:"git,omitempty"`
	// Status says in words why this mode is in effect.
	Status string `json:"status"`
}

// Enabled reports whether the plan tracks anything.
func (p Plan) Enabled() bool { return p.Mode == ModeNative || p.Mode == ModeShadow }

// privateDir holds the session index files and the exclude file.
func (p Plan) privateDir() string { return filepath.Join(p.GitDir, "zqagent") }

// IndexPath is the private index file of a session (the seed's
// sessionIndexPath); empty when off.
func (p Plan) IndexPath(sessionID string) string {
	if !p.Enabled() {
		return ""
	}
	return filepath.Join(p.privateDir(), "index-"+refComponent(sessionID))
}

// ResolvePlan decides how workspace is tracked under cfg. It never fails:
// when the requested mode cannot work (no git binary, native outside a git
// work tree, an invalid mode, a missing workspace) the plan is off and Status
// says why. It runs git to find the repository but writes nothing.
func ResolvePlan(ctx context.Context, workspace string, cfg Config) Plan {
	p := Plan{Requested: cfg.Mode, Mode: ModeOff}
	if p.Requested == "" {
		p.Requested = ModeOff
	}
	off := func(format string, a ...any) Plan {
		p.Mode, p.GitDir, p.Git = ModeOff, "", ""
		p.Status = fmt.Sprintf(format, a...)
		return p
	}
	mode, err := ParseMode(string(cfg.Mode))
	if err != nil {
		return off("off: %v", err)
	}
	if mode == ModeOff {
		return off("off: change tracking is not enabled")
	}
	ws, err := filepath.Abs(workspace)
	if err == nil {
		ws, err = filepath.EvalSymlinks(ws)
	}
	if err != nil {
		return off("off: workspace: %v", err)
	}
	p.Workspace = ws
	bin := cfg.Git
	if bin == "" {
		bin = "git"
	}
	bin, err = exec.LookPath(bin)
	if err != nil {
		return off("off: %s mode needs git, and no git binary was found (%v)", mode, err)
	}
	p.Git = bin
	if mode == ModeAuto || mode == ModeNative {
		gitDir, rerr := findRepo(ctx, bin, ws)
		switch {
		case rerr == nil:
			p.Mode, p.GitDir = ModeNative, gitDir
			p.Status = fmt.Sprintf("native: snapshots go to %s under refs/agent/ with a private index", gitDir)
			return p
		case mode == ModeNative:
			return off("off: native mode needs a git work tree at %s (%v)", ws, rerr)
		}
		p.Mode, p.GitDir = ModeShadow, filepath.Join(ws, filepath.FromSlash(ShadowDir))
		p.Status = fmt.Sprintf("shadow: snapshots go to the shadow repository %s (no native repository: %v)", p.GitDir, rerr)
		return p
	}
	p.Mode, p.GitDir = ModeShadow, filepath.Join(ws, filepath.FromSlash(ShadowDir))
	p.Status = fmt.Sprintf("shadow: snapshots go to the shadow repository %s", p.GitDir)
	return p
}

// findRepo returns the absolute git directory of the work tree that holds
// ws, or an error when ws is not inside a work tree.
func findRepo(ctx context.Context, bin, ws string) (string, error) {
	g := &runner{bin: bin, dir: ws}
	out, err := g.output(ctx, nil, "rev-parse", "--is-inside-work-tree", "--absolute-git-dir")
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != "true" {
		return "", fmt.Errorf("%s is not inside a git work tree", ws)
	}
	return filepath.Clean(strings.TrimSpace(lines[1])), nil
}
