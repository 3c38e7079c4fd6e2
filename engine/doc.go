// Package engine is the agent's turn loop: one Engine per session holds the
// message history, streams the model through an llm.Provider, runs tools from
// a tools.Registry under a permission.Engine, and yields events of seed §9.2
// through Run's iterator with back-pressure: the engine makes no progress while
// the consumer does not pull, and breaking out of the loop stops the turn.
// The events are the protocol's: an Event's type and data are protocol's
// event types (protocol.Events), which the store records and the UI reads
// as they are; the engine defines no event vocabulary of its own.
//
// One turn contract: Run(ctx, Turn{Kind, ID, From, Input}) starts a new
// turn, retries the model after a retriable error, or resumes the calls a
// dead turn left unanswered. Why a turn stops early is one stop reason,
// set once (interrupted, suspended, consumer gone, failed). Every tool
// goroutine belongs to its turn, and turn_end comes after all of them
// returned. A tool runs only after the Ledger said its start is durable
// (ledger.go: at most once, failing closed), and a resumed turn never runs
// a call that had started.
//
// A tool call's arguments are decoded once, strictly (tools.NormalizeArgs),
// before the permission decision; the decision, the tool_proposed and
// permission_required events and the handler all use that one value. The
// interactive events flag model text that is unsafe to render (cardtext.go).
// Only the tools offered to the model run: a call to an unknown tool, or to
// one that is disabled or not available (tools.Spec.Enabled), is refused with
// an error result and never reaches the permission engine or a handler.
//
// Accounting (usage.go): every model request the engine makes (the turn's
// responses, compaction summaries, explore subagents' responses, the title)
// is counted by one meter, with its own lock, toward the running turn's
// and the session's totals, priced through Options.Prices (a model without
// a price costs null, never a guess); each yields a usage event, and the
// endpoint's rate-limit headers a rate_limits event. Options.Usage restores
// a session's totals; a turn's totals start when it (re)starts in this
// process.
//
// Language: Options.Lang (backend.EngineOptions.Lang) selects the default system
// prompt, the session-naming prompt, the compaction summary prompt and the
// max-iterations notice from the embedded prompt sets (prompts.go,
// MatchLang); an explicit Instructions wins over the default prompt.
//
// The package is embeddable as a plain library: it imports neither ipc nor
// store, nor a concrete provider or the builtin tools (deps_test.go). Hosts
// persist through Hooks and answer approvals and questions through the
// per-engine Approver and Interactor. Options' context-window settings
// configure the default compactor (NewCompactor). The default wiring (the
// manual's createDefaultEngine) is package backend's: backend.NewEngine adds
// the OpenAI-compatible provider, the builtin tools and, with
// backend.EngineOptions.VCS, per-turn git snapshots (vcs, through
// NewVCSHook).
package engine
