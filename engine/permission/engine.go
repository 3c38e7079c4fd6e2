package permission

import (
	"sort"
	"sync"

	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/confine"
	"github.com/zqagent/sidecar/tools/sandbox"
)

// Decision is the result of Evaluate.
type Decision struct {
	Allowed   bool
	Reason    string // for the user and the approval card
	NeedsUser bool   // true: ask the approver
}

// Options configure an Engine.
type Options struct {
	Workspace       *confine.Workspace // the boundary for path arguments; nil refuses every path
	Mode            Mode               // "" is interactive
	AllowedCommands []string           // command prefixes auto-allowed (seed §8.5)
	ShellPolicy     ShellPolicy        // "" is approve
	Sandbox         sandbox.Status     // the resolved OS sandbox (sandbox.Resolve)
	// Box, when set, is the session's sandbox and wins over Sandbox: its
	// status is read at every decision, so runtime changes apply at once.
	Box *sandbox.Box
}

// Engine decides tool calls for one session.
type Engine struct {
	ws  *confine.Workspace
	sb  sandbox.Status
	box *sandbox.Box // nil: sb is fixed

	mu       sync.RWMutex
	mode     Mode            // guarded by mu
	policy   ShellPolicy     // guarded by mu
	allowed  []string        // guarded by mu; the entries as given
	tools    map[string]bool // guarded by mu; session tool grants (always_tool)
	commands map[string]bool // guarded by mu; session command grants by executable (always_command)
}

// New returns an Engine.
func New(opts Options) *Engine {
	mode := opts.Mode
	if mode == "" {
		mode = ModeInteractive
	}
	policy := opts.ShellPolicy
	if policy == "" {
		policy = PolicyApprove
	}
	return &Engine{
		ws:       opts.Workspace,
		sb:       opts.Sandbox,
		box:      opts.Box,
		mode:     mode,
		policy:   policy,
		allowed:  cleanEntries(opts.AllowedCommands),
		tools:    map[string]bool{},
		commands: map[string]bool{},
	}
}

func cleanEntries(in []string) []string {
	out := make([]string, 0, len(in))
	for _, e := range in {
		if len(parseAllowEntry(e)) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// Mode returns the current mode.
func (e *Engine) Mode() Mode {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.mode
}

// SetMode changes the mode; it applies to the next Evaluate.
func (e *Engine) SetMode(m Mode) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mode = m
}

// ShellPolicy returns the current shell policy.
func (e *Engine) ShellPolicy() ShellPolicy {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.policy
}

// SetShellPolicy changes the shell policy.
func (e *Engine) SetShellPolicy(p ShellPolicy) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.policy = p
}

// SetAllowedCommands replaces the command allowlist.
func (e *Engine) SetAllowedCommands(cmds []string) {
	c := cleanEntries(cmds)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.allowed = c
}

// AllowedCommands returns the command allowlist.
func (e *Engine) AllowedCommands() []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return append([]string(nil), e.allowed...)
}

// AllowToolForSession remembers an always_tool grant.
func (e *Engine) AllowToolForSession(name string) {
	if name == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tools[name] = true
}

// AllowCommandForSession remembers an always_command grant for an
// executable. It covers simple commands only, and never the executables
// that are never auto-allowed (see CommandExecutable).
func (e *Engine) AllowCommandForSession(exe string) {
	if exe == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.commands[exe] = true
}

// SessionTools returns the tools granted for the session, sorted (for
// SavedState.allowTools).
func (e *Engine) SessionTools() []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return sortedKeys(e.tools)
}

// SessionCommands returns the executables granted for the session, sorted
// (for SavedState.allowCommands).
func (e *Engine) SessionCommands() []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return sortedKeys(e.commands)
}

// Sandbox returns the OS sandbox status as it is now.
func (e *Engine) Sandbox() sandbox.Status {
	if e.box != nil {
		return e.box.Status()
	}
	return e.sb
}

// SandboxBox returns the session's sandbox, nil when the engine was given a
// fixed status.
func (e *Engine) SandboxBox() *sandbox.Box { return e.box }

// Workspace returns the workspace boundary.
func (e *Engine) Workspace() *confine.Workspace { return e.ws }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sideEffect reports whether a class has side effects; an unknown class is
// treated as having them.
func sideEffect(c tools.Class) bool {
	return c != tools.ClassRead && c != tools.ClassInteractive
}
