package engine

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/zqagent/sidecar/engine/compaction"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// DefaultMaxIterations is the seed's DEFAULT_MAX_ITERATIONS.
const DefaultMaxIterations = 800

// Options are the seed's TurnEngineOpts.
type Options struct {
	Provider    llm.Provider       // required
	Registry    *tools.Registry    // required
	Permissions *permission.Engine // required
	// Model is required at Run time; an empty model is an error event, never
	// a guess.
	Model        string
	Instructions string // the system prompt (first system message)
	// GenSessionNamePrompt overrides the session-naming prompt.
	GenSessionNamePrompt string
	Lang                 string // zh (default), en, zh-TW, ja, ko, es
	MaxIterations        int    // default 800
	// FinalizeOnMaxIterations runs one tool-less turn after the limit so the
	// model can report (subagents use it).
	FinalizeOnMaxIterations bool
	ReasoningEffort         string
	Messages                []llm.Message // initial history (restored sessions)
	Hook                    Hook
	ContextWindow           int     // tokens; 0 = from the model table
	ThresholdPct            float64 // hard compaction threshold, default 0.8
	SoftThresholdPct        float64 // default 75% of the hard threshold
	CapTokens               int     // absolute cap on the hard threshold; 0 = none
	ToolResultDir           string  // where over-budget results are spilled
	// ResultMaxChars and ResultSaveThreshold bound what a tool result sends
	// to the model (TOOL_RESULT_MAX_CHARS, TOOL_RESULT_SAVE_THRESHOLD).
	ResultMaxChars      int
	ResultSaveThreshold int
	// DefaultApproval is what happens when an approval is needed and no
	// approver is set: "error" (default), "deny" or "allow".
	DefaultApproval permission.DefaultApproval
	// Compactor manages the context window; nil = the default compactor
	// (NewCompactor) built from ContextWindow, ThresholdPct,
	// SoftThresholdPct and CapTokens, unless NoCompaction.
	Compactor    Compactor
	NoCompaction bool
	// OnClose runs when the engine is closed (kills shell tasks, closes
	// watchers of the default wiring).
	OnClose []func() error
	// Ledger records which tool calls began to run (see Ledger); nil keeps
	// the record in memory for the process's life.
	Ledger Ledger
	// Prices prices the usage events' costs, looked up at each response
	// (a host may change a provider's prices meanwhile); nil =
	// prices.Default().
	Prices PriceLookup
	// Usage is the session's usage so far (a restored session's last usage
	// event's totals); nil = a new session's (nothing, costing 0).
	Usage *protocol.SessionUsage
}

// Input is what the user gives a turn.
type Input struct {
	Text        string
	Attachments []llm.Attachment
	Refs        []llm.StoredAttachment
}

// Engine is one session's runtime (the seed's TurnEngine). Its methods are
// safe for concurrent use; only one turn runs at a time.
type Engine struct {
	provider    llm.Provider
	registry    *tools.Registry
	permissions *permission.Engine
	hook        Hook
	compactor   Compactor
	opts        Options // immutable after New
	conv        string  // names this history to the provider (llm.Request.Conversation)

	ledger Ledger
	meter  *meter // the session's and the running turn's usage totals

	mu           sync.Mutex
	cur          *turn                    // guarded by mu; the running turn (nil: idle), set by begin and end only
	turns        int                      // guarded by mu; turns this engine began
	model        string                   // guarded by mu
	instructions string                   // guarded by mu
	messages     []llm.Message            // guarded by mu
	steering     []steer                  // guarded by mu
	approver     permission.Approver      // guarded by mu
	interactor   tools.Interactor         // guarded by mu
	lastErr      *protocol.EventErrorData // guarded by mu; set when the last turn ended in error
	closed       bool                     // guarded by mu
	onClose      []func() error           // guarded by mu
	onTurnStart  []func()                 // guarded by mu
}

type steer struct {
	text string
	atts []llm.Attachment
	refs []llm.StoredAttachment
}

