package vcs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/zqagent/sidecar/gitenv"
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
	// ModeShadow uses a separate repository of the sidecar's, under
	// Config.ShadowRoot, whose work tree is the workspace.
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
	// ShadowRoot is the folder of the shadow repositories, one per
	// workspace (ShadowGitDir), in the sidecar's data dir and never inside
	// a workspace. Without it shadow mode is off.
	ShadowRoot string `json:"shadowRoot,omitempty"`
	// Confirmed is the worktree's or enclosing repository the user
	// confirmed for the workspace (gitenv.Discover); native mode then uses
	// it (gitenv.OpenConfirmed), limited to the workspace folder. nil: the
	// workspace's own .git only.
	Confirmed *gitenv.Candidate `json:"confirmed,omitempty"`
	// Limits bound the project's snapshot storage; zero members take the
	// defaults.
	Limits Limits `json:"limits,omitzero"`
}

// ShadowGitDir is the shadow repository of workspace (an absolute path with
// symlinks resolved) under root: root/<first 32 hex digits of the
// SHA-256 of the path>.
func ShadowGitDir(root, workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(root, hex.EncodeToString(sum[:16]))
}

// Plan is a resolved Config: the mode in effect and where its repository is.
type Plan struct {
	// Requested is the configured mode.
	Requested Mode `json:"requested"`
	// Mode is the mode in effect: off, native or shadow, never auto.
	Mode Mode `json:"mode"`
	// Workspace is the workspace's absolute path, symlinks resolved.
	Workspace string `json:"workspace"`
	// GitDir is the repository (native: the workspace's own .git, shadow:
	// ShadowGitDir under Config.ShadowRoot); empty when off.
	GitDir string `json:"gitDir,omitempty"`
	// Git is the git binary; empty when off.
	Git string `json:"git,omitempty"`
	// Status says in words why this mode is in effect.
	Status string `json:"status"`
	// Confirmed is the confirmed repository native mode uses
	// (Config.Confirmed); nil for the workspace's own .git and shadow.
	Confirmed *gitenv.Candidate `json:"confirmed,omitempty"`
	// Limits are Config.Limits.
	Limits Limits `json:"limits,omitzero"`
}

// workTree is the work tree git runs with: the workspace, or a confirmed
// enclosing repository's top level.
func (p Plan) workTree() string {
	if p.Confirmed != nil {
		return p.Confirmed.WorkTree
	}
	return p.Workspace
}

// prefix is the workspace's folder in the work tree ("" when they are
// the same), with a trailing slash: snapshots hold that folder's tree.
func (p Plan) prefix() string {
	if p.Confirmed != nil {
		return p.Confirmed.Prefix()
	}
	return ""
}

// refPrefix is where the plan's sessions keep their refs: refs/agent/, or
// refs/worktree/agent/ in a confirmed repository's linked worktree.
func (p Plan) refPrefix() string {
	if c := p.Confirmed; c != nil && c.GitDir != c.CommonDir {
		return worktreeRefPrefix
	}
	return refPrefix
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
// says why. Native mode uses the workspace's own .git only (never a parent
// directory's repository) and refuses one that points outside the
// workspace (gitenv.Open); auto mode then falls back to shadow. It runs git
// to read the repository's config but writes nothing.
func ResolvePlan(ctx context.Context, workspace string, cfg Config) Plan {
	p := Plan{Requested: cfg.Mode, Mode: ModeOff, Limits: cfg.Limits}
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
	shadow := func(why string) Plan {
		if cfg.ShadowRoot == "" {
			return off("off: shadow mode needs the sidecar's data directory, and none is configured%s", why)
		}
		p.Mode, p.GitDir = ModeShadow, ShadowGitDir(cfg.ShadowRoot, ws)
		p.Status = fmt.Sprintf("shadow: snapshots go to the shadow repository %s%s", p.GitDir, why)
		return p
	}
	if mode == ModeAuto || mode == ModeNative {
		var (
			repo gitenv.Repo
			rerr error
		)
		if c := cfg.Confirmed; c != nil && c.Project == ws {
			repo, rerr = gitenv.OpenConfirmed(ctx, bin, *c)
		} else {
			repo, rerr = gitenv.Open(ctx, bin, ws)
		}
		switch {
		case rerr == nil:
			p.Mode, p.GitDir = ModeNative, repo.GitDir
			if c := cfg.Confirmed; c != nil && c.Project == ws {
				p.Confirmed = c
			}
			p.Status = fmt.Sprintf("native: snapshots go to %s under %s with a private index", repo.GitDir, p.refPrefix())
			if pre := p.prefix(); pre != "" {
				p.Status += fmt.Sprintf(", limited to the folder %s of the repository %s", pre, p.Confirmed.Repository)
			}
			return p
		case mode == ModeNative:
			return off("off: native mode needs the workspace's own git repository at %s (%v)", ws, rerr)
		}
		return shadow(fmt.Sprintf(" (no native repository: %v)", rerr))
	}
	return shadow("")
}
