package engine

import (
	"context"
	"encoding/json"

	"github.com/zqagent/sidecar/engine/compaction"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
)

// compactor adapts a compaction.Manager to the engine: its steps become
// compacting and compacted events.
type compactor struct{ m *compaction.Manager }

var _ Compactor = compactor{}

// NewCompactor returns the default context manager (seed chapter 14) with
// the session language's summary prompt unless cfg sets one.
func NewCompactor(cfg compaction.Config, lang string) Compactor {
	if cfg.SummaryPrompt == "" {
		cfg.SummaryPrompt = Prompts(lang).Summary
	}
	return compactor{compaction.New(cfg)}
}

// Manager exposes the underlying manager (token counts, thresholds).
func (c compactor) Manager() *compaction.Manager { return c.m }

func (c compactor) State() json.RawMessage { return c.m.StateJSON() }

func (c compactor) Restore(s json.RawMessage) error { return c.m.Restore(s) }

func (c compactor) Compact(ctx context.Context, req CompactRequest, emit func(Event) bool) ([]llm.Message, error) {
	tk := req.TaskID
	return c.m.Compact(ctx, compaction.Request{TaskID: req.TaskID, Model: req.Model, Messages: req.Messages, LastUsage: req.LastUsage, Force: req.Force, Iteration: req.Iteration}, compaction.Observer{
		Start: func(s compaction.Start) bool {
			return emit(Event{protocol.EventCompacting, protocol.CompactingData{TaskID: tk, Trigger: s.Trigger, Tokens: s.Tokens, Estimated: s.Estimated, ContextWindow: s.ContextWindow, ThresholdPct: s.ThresholdPct, ThresholdTokens: s.ThresholdTokens, OutboundMessages: s.OutboundMessages}})
		},
		Request: func(r llm.ChatRequest) bool {
			return emit(Event{protocol.EventLLMRequest, protocol.LLMRequestData{TaskID: tk, ReqID: r.ReqID, LogTime: logTime(), Model: r.Model, MsgCount: len(r.Messages), Compact: true}})
		},
		Response: func(r llm.ChatRequest, resp llm.ChatResponse) {
			if req.OnResponse != nil {
				req.OnResponse(r.Model, r.ReqID, resp)
			}
		},
		Done: func(d compaction.Done) {
			emit(Event{protocol.EventCompacted, protocol.CompactedData{TaskID: tk, ReqID: "compact_" + req.TaskID, Method: d.Method, MessagesBefore: d.MessagesBefore, MessagesAfter: d.MessagesAfter, BoundaryIndex: d.BoundaryIndex, Model: d.Model, SummaryPreview: d.SummaryPreview, KeptUserMessages: d.KeptUserMessages, DroppedUserMessages: d.DroppedUserMessages, TokensBefore: d.TokensBefore, TokensAfter: d.TokensAfter}})
		},
	})
}
