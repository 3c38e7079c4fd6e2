// Package tools owns the tool contract: Spec, Metadata, the Handler signature,
// the Registry the engine reads its tool list from, and the context marker of
// a call the user approved (WithUserApproved). The builtin tools live
// in sub-packages (tools/fs, tools/shell, tools/search, ...), each with a
// Register function, a .go file per tool and an embedded .md description;
// a tool's parameters schema is reflected from the args struct its handler
// decodes into (ParamsOf), pinned by testdata/params. The interactive
// tools' requests and the Interactor the engine implements are this
// package's too (interact.go), so the engine imports no tool package.
//
// Arguments: the engine decodes a call's arguments once, strictly, with
// NormalizeArgs (duplicate, case-variant and unknown keys and wrong types
// refused); the permission decision, the events and the handler all use that
// one value, and Call.Args is its canonical encoding.
//
// Dispatchers: a tool whose Spec.Dispatch is set (the lazy MCP mode's
// mcp_call_tool) runs another tool its arguments name; TargetOf resolves a
// call to that tool, and the engine decides, cards, grants and runs it as
// that tool (Target). Permission decisions and always_tool grants are keyed
// by Spec.GrantName.
//
// Availability: a tool is offered to the model only while it is enabled (not
// Disabled, and its Available func, if any, reports true); the engine refuses
// a call to a tool that is not offered, by name, without running it.
//
// Concurrency: a Registry is safe for concurrent use. Schemas() is read fresh
// on every model call, so tools registered, removed, enabled or disabled while
// a session runs show up (or vanish) on the next call without rebuilding the
// engine.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/zqagent/sidecar/llm"
)

// Risk is the seed's riskLevel: how much harm a call can do.
type Risk string

// Risk levels.
const (
	RiskLow    Risk = "low"
	RiskMedium Risk = "medium"
	RiskHigh   Risk = "high"
)

// Class is the seed's RiskClass: what kind of side effect a tool has. The
// permission engine decides by class: ClassRead is always allowed, the rest go
// through modes, allowlists and the approver.
type Class string

// Risk classes (seed §7.1's table).
const (
	ClassRead        Class = "read"        // read_file, grep, git_status, explore, todo_write
	ClassWrite       Class = "write"       // write_file, replace_in_file, apply_patch
	ClassExec        Class = "exec"        // run_shell, shell_task_kill
	ClassNetwork     Class = "network"     // web_fetch, web_search, media (URLs), MCP
	ClassInteractive Class = "interactive" // ask_user, propose_plan, request_directory
)

// Metadata is what the permission engine and the UI know about a tool.
type Metadata struct {
	Category         string   `json:"category"`
	RiskLevel        Risk     `json:"riskLevel"`
	Class            Class    `json:"riskClass"`
	Capabilities     []string `json:"capabilities"`
	RequiresApproval bool     `json:"requiresApproval"`
	// PathArgs names the arguments that hold file paths the tool writes (or
	// reads, for ClassRead tools); the permission engine checks them against
	// the workspace boundary.
	PathArgs []string `json:"pathArgs,omitempty"`
}

// Interactive reports whether the tool talks to the user; such tools run one
// at a time, in order.
func (m Metadata) Interactive() bool { return m.Class == ClassInteractive }

// Parallel reports whether calls of this tool may run concurrently with other
// parallel-safe calls of the same model response: low-risk tools that need
// no approval and do not talk to the user.
func (m Metadata) Parallel() bool {
	return m.RiskLevel == RiskLow && !m.RequiresApproval && !m.Interactive()
}

// Call is one invocation of a tool.
type Call struct {
	ID   string          // the model's tool call id (the events' reqId)
	Name string          // the registered name
	Args json.RawMessage // the model's arguments, a JSON object
}

// Handler runs a tool. ctx is cancelled when the turn is interrupted. The
// result is sent to the model: a string as is, anything else as JSON. A
// returned error becomes {error, error_type} for the model; the turn goes on.
type Handler func(ctx context.Context, call Call) (any, error)

