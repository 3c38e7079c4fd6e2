package engine

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/zqagent/sidecar/engine/models"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/prices"
	"github.com/zqagent/sidecar/protocol"
)

// meter is an engine's accounting: the session's totals (every model
// request the engine makes: the turns' responses, compaction summaries,
// explore subagents, the session's title) and the running turn's. It has
// its own lock because explore calls account from tool goroutines and
// GenerateName runs beside a turn.
type meter struct {
	prices PriceLookup // immutable

	mu          sync.Mutex            // guards the fields below
	session     protocol.TokenCounts  // the session's tokens
	requests    int64                 // the session's responses counted
	sessionCost *float64              // nil once an unpriced response counted
	turnID      string                // the turn whose totals turn and turnCost hold
	turn        protocol.TokenCounts  // the running turn's tokens
	turnCost    *float64              // nil once an unpriced response counted in the turn
	context     *protocol.ContextFill // the context fill after the last turn response
}

// PriceLookup returns a model's price, or false when it has none;
// *prices.Table is one. It must be safe for concurrent use.
type PriceLookup interface {
	Lookup(model string) (prices.Price, bool)
}

var _ PriceLookup = (*prices.Table)(nil)

func newMeter(p PriceLookup, restored *protocol.SessionUsage) *meter {
	if p == nil {
		p = prices.Default()
	}
	m := &meter{prices: p, sessionCost: new(float64)}
	if restored != nil {
		m.session, m.requests = restored.Tokens, restored.Requests
		m.sessionCost = cloneFloat(restored.Cost)
	}
	return m
}

func cloneFloat(f *float64) *float64 {
	if f == nil {
		return nil
	}
	v := *f
	return &v
}

// beginTurn starts the totals of a turn.
func (m *meter) beginTurn(taskID string) {
	m.mu.Lock()
	m.turnID, m.turn, m.turnCost = taskID, protocol.TokenCounts{}, new(float64)
	m.mu.Unlock()
}

// usage returns the session's totals.
func (m *meter) usage() protocol.SessionUsage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return protocol.SessionUsage{Tokens: m.session, Requests: m.requests, Cost: cloneFloat(m.sessionCost)}
}

// counts are the wire form of one response's usage.
func counts(u llm.Usage) protocol.TokenCounts {
	return protocol.TokenCounts{Input: int64(max(u.PromptTokens, 0)), CachedInput: int64(max(u.CachedTokens, 0)),
		Output: int64(max(u.CompletionTokens, 0)), Reasoning: int64(max(u.ReasoningTokens, 0))}
}

// add counts one response. d names it (TaskID, ReqID, Model, Source,
// ParentReqID); add fills in the totals, the context fill (fill, when
// set, is the response's own) and the cost, and returns the usage event's
// data. A response of another turn than the running one (a title) counts
// toward the session only.
func (m *meter) add(d protocol.UsageData, u llm.Usage, fill *protocol.ContextFill) protocol.UsageData {
	price, priced := m.prices.Lookup(d.Model)
	cost := 0.0
	if priced {
		cost = price.Cost(u)
	}
	d.Response = counts(u)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.session = m.session.Add(d.Response)
	m.requests++
	d.Requests = m.requests
	if !priced {
		m.sessionCost = nil
	} else if m.sessionCost != nil {
		*m.sessionCost += cost
	}
	d.Session = m.session
	inTurn := d.TaskID != "" && d.TaskID == m.turnID
	if inTurn {
		m.turn = m.turn.Add(d.Response)
		if !priced {
			m.turnCost = nil
		} else if m.turnCost != nil {
			*m.turnCost += cost
		}
		t := m.turn
		d.Turn = &t
	}
	if fill != nil {
		m.context = fill
	}
	if m.context != nil {
		c := *m.context
		d.Context = &c
	}
	if priced {
		d.Cost = &protocol.UsageCost{Response: cost, Session: cloneFloat(m.sessionCost)}
		if inTurn {
			d.Cost.Turn = cloneFloat(m.turnCost)
		}
	}
	return d
}

// fillOf is the context fill after a turn response: what compaction counts
// before the next request (the response's input and output, which the
// next request sends again) against the model's window.
func (e *Engine) fillOf(model string, u llm.Usage) *protocol.ContextFill {
	window := models.ContextWindow(model, e.opts.ContextWindow)
	if c, ok := e.compactor.(compactor); ok {
		window, _, _ = c.m.Thresholds(model)
	}
	tokens := max(u.PromptTokens, 0) + max(u.CompletionTokens, 0)
	if window <= 0 || tokens == 0 {
		return nil
	}
	pct := math.Round(float64(tokens)*1000/float64(window)) / 10
	return &protocol.ContextFill{Tokens: tokens, Window: window, Percent: min(pct, 100)}
}

// Usage returns the session's usage totals so far (restored ones
// included: Options.Usage).
func (e *Engine) Usage() protocol.SessionUsage { return e.meter.usage() }

// account counts a response of the running turn (or of one of its
// summaries and subagents) and emits its usage event.
func (t *turn) account(d protocol.UsageData, u *llm.Usage, fill *protocol.ContextFill) bool {
	if u == nil {
		return true
	}
	d.TaskID = t.taskID
	return t.emit(Event{protocol.EventUsage, t.e.meter.add(d, *u, fill)})
}

// rateLimits emits the endpoint's budgets a response reported.
func (t *turn) rateLimits(reqID, model string, rl *llm.RateLimits) bool {
	if rl == nil {
		return true
	}
	return t.emit(Event{protocol.EventRateLimits, rateLimitsData(t.taskID, reqID, model, rl)})
}

func rateLimitsData(taskID, reqID, model string, rl *llm.RateLimits) protocol.RateLimitsData {
	return protocol.RateLimitsData{TaskID: taskID, ReqID: reqID, Model: model, Requests: window(rl.Requests), Tokens: window(rl.Tokens)}
}

func window(w *llm.RateLimit) *protocol.RateLimitWindow {
	if w == nil {
		return nil
	}
	out := &protocol.RateLimitWindow{Limit: w.Limit, Remaining: w.Remaining}
	if !w.ResetAt.IsZero() {
		out.ResetAt = w.ResetAt.UTC().Format(time.RFC3339Nano)
	}
	return out
}

// forwardSubagent counts a response of an explore subagent (its usage
// event) toward the parent's turn and session, and emits the parent's
// usage event for it from the explore call's goroutine; the subagent's
// rate limits are forwarded as the parent's.
func forwardSubagent(ctx context.Context, ev Event) {
	ci, ok := ctx.Value(turnKey{}).(*callInfo)
	if !ok {
		return
	}
	t := ci.t
	switch d := ev.Data.(type) {
	case protocol.UsageData:
		u := llm.Usage{PromptTokens: int(d.Response.Input), CachedTokens: int(d.Response.CachedInput), CompletionTokens: int(d.Response.Output), ReasoningTokens: int(d.Response.Reasoning)}
		out := t.e.meter.add(protocol.UsageData{TaskID: t.taskID, ReqID: d.ReqID, Model: d.Model, Source: protocol.UsageSubagent, ParentReqID: ci.callID}, u, nil)
		t.emitFromTool(ctx, Event{protocol.EventUsage, out})
	case protocol.RateLimitsData:
		d.TaskID = t.taskID
		t.emitFromTool(ctx, Event{protocol.EventRateLimits, d})
	}
}
