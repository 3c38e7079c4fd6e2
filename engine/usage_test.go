package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/compaction"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/prices"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

// testPrice prices test-model: 1 USD per 1M input, 0.5 cached, 2 output.
var testPrice = func() prices.Price {
	half := 0.5
	return prices.Price{Input: 1, CachedInput: &half, Output: 2}
}()

func pricedTable(t *testing.T) *prices.Table {
	tab, err := prices.Default().With(map[string]prices.Price{"test-model": testPrice})
	require.NoError(t, err)
	return tab
}

func counts(in, cached, out, reasoning int64) protocol.TokenCounts {
	return protocol.TokenCounts{Input: in, CachedInput: cached, Output: out, Reasoning: reasoning}
}

func usageOf(c protocol.TokenCounts) llm.Usage {
	return llm.Usage{PromptTokens: int(c.Input), CachedTokens: int(c.CachedInput), CompletionTokens: int(c.Output), ReasoningTokens: int(c.Reasoning)}
}

// TestUsageCountsEveryRequest: every model request of a session counts
// toward its totals: the turn's responses, an explore subagent's, a
// compaction summary and the session's title; each usage event carries
// the response's tokens, the turn's and the session's totals, the context
// fill and the costs.
func TestUsageCountsEveryRequest(t *testing.T) {
	u := func(c protocol.TokenCounts) *llm.Usage { v := usageOf(c); return &v }
	explore := counts(1000, 400, 100, 40)
	child := counts(500, 0, 50, 0)
	read1, read2, final := counts(2000, 1000, 20, 0), counts(3000, 2000, 30, 10), counts(900, 0, 9, 0)
	var r *rig
	r = newRig(t, permission.ModeInteractive, func(o *engine.Options) {
		o.Prices = pricedTable(t)
		o.Compactor = engine.NewCompactor(compaction.Config{Provider: providerOf(&r), ContextWindow: 1_000_000}, "en")
	},
		scripted.Response{ToolCalls: []llm.ToolCall{call("e1", "explore", `{"task":"look around"}`)}, Usage: u(explore)},
		scripted.Response{Text: "the report", Usage: u(child)},
		scripted.Response{ToolCalls: []llm.ToolCall{call("c1", "big", `{}`)}, Usage: u(read1)},
		scripted.Response{ToolCalls: []llm.ToolCall{call("c2", "big", `{}`)}, Usage: u(read2)},
		scripted.Response{Err: "maximum context length exceeded", ErrKind: "context_overflow"},
		scripted.Response{Text: "fits now", Usage: u(final)},
	)
	engine.RegisterExploreTool(r.reg, engine.ExploreConfig{NewChild: func(string) (*engine.Engine, error) {
		return engine.New(engine.Options{Provider: r.provider, Registry: tools.NewRegistry(), Permissions: r.perms, Model: "test-model", Lang: "en", NoCompaction: true})
	}})
	r.provider.AppendChat("summary of the reads", "Look around")

	evs := collect(r.eng.Run(context.Background(), engine.Turn{ID: "t1", Input: engine.Input{Text: "go"}}))
	require.Equal(t, protocol.TurnCompleted, last(evs).Status)
	got := find[protocol.UsageData](evs)
	require.Len(t, got, 6)
	var sources []string
	var turn, session protocol.TokenCounts
	turnCost := 0.0
	for i, d := range got {
		sources = append(sources, d.Source)
		require.Equal(t, "t1", d.TaskID)
		require.Equal(t, "test-model", d.Model)
		require.NotEmpty(t, d.ReqID)
		turn, session = turn.Add(d.Response), session.Add(d.Response)
		require.Equal(t, &turn, d.Turn, "event %d: the turn's total so far", i)
		require.Equal(t, session, d.Session, "event %d", i)
		require.NotNil(t, d.Cost, "a priced model")
		want := testPrice.Cost(usageOf(d.Response))
		turnCost += want
		require.InDelta(t, want, d.Cost.Response, 1e-12)
		require.InDelta(t, turnCost, *d.Cost.Turn, 1e-12)
		require.InDelta(t, turnCost, *d.Cost.Session, 1e-12)
	}
	require.Equal(t, []string{protocol.UsageTurn, protocol.UsageSubagent, protocol.UsageTurn, protocol.UsageTurn, protocol.UsageSummary, protocol.UsageTurn}, sources)
	require.Equal(t, []protocol.TokenCounts{explore, child, read1, read2}, []protocol.TokenCounts{got[0].Response, got[1].Response, got[2].Response, got[3].Response})
	require.Equal(t, "e1", got[1].ParentReqID, "the subagent's response names its explore call")
	require.Positive(t, got[4].Response.Input, "the summary request's usage (the scripted provider estimates it)")
	require.Equal(t, final, got[5].Response)
	// Context: the fill compaction counts, after each turn response; a
	// subagent's or a summary's response leaves it as it was.
	require.Equal(t, &protocol.ContextFill{Tokens: 1100, Window: 1_000_000, Percent: 0.1}, got[0].Context)
	require.Equal(t, got[0].Context, got[1].Context)
	require.Equal(t, &protocol.ContextFill{Tokens: 3030, Window: 1_000_000, Percent: 0.3}, got[3].Context)
	require.Equal(t, got[3].Context, got[4].Context)
	require.Equal(t, 909, got[5].Context.Tokens)
	// The reqIds are the model requests'.
	var reqs []string
	for _, d := range find[protocol.LLMRequestData](evs) {
		reqs = append(reqs, d.ReqID)
	}
	require.Contains(t, reqs, got[0].ReqID)
	require.Contains(t, reqs, got[4].ReqID, "the summary's llm_request")

	// The title counts toward the session, not a turn.
	naming, err := r.eng.GenerateName(context.Background())
	require.NoError(t, err)
	require.Equal(t, "Look around", naming.Name)
	require.Len(t, naming.Events, 1)
	title := naming.Events[0].Data.(protocol.UsageData)
	require.Equal(t, protocol.UsageTitle, title.Source)
	require.Empty(t, title.TaskID)
	require.Nil(t, title.Turn)
	require.Nil(t, title.Cost.Turn)
	require.Equal(t, session.Add(title.Response), title.Session)
	require.InDelta(t, turnCost+title.Cost.Response, *title.Cost.Session, 1e-12)
	require.Equal(t, int64(7), title.Requests, "six responses of the turn, then the title")
	require.Equal(t, protocol.SessionUsage{Tokens: title.Session, Requests: 7, Cost: title.Cost.Session}, r.eng.Usage())

	// A new turn starts its own totals; the session's go on.
	r.provider.Append(scripted.Response{Text: "again", Usage: u(counts(10, 0, 1, 0))})
	evs = collect(r.eng.Run(context.Background(), engine.Turn{ID: "t2", Input: engine.Input{Text: "more"}}))
	next := find[protocol.UsageData](evs)
	require.Len(t, next, 1)
	require.Equal(t, counts(10, 0, 1, 0), *next[0].Turn)
	require.Equal(t, title.Session.Add(counts(10, 0, 1, 0)), next[0].Session)
}

