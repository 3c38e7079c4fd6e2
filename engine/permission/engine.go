package permission

import (
	"sort"
	"sync"
	"time"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/sandbox"
	"github.com/zqagent/sidecar/tools"
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
	mode     Mode                 // guarded by mu
	policy   ShellPolicy          // guarded by mu
	allowed  []string             // guarded by mu; the entries as given
	tools    map[string]time.Time // guarded by mu; session tool grants (always_tool) and when given
	commands map[string]time.Time // guarded by mu; session command grants by executable (always_command) and when given
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
		tools:    map[string]time.Time{},
		commands: map[string]time.Time{},
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

// AllowToolForSession remembers an always_tool grant, given now.
func (e *Engine) AllowToolForSession(name string) {
	e.RestoreGrant(SessionGrant{Kind: GrantTool, Name: name, GrantedAt: time.Now()})
}

// AllowCommandForSession remembers an always_command grant for an
// executable, given now. It covers simple commands only, and never the
// executables that are never auto-allowed (see CommandExecutable).
func (e *Engine) AllowCommandForSession(exe string) {
	e.RestoreGrant(SessionGrant{Kind: GrantCommand, Name: exe, GrantedAt: time.Now()})
}

// GrantKind is what a session grant allows.
type GrantKind string

// Session grant kinds.
const (
	GrantTool    GrantKind = "tool"    // always_tool: every call of the tool
	GrantCommand GrantKind = "command" // always_command: simple commands of the executable
)

// SessionGrant is one always_tool or always_command grant of the session.
type SessionGrant struct {
	Kind      GrantKind `json:"kind"`
	Name      string    `json:"name"` // the tool, or the executable
	GrantedAt time.Time `json:"grantedAt"`
}

// RestoreGrant adds a grant (a saved one, with its time). A grant already
// held keeps its first time; an empty name or unknown kind is ignored, and
// so is a tool grant of a form that grants nothing any more
// (tools.StaleToolGrant: the generic mcp_call_tool, an MCP tool by its
// registered name), so it is not listed and the next save drops it.
func (e *Engine) RestoreGrant(g SessionGrant) {
	if g.Name == "" || g.Kind == GrantTool && tools.StaleToolGrant(g.Name) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.grantsLocked(g.Kind)
	if m == nil {
		return
	}
	if _, ok := m[g.Name]; !ok {
		m[g.Name] = g.GrantedAt
	}
}

// RevokeGrant removes a grant; it reports whether the grant was held. The
// next call it covered asks again.
func (e *Engine) RevokeGrant(kind GrantKind, name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.grantsLocked(kind)
	if _, ok := m[name]; !ok {
		return false
	}
	delete(m, name)
	return true
}

// SessionGrants returns the session's tool and command grants, tools
// first, each sorted by name.
func (e *Engine) SessionGrants() []SessionGrant {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := []SessionGrant{}
	for _, k := range []GrantKind{GrantTool, GrantCommand} {
		m := e.grantsLocked(k)
		for _, name := range sortedKeys(m) {
			out = append(out, SessionGrant{Kind: k, Name: name, GrantedAt: m[name]})
		}
	}
	return out
}

func (e *Engine) grantsLocked(k GrantKind) map[string]time.Time {
	switch k {
	case GrantTool:
		return e.tools
	case GrantCommand:
		return e.commands
	}
	return nil
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

func sortedKeys[V any](m map[string]V) []string {
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
