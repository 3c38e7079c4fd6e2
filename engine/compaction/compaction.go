// Package compaction keeps a session's history inside the model's context
// window (seed chapter 14). Before every model request — mid-turn too — the
// Manager counts the history (provider usage when it has it, a BPE estimate
// otherwise) and:
//
//   - at the soft threshold (default 75% of the hard one) elides old tool
//     results and dedups repeated read_file results, with no model call;
//   - at the hard threshold (default 80% of the window, capped by CapTokens)
//     summarises the older conversation with one model call, keeping the
//     system prompt, the session's first request, every user message of the
//     current turn and the most recent ~25% verbatim;
//   - when that is not enough, or a summary already ran in this iteration, it
//     trims deterministically (old tool results, then the oldest turns)
//     instead of summarising again: at most one summary per iteration, so no
//     compaction spiral.
//
// A forced compaction (after the API reported a context overflow) does the
// same regardless of thresholds.
//
// The package imports only the provider contract and the model table; the
// engine turns its Start/Done callbacks into compacting/compacted events.
//
// Concurrency: a Manager serves one session; its methods are safe for
// concurrent use (one mutex guards the state).
package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/zqagent/sidecar/engine/models"
	"github.com/zqagent/sidecar/llm"
)

// Defaults of seed §14.1.
const (
	DefaultThresholdPct     = 0.8
	DefaultSoftOfHard       = 0.75
	DefaultKeepRecentPct    = 0.25
	DefaultSummaryMaxTokens = 3000
	DefaultSummaryEffort    = "low"
)

// Notices marking messages compaction wrote.
const (
	NoticeSummary = "compaction_summary"
)

// Config tunes a Manager. Zero values take the defaults and the
// environment (CONTEXT_WINDOW, COMPACTION_*).
type Config struct {
	Provider         llm.Provider // for the summary call
	ContextWindow    int          // override; 0 = CONTEXT_WINDOW, then the model table
	ThresholdPct     float64      // hard threshold, fraction of the window (0.8)
	SoftThresholdPct float64      // soft threshold, fraction of the window (75% of the hard one)
	CapTokens        int          // absolute cap on the hard threshold; 0 = none
	SummaryModel     string       // COMPACTION_MODEL; "" = the session's model
	SummaryEffort    string       // COMPACTION_REASONING_EFFORT; default low
	SummaryPrompt    string       // the summariser's system prompt (language of the session)
	SummaryMaxTokens int          // 3000
	KeepRecentPct    float64      // share of the conversation kept verbatim (0.25)
	NoElide          bool         // COMPACTION_ELIDE=0
	NoDedup          bool         // COMPACTION_DEDUP=0
}

// WithEnv fills zero fields from the environment and the defaults.
func (c Config) WithEnv() Config {
	envF := func(name string) float64 {
		v, err := strconv.ParseFloat(os.Getenv(name), 64)
		if err != nil || v <= 0 || v > 1 {
			return 0
		}
		return v
	}
	if c.ThresholdPct <= 0 {
		c.ThresholdPct = envF("COMPACTION_THRESHOLD_PCT")
	}
	if c.ThresholdPct <= 0 {
		c.ThresholdPct = DefaultThresholdPct
	}
	if c.SoftThresholdPct <= 0 {
		c.SoftThresholdPct = envF("COMPACTION_SOFT_THRESHOLD_PCT")
	}
	if c.SoftThresholdPct <= 0 || c.SoftThresholdPct > c.ThresholdPct {
		c.SoftThresholdPct = c.ThresholdPct * DefaultSoftOfHard
	}
	if c.CapTokens <= 0 {
		c.CapTokens, _ = strconv.Atoi(os.Getenv("COMPACTION_CAP_TOKENS"))
	}
	if c.SummaryModel == "" {
		c.SummaryModel = os.Getenv("COMPACTION_MODEL")
	}
	if c.SummaryEffort == "" {
		c.SummaryEffort = os.Getenv("COMPACTION_REASONING_EFFORT")
	}
	if c.SummaryEffort == "" {
		c.SummaryEffort = DefaultSummaryEffort
	}
	if c.SummaryMaxTokens <= 0 {
		c.SummaryMaxTokens = DefaultSummaryMaxTokens
	}
	if c.KeepRecentPct <= 0 || c.KeepRecentPct >= 1 {
		c.KeepRecentPct = DefaultKeepRecentPct
	}
	if os.Getenv("COMPACTION_ELIDE") == "0" {
		c.NoElide = true
	}
	if os.Getenv("COMPACTION_DEDUP") == "0" {
		c.NoDedup = true
	}
	if c.SummaryPrompt == "" {
		c.SummaryPrompt = defaultSummaryPrompt
	}
	return c
}