// TestUsageCostIsNullWithoutAPrice: a model without a price has no cost,
// and a total that counted it has none either: never a guess. Restored
// totals go on.
func TestUsageCostIsNullWithoutAPrice(t *testing.T) {
	restoredCost := 1.5
	r := newRig(t, permission.ModeInteractive, func(o *engine.Options) {
		o.Model = "gpt-4o" // in the default table: 2.50 / 1.25 cached / 10.00
		o.Usage = &protocol.SessionUsage{Tokens: counts(7, 0, 3, 0), Requests: 4, Cost: &restoredCost}
	},
		scripted.Response{Text: "priced", Usage: &llm.Usage{PromptTokens: 1_000_000, CompletionTokens: 100_000}},
		scripted.Response{Text: "unpriced", Usage: &llm.Usage{PromptTokens: 10, CompletionTokens: 1}},
		scripted.Response{Text: "priced again", Usage: &llm.Usage{PromptTokens: 1_000_000}},
	)
	d := find[protocol.UsageData](collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "a"}})))[0]
	require.InDelta(t, 3.5, d.Cost.Response, 1e-9)
	require.InDelta(t, 5.0, *d.Cost.Session, 1e-9, "the restored session's cost goes on")
	require.Equal(t, counts(1_000_007, 0, 100_003, 0), d.Session)
	require.Equal(t, int64(5), d.Requests, "the restored count goes on")

	r.eng.SetModel("my-local-model")
	d = find[protocol.UsageData](collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "b"}})))[0]
	require.Nil(t, d.Cost)
	b, err := json.Marshal(d)
	require.NoError(t, err)
	require.Contains(t, string(b), `"cost":null`)
	require.Nil(t, r.eng.Usage().Cost)

	r.eng.SetModel("gpt-4o")
	d = find[protocol.UsageData](collect(r.eng.Run(context.Background(), engine.Turn{Input: engine.Input{Text: "c"}})))[0]
	require.InDelta(t, 2.5, d.Cost.Response, 1e-9)
	require.InDelta(t, 2.5, *d.Cost.Turn, 1e-9, "this turn counted priced responses only")
	require.Nil(t, d.Cost.Session, "the session counted an unpriced one")
	b, err = json.Marshal(d.Cost)
	require.NoError(t, err)
	require.JSONEq(t, `{"response":2.5,"turn":2.5,"session":null}`, string(b))
}

// TestRateLimitsEvent: a response's rate limits become a rate_limits event
// (after its deltas), also when the request then fails.
func TestRateLimitsEvent(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	reset := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rl := &llm.RateLimits{Requests: &llm.RateLimit{Limit: n(60), Remaining: n(0), ResetAt: reset}, Tokens: &llm.RateLimit{Remaining: n(900)}}
	r := newRig(t, permission.ModeInteractive, nil,
		scripted.Response{Text: "ok", RateLimits: rl},
		scripted.Response{Err: "slow down", ErrKind: "rate_limit", RateLimits: rl})
	evs := collect(r.eng.Run(context.Background(), engine.Turn{ID: "t1", Input: engine.Input{Text: "a"}}))
	var types []protocol.EventType
	for _, e := range evs {
		types = append(types, e.Type)
	}
	require.Equal(t, []protocol.EventType{protocol.EventTurnStart, protocol.EventLLMRequest, protocol.EventAssistantDelta, protocol.EventRateLimits,
		protocol.EventAssistantMessage, protocol.EventUsage, protocol.EventIterationEnd, protocol.EventTurnEnd}, types)
	got := find[protocol.RateLimitsData](evs)[0]
	req := find[protocol.LLMRequestData](evs)[0]
	require.Equal(t, protocol.RateLimitsData{TaskID: "t1", ReqID: req.ReqID, Model: "test-model",
		Requests: &protocol.RateLimitWindow{Limit: n(60), Remaining: n(0), ResetAt: "2026-01-02T03:04:05Z"},
		Tokens:   &protocol.RateLimitWindow{Remaining: n(900)}}, got)

	evs = collect(r.eng.Run(context.Background(), engine.Turn{ID: "t2", Input: engine.Input{Text: "b"}}))
	require.Len(t, find[protocol.RateLimitsData](evs), 1, "a refused request's budgets")
	require.Equal(t, "rate_limit", find[protocol.EventErrorData](evs)[0].ErrorType)
}