// New assembles an engine from its parts.
func New(opts Options) (*Engine, error) {
	if opts.Provider == nil {
		return nil, fmt.Errorf("new engine: %w: provider", ErrMissingOption)
	}
	if opts.Registry == nil {
		return nil, fmt.Errorf("new engine: %w: registry", ErrMissingOption)
	}
	if opts.Permissions == nil {
		return nil, fmt.Errorf("new engine: %w: permissions", ErrMissingOption)
	}
	if opts.MaxIterations <= 0 {
		opts.MaxIterations = envInt("MAX_ITERATIONS", DefaultMaxIterations)
	}
	if opts.Lang == "" {
		opts.Lang = "zh"
	}
	if opts.DefaultApproval == "" {
		opts.DefaultApproval = permission.DefaultApproval("error")
	}
	if opts.ResultMaxChars <= 0 {
		opts.ResultMaxChars = envInt("TOOL_RESULT_MAX_CHARS", 50_000)
	}
	if opts.ResultSaveThreshold <= 0 {
		opts.ResultSaveThreshold = envInt("TOOL_RESULT_SAVE_THRESHOLD", opts.ResultMaxChars)
	}
	if opts.ToolResultDir == "" {
		opts.ToolResultDir = os.Getenv("TOOL_RESULT_DIR")
	}
	if opts.Compactor == nil && !opts.NoCompaction {
		opts.Compactor = NewCompactor(compaction.Config{Provider: opts.Provider, ContextWindow: opts.ContextWindow, ThresholdPct: opts.ThresholdPct, SoftThresholdPct: opts.SoftThresholdPct, CapTokens: opts.CapTokens}, opts.Lang)
	}
	e := &Engine{
		conv:         newID("conv_"),
		provider:     opts.Provider,
		registry:     opts.Registry,
		permissions:  opts.Permissions,
		hook:         opts.Hook,
		compactor:    opts.Compactor,
		model:        opts.Model,
		instructions: opts.Instructions,
		onClose:      opts.OnClose,
	}
	e.messages = withSystem(opts.Messages, opts.Instructions)
	e.opts = opts
	e.ledger = opts.Ledger
	e.meter = newMeter(opts.Prices, opts.Usage)
	if e.ledger == nil {
		e.ledger = &memLedger{}
	}
	return e, nil
}

// withSystem returns msgs with the system prompt first: an existing first
// system message is kept; otherwise instructions are inserted.
func withSystem(msgs []llm.Message, instructions string) []llm.Message {
	out := make([]llm.Message, 0, len(msgs)+1)
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		return append(out, msgs...)
	}
	if instructions != "" {
		out = append(out, llm.Message{Role: llm.RoleSystem, Content: instructions})
	}
	return append(out, msgs...)
}

// Registry is the engine's tool registry.
func (e *Engine) Registry() *tools.Registry { return e.registry }

// Permissions is the engine's permission engine.
func (e *Engine) Permissions() *permission.Engine { return e.permissions }

// Provider is the engine's model provider.
func (e *Engine) Provider() llm.Provider { return e.provider }

// Model returns the model of the next request.
func (e *Engine) Model() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.model
}

// SetModel changes the model; it applies to the next model request.
func (e *Engine) SetModel(m string) {
	e.mu.Lock()
	e.model = m
	e.mu.Unlock()
}

// Mode is the permission mode.
func (e *Engine) Mode() permission.Mode { return e.permissions.Mode() }

// SetMode changes the permission mode; it applies to the next tool call.
func (e *Engine) SetMode(m permission.Mode) { e.permissions.SetMode(m) }

// Approver returns the per-engine approval callback (nil when none is set:
// Options.DefaultApproval then decides).
func (e *Engine) Approver() permission.Approver {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.approver
}

// SetApprover sets the per-engine approval callback.
func (e *Engine) SetApprover(a permission.Approver) {
	e.mu.Lock()
	e.approver = a
	e.mu.Unlock()
}

// SetInteractor sets the per-engine handlers of ask_user, propose_plan and
// request_directory.
func (e *Engine) SetInteractor(h tools.Interactor) {
	e.mu.Lock()
	e.interactor = h
	e.mu.Unlock()
}

