package backend

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// Builtin agents (seed §16.2): always listed, never removed or changed.
// Their prompts are the engine's (engine.BuildInstructions).
var builtinAgents = []store.AgentDef{
	{Name: "code", Description: "Software engineering agent: reads, edits and runs code in the workspace", Builtin: true},
	{Name: "cowork", Description: "General assistant for documents, data and everyday tasks in the workspace", Builtin: true},
}

// defaultAgent is the agent of a session that names none.
const defaultAgent = "code"

// agentName is what an agent may be called.
var agentName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func agentInfo(a store.AgentDef) protocol.Agent {
	return protocol.Agent{Name: a.Name, Description: a.Description, Prompt: a.Prompt, Model: a.Model, Builtin: a.Builtin, UpdatedAt: a.UpdatedAt}
}

func builtinAgent(name string) (store.AgentDef, bool) {
	i := slices.IndexFunc(builtinAgents, func(a store.AgentDef) bool { return a.Name == name })
	if i < 0 {
		return store.AgentDef{}, false
	}
	return builtinAgents[i], true
}

// agent returns an agent by name ("" is the default agent): a builtin or a
// stored one; ErrNotFound otherwise.
func (b *Backend) agent(ctx context.Context, name string) (store.AgentDef, error) {
	if name == "" {
		name = defaultAgent
	}
	if a, ok := builtinAgent(name); ok {
		return a, nil
	}
	list, err := b.opts.Store.Agents(ctx)
	if err != nil {
		return store.AgentDef{}, err
	}
	for _, a := range list {
		if a.Name == name {
			return a, nil
		}
	}
	return store.AgentDef{}, fmt.Errorf("%w: agent %q", ErrNotFound, name)
}

// agentSetup is what an agent contributes to an engine: the agent type of
// the builtin prompts and tools, and a custom agent's prompt.
type agentSetup struct {
	agentType string
	prompt    string // a custom agent's prompt; "" for builtins
}

// instructions is the system prompt of the agent in workspace, in the
// session's language: a builtin's engine.BuildInstructions, or the custom
// prompt followed by the same environment block.
func (a agentSetup) instructions(workspace, lang string) string {
	today := time.Now().Format("2006-01-02")
	if a.prompt == "" {
		return engine.BuildInstructions(a.agentType, workspace, today, lang)
	}
	return a.prompt + "\n\n" + engine.BuildEnvBlock(workspace, today, lang)
}

// agentSetupFor resolves a session's agent for its engine. An agent removed
// since the session chose it falls back to the default one (logged).
func (b *Backend) agentSetupFor(ctx context.Context, sessionID, name string) (agentSetup, error) {
	a, err := b.agent(ctx, name)
	if errors.Is(err, ErrNotFound) {
		b.log.Warn("session agent no longer exists; using the default agent", "session", sessionID, "agent", name)
		return agentSetup{agentType: defaultAgent}, nil
	}
	if err != nil {
		return agentSetup{}, err
	}
	if a.Builtin {
		return agentSetup{agentType: a.Name}, nil
	}
	return agentSetup{agentType: defaultAgent, prompt: a.Prompt}, nil
}

func (b *Backend) Agents(ctx context.Context, p protocol.Empty) (protocol.AgentsListResult, error) {
	stored, err := b.opts.Store.Agents(ctx)
	if err != nil {
		return protocol.AgentsListResult{}, err
	}
	out := make([]protocol.Agent, 0, len(builtinAgents)+len(stored))
	for _, a := range builtinAgents {
		out = append(out, agentInfo(a))
	}
	for _, a := range stored {
		if _, shadowed := builtinAgent(a.Name); !shadowed {
			out = append(out, agentInfo(a))
		}
	}
	return protocol.AgentsListResult{Agents: out}, nil
}

func (b *Backend) AddAgent(ctx context.Context, p protocol.AgentsAddParams) (protocol.Agent, error) {
	if !agentName.MatchString(p.Name) {
		return protocol.Agent{}, protocol.InvalidField("name", "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if _, ok := builtinAgent(p.Name); ok {
		return protocol.Agent{}, fmt.Errorf("%w: agent %q is builtin", ErrConflict, p.Name)
	}
	if _, err := b.agent(ctx, p.Name); err == nil {
		return protocol.Agent{}, fmt.Errorf("%w: agent %q exists (use agents.update)", ErrConflict, p.Name)
	} else if !errors.Is(err, ErrNotFound) {
		return protocol.Agent{}, err
	}
	a := store.AgentDef{Name: p.Name, Description: p.Description, Prompt: p.Prompt, Model: p.Model}
	if err := b.opts.Store.PutAgent(ctx, a); err != nil {
		return protocol.Agent{}, err
	}
	return b.storedAgentInfo(ctx, p.Name)
}

func (b *Backend) UpdateAgent(ctx context.Context, p protocol.AgentsUpdateParams) (protocol.Agent, error) {
	if _, ok := builtinAgent(p.Name); ok {
		return protocol.Agent{}, fmt.Errorf("%w: agent %q is builtin and cannot be changed", ErrForbidden, p.Name)
	}
	a, err := b.agent(ctx, p.Name)
	if err != nil {
		return protocol.Agent{}, err
	}
	if p.Prompt != nil && *p.Prompt == "" {
		return protocol.Agent{}, protocol.InvalidField("prompt", "must not be empty")
	}
	if p.Description != nil {
		a.Description = *p.Description
	}
	if p.Prompt != nil {
		a.Prompt = *p.Prompt
	}
	if p.Model != nil {
		a.Model = *p.Model
	}
	if err := b.opts.Store.PutAgent(ctx, a); err != nil {
		return protocol.Agent{}, err
	}
	b.reloadEngines("") // sessions of this agent take the new prompt at their next turn
	return b.storedAgentInfo(ctx, p.Name)
}

func (b *Backend) RemoveAgent(ctx context.Context, p protocol.NameParams) (protocol.RemovedResult, error) {
	if _, ok := builtinAgent(p.Name); ok {
		return protocol.RemovedResult{}, fmt.Errorf("%w: agent %q is builtin and cannot be removed", ErrForbidden, p.Name)
	}
	if err := b.opts.Store.DeleteAgent(ctx, p.Name); err != nil {
		return protocol.RemovedResult{}, fmt.Errorf("agent %q: %w", p.Name, err)
	}
	b.reloadEngines("")
	return protocol.RemovedResult{Removed: true}, nil
}

func (b *Backend) storedAgentInfo(ctx context.Context, name string) (protocol.Agent, error) {
	a, err := b.agent(ctx, name)
	if err != nil {
		return protocol.Agent{}, err
	}
	return agentInfo(a), nil
}

// reloadEngines makes every loaded session (of projectID; "" = all)
// rebuild its engine before its next turn: idle engines are released now,
// busy ones are marked.
func (b *Backend) reloadEngines(projectID string) {
	for _, h := range b.hosts.All() {
		if projectID != "" && h.ProjectID() != projectID {
			continue
		}
		if !h.UnloadIfIdle() {
			h.MarkReload()
		}
	}
}