const defaultSummaryPrompt = "Summarise the conversation so far so that the assistant can continue the work: goals, decisions, files changed, commands and results, current state and next steps. Be factual and terse; at most 3000 tokens."

// State is the observable compaction state of a session; it is persisted
// with the session.
type State struct {
	Compactions          int       `json:"compactions"`
	Summaries            int       `json:"summaries"`
	Trims                int       `json:"trims"`
	Elisions             int       `json:"elisions"`
	LastTokens           int       `json:"lastTokens"`
	LastEstimated        bool      `json:"lastEstimated"`
	LastMethod           string    `json:"lastMethod,omitempty"`
	LastAt               time.Time `json:"lastAt,omitzero"`
	LastSummaryTask      string    `json:"lastSummaryTask,omitempty"`
	LastSummaryIteration int       `json:"lastSummaryIteration,omitempty"`
	ContextWindow        int       `json:"contextWindow"`
	HardTokens           int       `json:"hardTokens"`
	SoftTokens           int       `json:"softTokens"`
}

// Request is one check before a model request.
type Request struct {
	TaskID    string
	Model     string
	Messages  []llm.Message
	LastUsage *llm.Usage
	Force     bool
	Iteration int
}

// Start describes a compaction that begins (the compacting event).
type Start struct {
	Trigger          string // soft | threshold | overflow
	Tokens           int
	Estimated        bool
	ContextWindow    int
	ThresholdPct     float64
	ThresholdTokens  int
	OutboundMessages int
}

// Done describes a finished compaction step (the compacted event).
type Done struct {
	Method              string // elided | summarized | trimmed
	MessagesBefore      int
	MessagesAfter       int
	BoundaryIndex       *int
	Model               string
	SummaryPreview      string
	KeptUserMessages    *int
	DroppedUserMessages *int
	TokensBefore        int
	TokensAfter         int
}

// Observer receives the steps; Start and Request return false when the
// consumer is gone (the compaction then stops with context.Canceled).
// Request, when set, sees the summary request before it is sent, and
// Response its answer (usage and rate limits; after a failure only when
// the endpoint sent rate limits).
type Observer struct {
	Start    func(Start) bool
	Request  func(llm.ChatRequest) bool
	Response func(llm.ChatRequest, llm.ChatResponse)
	Done     func(Done)
}

// Manager compacts one session's history.
type Manager struct {
	cfg Config

	mu        sync.Mutex
	state     State                 // guarded by mu
	lastCount int                   // guarded by mu; messages sent with the previous request
	est       map[string]*Estimator // guarded by mu; per model
}

// New returns a Manager.
func New(cfg Config) *Manager {
	return &Manager{cfg: cfg.WithEnv(), est: map[string]*Estimator{}}
}

// Config returns the effective configuration.
func (m *Manager) Config() Config { return m.cfg }

// State returns a copy of the state.
func (m *Manager) State() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

// StateJSON is State as JSON.
func (m *Manager) StateJSON() json.RawMessage {
	b, _ := json.Marshal(m.State())
	return b
}

// Restore loads a persisted state.
func (m *Manager) Restore(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	var s State
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("restore compaction state: %w", err)
	}
	m.mu.Lock()
	m.state = s
	m.mu.Unlock()
	return nil
}

// Estimator returns the token estimator of a model.
func (m *Manager) Estimator(model string) *Estimator {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.est[model]
	if !ok {
		e = NewEstimator(model)
		m.est[model] = e
	}
	return e
}

// Thresholds returns the window and the hard and soft thresholds in tokens.
func (m *Manager) Thresholds(model string) (window, hard, soft int) {
	window = models.ContextWindow(model, m.cfg.ContextWindow)
	hard = int(float64(window) * m.cfg.ThresholdPct)
	if m.cfg.CapTokens > 0 && m.cfg.CapTokens < hard {
		hard = m.cfg.CapTokens
	}
	soft = int(float64(window) * m.cfg.SoftThresholdPct)
	if soft > hard {
		soft = int(float64(hard) * DefaultSoftOfHard)
	}
	return window, hard, soft
}

// Count returns the history's token count: the provider's usage of the
// previous request plus an estimate of what came after it, or a whole
// estimate (estimated = true) when there is no usable usage.
func (m *Manager) Count(req Request) (tokens int, estimated bool) {
	est := m.Estimator(req.Model)
	m.mu.Lock()
	last := m.lastCount
	m.mu.Unlock()
	u := req.LastUsage
	if u != nil && u.PromptTokens > 0 && last > 0 && last < len(req.Messages) {
		// messages[last] is the response the usage's completion counted.
		return u.PromptTokens + u.CompletionTokens + est.Messages(req.Messages[last+1:]) - 3, false
	}
	return est.Messages(req.Messages), true
}