// Spec is a registered tool.
type Spec struct {
	Name    string
	Schema  llm.ToolSchema
	Meta    Metadata
	Source  string // "internal", "mcp:<server>", or the host's name
	Handler Handler
	// Disabled tools stay registered but are hidden from the model, and a
	// call to one is refused.
	Disabled bool
	// Available, when set, is asked on every model request whether the tool
	// can be used now (web_search without a search backend cannot); false
	// hides and refuses it like Disabled. It must be fast and must not call
	// back into the registry.
	Available func() bool
	// Grant is the key of the tool's permission decisions and always_tool
	// grants; "" is Name (see GrantName). MCP tools use MCPGrant.
	Grant string
	// Dispatch, when set, makes the tool a dispatcher (mcp_call_tool): a
	// call of it runs another tool its arguments name. See Target.
	Dispatch func(args Args) (Target, error)
	// Preview, when set, renders what a call with args would change as a
	// unified diff, changing nothing: the approval card shows it
	// (permission_required.diff). It reads only what the handler may (the
	// workspace and granted directories) and bounds what it reads; an
	// error means the card has no diff (the call fails the same way if it
	// runs). The file tools set it.
	Preview func(ctx context.Context, args Args) (string, error)
}

// Enabled reports whether the tool is offered to the model and may run.
func (s Spec) Enabled() bool {
	return !s.Disabled && (s.Available == nil || s.Available())
}

// Result is a handler result that also attaches media to the conversation
// (the media tool). Output goes to the model as the tool message; Attachments
// ride along on a following user message for multimodal models.
type Result struct {
	Output      any
	Attachments []llm.Attachment
}

// FileProducer is a handler result that names the files its call wrote or
// created, in the workspace-relative form the model used (apply_patch and
// apply_unified_diff, whose paths live inside the patch text). The engine
// adds them to turn_end's produced_files; for write tools whose result does
// not implement it, the engine uses their path arguments instead.
type FileProducer interface {
	ProducedFiles() []string
}

// Registry holds the tools of one engine (or one project's MCP manager).
type Registry struct {
	mu    sync.RWMutex
	specs map[string]*Spec // guarded by mu
	order []string         // guarded by mu; registration order, for stable schemas
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{specs: map[string]*Spec{}}
}

// Register adds a tool or replaces the one of the same name. The name comes
// from spec.Name, or from spec.Schema.Function.Name when Name is empty.
func (r *Registry) Register(spec Spec) error {
	if spec.Name == "" {
		spec.Name = spec.Schema.Function.Name
	}
	if spec.Name == "" {
		return fmt.Errorf("register tool: %w", ErrNoName)
	}
	if spec.Handler == nil {
		return fmt.Errorf("register tool %q: %w", spec.Name, ErrNoHandler)
	}
	if spec.Schema.Type == "" {
		spec.Schema.Type = "function"
	}
	spec.Schema.Function.Name = spec.Name
	if len(spec.Schema.Function.Parameters) == 0 {
		spec.Schema.Function.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if spec.Source == "" {
		spec.Source = "internal"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.specs[spec.Name]; !ok {
		r.order = append(r.order, spec.Name)
	}
	s := spec
	r.specs[spec.Name] = &s
	return nil
}

// MustRegister is Register for builtin tools whose specs are static.
func (r *Registry) MustRegister(spec Spec) {
	if err := r.Register(spec); err != nil {
		panic(err)
	}
}

// Remove deletes a tool; it reports whether it existed.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.specs[name]; !ok {
		return false
	}
	delete(r.specs, name)
	for i, n := range r.order {
		if n == name {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
	return true
}

// Enable shows a tool to the model again; it reports whether it exists.
func (r *Registry) Enable(name string) bool { return r.setDisabled(name, false) }

// Disable hides a tool from the model; it reports whether it exists.
func (r *Registry) Disable(name string) bool { return r.setDisabled(name, true) }

func (r *Registry) setDisabled(name string, v bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.specs[name]
	if ok {
		s.Disabled = v
	}
	return ok
}

// Lookup returns a copy of the named tool's spec.
func (r *Registry) Lookup(name string) (Spec, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.specs[name]
	if !ok {
		return Spec{}, false
	}
	return *s, true
}

// Schemas returns the schemas of the enabled tools (Spec.Enabled), in
// registration order.
func (r *Registry) Schemas() []llm.ToolSchema {
	out := []llm.ToolSchema{}
	for _, s := range r.Specs() { // Available runs outside the lock
		if s.Enabled() {
			out = append(out, s.Schema)
		}
	}
	return out
}

// Specs returns copies of every registered tool, enabled or not, in
// registration order.
func (r *Registry) Specs() []Spec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Spec, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, *r.specs[n])
	}
	return out
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.specs))
	for n := range r.specs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Len is the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.specs)
}