// SetSystemPrompt replaces the system prompt (switching agents).
func (e *Engine) SetSystemPrompt(text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.instructions = text
	if len(e.messages) > 0 && e.messages[0].Role == llm.RoleSystem {
		msgs := slices.Clone(e.messages) // never in place: see Messages
		msgs[0].Content = text
		e.messages = msgs
		return
	}
	e.messages = withSystem(e.messages, text)
}

// SystemPrompt returns the current system prompt.
func (e *Engine) SystemPrompt() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.instructions
}

// Messages returns the history. The caller must not change its messages:
// the slice shares them with the engine, which never changes a message in
// place once it is in the history (a change copies the slice, an append
// goes past the returned length). Sharing keeps the per-request cost from
// growing with the session: a request, a checkpoint and the compactor's
// check each read the history.
func (e *Engine) Messages() []llm.Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clip(e.messages)
}

// SetMessages replaces the history (restoring a session); refused while a
// turn runs.
func (e *Engine) SetMessages(msgs []llm.Message) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur != nil {
		return ErrBusy
	}
	e.messages = withSystem(msgs, e.instructions)
	return nil
}

// Running reports whether a turn is in progress. Where a session's turns
// stand (queued, awaiting an answer, suspended) is the host's, which the
// engine's events move; the engine knows only whether it runs one.
func (e *Engine) Running() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur != nil
}

// Interrupt stops the running turn: the model stream and running tools are
// cancelled, and the turn ends with interrupted + turn_end. It is a no-op
// when no turn runs.
func (e *Engine) Interrupt() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur != nil {
		e.cur.stopLocked(stopInterrupted, nil)
	}
}

// QueueSteering queues text to inject as a user message between iterations.
func (e *Engine) QueueSteering(text string, atts []llm.Attachment, refs []llm.StoredAttachment) {
	e.mu.Lock()
	e.steering = append(e.steering, steer{text: text, atts: atts, refs: refs})
	e.mu.Unlock()
}

// RemoveSteering withdraws queued steering text not yet injected; it reports
// false when no such text is queued (already injected or never queued).
func (e *Engine) RemoveSteering(text string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, s := range e.steering {
		if s.text == text {
			e.steering = append(e.steering[:i], e.steering[i+1:]...)
			return true
		}
	}
	return false
}

// PendingSteering returns the queued steering texts.
func (e *Engine) PendingSteering() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, len(e.steering))
	for i, s := range e.steering {
		out[i] = s.text
	}
	return out
}

// LastError returns the error that ended the last turn, if it ended in one.
func (e *Engine) LastError() *protocol.EventErrorData {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lastErr == nil {
		return nil
	}
	d := *e.lastErr
	return &d
}

// RestoreLastError records that the history's last turn ended in d, as the
// store says of a restored session, so that Retry can run it again after a
// restart (or an engine reload) as it could before. It changes nothing
// once a turn of this engine has begun.
func (e *Engine) RestoreLastError(d protocol.EventErrorData) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.turns > 0 || e.lastErr != nil {
		return
	}
	e.lastErr = &d
}

// Close interrupts a running turn and releases what the engine owns (shell
// tasks, watchers). The engine cannot run turns afterwards.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	if e.cur != nil {
		e.cur.stopLocked(stopInterrupted, nil)
	}
	fns := e.onClose
	e.onClose = nil
	e.mu.Unlock()
	var errs []error
	for i := len(fns) - 1; i >= 0; i-- {
		if err := fns[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// AddCloser registers f to run on Close.
func (e *Engine) AddCloser(f func() error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onClose = append(e.onClose, f)
}

// AddTurnStart registers f to run at the start of every turn (per-turn
// budgets such as the media tool's attachment count).
func (e *Engine) AddTurnStart(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onTurnStart = append(e.onTurnStart, f)
}

// begin makes t the running turn (idle → running).
func (e *Engine) begin(t *turn) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	if e.cur != nil {
		return ErrBusy
	}
	e.cur = t
	e.turns++
	e.lastErr = nil // a new turn (a retry too) supersedes the last one's error
	for _, f := range e.onTurnStart {
		safeCall(f)
	}
	return nil
}

// end moves the engine back to idle.
func (e *Engine) end(t *turn) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur == t {
		e.cur = nil
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
