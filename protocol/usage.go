package protocol

// The accounting event types (issue 32): recorded in the session's log like
// every event, after the turn's model responses they count.
const (
	EventUsage      EventType = "usage"
	EventRateLimits EventType = "rate_limits"
)

// Usage sources: which kind of model request a usage event counts.
const (
	UsageTurn     = "turn"     // a response of the turn's agent loop
	UsageSummary  = "summary"  // a compaction's summary request
	UsageSubagent = "subagent" // a response of an explore subagent (parentReqId: the explore call)
	UsageTitle    = "title"    // the request that named the session (taskId "", no turn)
)

// TokenCounts are token counts as the providers count them: Input includes
// CachedInput, Output includes Reasoning.
type TokenCounts struct {
	Input       int64 `json:"input"`
	CachedInput int64 `json:"cachedInput"`
	Output      int64 `json:"output"`
	Reasoning   int64 `json:"reasoning"`
}

// Add returns the sum of c and o.
func (c TokenCounts) Add(o TokenCounts) TokenCounts {
	return TokenCounts{Input: c.Input + o.Input, CachedInput: c.CachedInput + o.CachedInput, Output: c.Output + o.Output, Reasoning: c.Reasoning + o.Reasoning}
}

// ContextFill is how full the model's context window is: the count
// compaction compares with its thresholds (the response's input plus its
// output, which the next request sends again).
type ContextFill struct {
	Tokens int `json:"tokens"`
	Window int `json:"window"`
	// Percent is Tokens of Window, 0–100 (one decimal).
	Percent float64 `json:"percent"`
}

// UsageCost is what a response, its turn and its session cost in USD, from
// the model's price (per 1M input, cached input and output tokens).
type UsageCost struct {
	Response float64 `json:"response"`
	// Turn is null once the turn counted a response whose model has no
	// price, and outside a turn (a title).
	Turn *float64 `json:"turn"`
	// Session is null once the session counted a response whose model has
	// no price.
	Session *float64 `json:"session"`
}

// UsageData: one model response's usage, with its turn's and session's
// totals (usage).
type UsageData struct {
	// TaskID is the turn ("" for the request that named the session).
	TaskID string `json:"taskId"`
	ReqID  string `json:"reqId"`
	Model  string `json:"model"`
	// Source is turn, summary, subagent or title.
	Source string `json:"source"`
	// Requests counts the session's model requests with usage so far, this
	// one included: of two usage events the one with more is the later
	// (a title's may be recorded after a turn's it preceded).
	Requests int64 `json:"requests"`
	// ParentReqID is the explore call a subagent's response belongs to.
	ParentReqID string      `json:"parentReqId,omitempty"`
	Response    TokenCounts `json:"response"`
	// Turn is the turn's total so far, subagents and summaries included
	// (absent outside a turn).
	Turn    *TokenCounts `json:"turn,omitempty"`
	Session TokenCounts  `json:"session"`
	// Context is the session's context fill after this response (absent
	// when the model's window is unknown).
	Context *ContextFill `json:"context,omitempty"`
	// Cost is null when the model's price is unknown: never a guess.
	Cost *UsageCost `json:"cost"`
}

// SessionUsage is a session's accounting: every model request it made
// (turns, summaries, subagents, titles), as its last usage event says.
type SessionUsage struct {
	Tokens TokenCounts `json:"tokens"`
	// Requests counts the model requests with usage.
	Requests int64 `json:"requests"`
	// Cost in USD is null once the session counted a response whose model
	// has no price.
	Cost *float64 `json:"cost"`
}

// RateLimitWindow is one of the endpoint's budgets (x-ratelimit-*). A
// field the endpoint did not send is absent.
type RateLimitWindow struct {
	Limit     *int64 `json:"limit,omitempty"`
	Remaining *int64 `json:"remaining,omitempty"`
	// ResetAt is when the budget is whole again (RFC 3339, UTC).
	ResetAt string `json:"resetAt,omitempty"`
}

// RateLimitsData: the endpoint's budgets after a model response
// (rate_limits), when it sent x-ratelimit-* headers.
type RateLimitsData struct {
	TaskID   string           `json:"taskId"`
	ReqID    string           `json:"reqId"`
	Model    string           `json:"model"`
	Requests *RateLimitWindow `json:"requests,omitempty"`
	Tokens   *RateLimitWindow `json:"tokens,omitempty"`
}

// EventTaskID implements EventData.
func (d UsageData) EventTaskID() string      { return d.TaskID }
func (d RateLimitsData) EventTaskID() string { return d.TaskID }