// ErrNoProvider: a summary was needed but the manager has no provider.
var ErrNoProvider = errors.New("compaction needs a provider for the summary")

// Compact returns the history to send, compacted when a threshold is
// reached or req.Force is set.
func (m *Manager) Compact(ctx context.Context, req Request, obs Observer) ([]llm.Message, error) {
	window, hard, soft := m.Thresholds(req.Model)
	tokens, estimated, bounded := 0, false, false
	if !req.Force {
		tokens, estimated, bounded = m.boundedCount(req, soft)
	}
	if !bounded {
		tokens, estimated = m.Count(req)
	}
	m.mu.Lock()
	m.state.ContextWindow, m.state.HardTokens, m.state.SoftTokens = window, hard, soft
	m.state.LastTokens, m.state.LastEstimated = tokens, estimated
	m.mu.Unlock()

	msgs := req.Messages
	if !req.Force && tokens < soft {
		m.setLastCount(len(msgs))
		return msgs, nil
	}
	est := m.Estimator(req.Model)
	start := func(trigger string, n int) bool {
		if obs.Start == nil {
			return true
		}
		return obs.Start(Start{Trigger: trigger, Tokens: n, Estimated: estimated, ContextWindow: window, ThresholdPct: m.cfg.ThresholdPct, ThresholdTokens: hard, OutboundMessages: len(msgs)})
	}
	done := func(d Done) {
		m.record(d.Method, d.TokensAfter)
		if obs.Done != nil {
			obs.Done(d)
		}
	}

	// Soft stage: no model call.
	if !m.cfg.NoElide || !m.cfg.NoDedup {
		out, changed := elideAndDedup(msgs, est, m.cfg.KeepRecentPct, !m.cfg.NoElide, !m.cfg.NoDedup)
		if changed > 0 {
			if !start("soft", tokens) {
				return nil, context.Canceled
			}
			after := est.Messages(out)
			done(Done{Method: "elided", MessagesBefore: len(msgs), MessagesAfter: len(out), TokensBefore: tokens, TokensAfter: after})
			m.mu.Lock()
			m.state.Elisions += changed
			m.mu.Unlock()
			msgs, tokens, estimated = out, after, true
		}
	}
	if !req.Force && tokens < hard {
		m.setLastCount(len(msgs))
		return msgs, nil
	}

	trigger := "threshold"
	if req.Force {
		trigger = "overflow"
	}
	m.mu.Lock()
	summarisedNow := m.state.LastSummaryTask == req.TaskID && m.state.LastSummaryIteration == req.Iteration && req.TaskID != ""
	m.mu.Unlock()
	if !summarisedNow {
		if !start(trigger, tokens) {
			return nil, context.Canceled
		}
		out, info, err := m.summarise(ctx, req, msgs, est, obs)
		switch {
		case errors.Is(err, errNothingToSummarise):
			// fall through to trimming
		case err != nil:
			return nil, err
		default:
			after := est.Messages(out)
			info.MessagesBefore, info.MessagesAfter, info.TokensBefore, info.TokensAfter = len(msgs), len(out), tokens, after
			done(info)
			m.mu.Lock()
			m.state.Summaries++
			m.state.LastSummaryTask, m.state.LastSummaryIteration = req.TaskID, req.Iteration
			m.mu.Unlock()
			msgs, tokens = out, after
			if tokens < soft {
				m.setLastCount(len(msgs))
				return msgs, nil
			}
		}
	} else if !start(trigger, tokens) {
		return nil, context.Canceled
	}

	// Not enough (or a summary already ran in this iteration): trim.
	out := trim(msgs, est, soft)
	after := est.Messages(out)
	done(Done{Method: "trimmed", MessagesBefore: len(msgs), MessagesAfter: len(out), TokensBefore: tokens, TokensAfter: after})
	m.mu.Lock()
	m.state.Trims++
	m.mu.Unlock()
	m.setLastCount(len(out))
	return out, nil
}

func (m *Manager) setLastCount(n int) {
	m.mu.Lock()
	m.lastCount = n
	m.mu.Unlock()
}

func (m *Manager) record(method string, tokens int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state.Compactions++
	m.state.LastMethod = method
	m.state.LastAt = time.Now().UTC()
	m.state.LastTokens = tokens
}
