package ipc

import (
	"slices"

	"github.com/zqagent/sidecar/agent"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/gitenv"
	"github.com/zqagent/sidecar/ipc/host"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/sandbox"
	"github.com/zqagent/sidecar/tools/conflict"
	"github.com/zqagent/sidecar/tools/web"
)

// engineSpec is what a session's engine is built from (the session's row,
// project, history and settings).
type engineSpec struct {
	Workspace       string
	Model           string
	Provider        llm.Provider
	Mode            permission.Mode
	AllowedCommands []string
	ShellPolicy     permission.ShellPolicy
	Sandbox         sandbox.Config // mode and network; the engine's Box holds it at runtime
	AgentType       string
	Lang            string // one of engine.PromptLangs: prompt, naming, summaries
	Messages        []llm.Message
	ToolResultDir   string
	SessionDir      string
	ProjectID       string
	ReasoningEffort string
	ContextWindow   int               // the provider profile's override; 0 = the model's
	Hooks           []engine.Hook     // composed in order (change tracking, compaction state)
	Watcher         *conflict.Watcher // the project's file watcher; nil = hash checks only
	GitConfirmed    *gitenv.Candidate // the worktree's or enclosing repository the user trusted; nil = own .git only
}

// buildEngine builds a session's engine with the default wiring (every
// builtin tool, permissions with the OS sandbox, the default prompt). A
// call that needs the user is never decided by a default: the session's
// bridge is set as approver right after.
func buildEngine(sp engineSpec, s *Server, h *host.Session) (*engine.Engine, error) {
	opts := agent.DefaultOptions{
		Workspace:       sp.Workspace,
		Model:           sp.Model,
		Provider:        sp.Provider,
		Mode:            sp.Mode,
		AllowedCommands: sp.AllowedCommands,
		ShellPolicy:     sp.ShellPolicy,
		Sandbox:         sp.Sandbox,
		AgentType:       sp.AgentType,
		Lang:            sp.Lang,
		Messages:        sp.Messages,
		ToolResultDir:   sp.ToolResultDir,
		SessionDir:      sp.SessionDir,
		ProjectID:       sp.ProjectID,
		ReasoningEffort: sp.ReasoningEffort,
		ContextWindow:   sp.ContextWindow,
		DefaultApproval: permission.DefaultDeny,
		// Forwards explore's tool calls to the UI (parentReqId).
		SubagentHookFactory: h.SubagentHook,
		Watcher:             sp.Watcher,
		GitConfirmed:        sp.GitConfirmed,
		// web_search asks the backend the app configured (search.set).
		Web: web.Options{Search: searchBackend{s}},
		// A call's start is durable before it runs (at most once).
		Ledger: h.Ledger(),
	}
	// The memory of requests that carried uploads goes back to the OS.
	opts.Hook = engine.CompositeHook(slices.Concat(sp.Hooks, []engine.Hook{&mediaRelease{release: s.rpc.ReleaseMemory}}))
	if s.opts.Terminals != nil { // a nil *Manager must not become a non-nil interface
		opts.Terminals = s.opts.Terminals
	}
	return agent.NewDefault(opts)
}
