package backend_test

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

// childAware routes requests of the explore subagent (recognised by its
// system prompt) to their own script.
type childAware struct {
	parent, child *scripted.Provider
	childStarted  chan struct{}
	once          sync.Once
}

func (p *childAware) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	if req.Messages[0].Content[:40] == engine.Prompts("en").Explore[:40] {
		p.once.Do(func() { close(p.childStarted) })
		return p.child.Stream(ctx, req)
	}
	return p.parent.Stream(ctx, req)
}

func (p *childAware) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	return p.parent.Chat(ctx, req)
}

type recordingHook struct {
	engine.BaseHook
	mu     sync.Mutex
	parent string
	events []protocol.EventType
}

func (h *recordingHook) Observe(ev engine.Event) {
	h.mu.Lock()
	h.events = append(h.events, ev.Type)
	h.mu.Unlock()
}

func TestExploreReturnsOnlyTheReportAndSharesEventsThroughTheHook(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644))
	p := &childAware{
		parent: scripted.New(
			scripted.Response{ToolCalls: []llm.ToolCall{{ID: "ex1", Name: "explore", Arguments: `{"task":"find the entry point"}`}}},
			scripted.Response{Text: "thanks"}),
		child: scripted.New(
			scripted.Response{ToolCalls: []llm.ToolCall{{ID: "k1", Name: "read_file", Arguments: `{"path":"main.go"}`}}},
			scripted.Response{Text: "REPORT: main.go is the entry point"}),
		childStarted: make(chan struct{}),
	}
	var hooks []*recordingHook
	e, err := backend.NewEngine(backend.EngineOptions{Workspace: ws, Model: "m", Provider: p, Lang: "en", NoCompaction: true,
		SubagentHookFactory: func(parent string) engine.Hook {
			h := &recordingHook{parent: parent}
			hooks = append(hooks, h)
			return h
		}})
	require.NoError(t, err)
	defer e.Close()
	evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "explore"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	var result string
	for _, m := range e.Messages() {
		if m.Role == llm.RoleTool && m.ToolCallID == "ex1" {
			result = m.Content
		}
		require.NotEqual(t, "k1", m.ToolCallID, "the child's steps stay out of the parent's history")
	}
	require.Equal(t, "REPORT: main.go is the entry point", result)
	require.Len(t, hooks, 1)
	require.Equal(t, "ex1", hooks[0].parent)
	require.Contains(t, hooks[0].events, protocol.EventToolFinished, "the host sees the child's events")
	// The child ran read-only tools in PLAN mode.
	for _, r := range p.child.Requests() {
		for _, s := range r.Tools {
			require.NotContains(t, []string{"write_file", "run_shell", "apply_patch", "explore"}, s.Function.Name)
		}
	}
}

func TestInterruptingTheParentInterruptsExplore(t *testing.T) {
	p := &childAware{
		parent:       scripted.New(scripted.Response{ToolCalls: []llm.ToolCall{{ID: "ex1", Name: "explore", Arguments: `{"task":"dig"}`}}}),
		child:        scripted.New(scripted.Response{Text: "digging", Stall: true}),
		childStarted: make(chan struct{}),
	}
	e, err := backend.NewEngine(backend.EngineOptions{Workspace: t.TempDir(), Model: "m", Provider: p, Lang: "en", NoCompaction: true})
	require.NoError(t, err)
	defer e.Close()
	go func() {
		<-p.childStarted
		e.Interrupt()
	}()
	evs := collect(e.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnInterrupted, last(evs).Status)
	require.Equal(t, protocol.ToolInterrupted, find[protocol.ToolFinishedData](evs)[0].Status)
}
