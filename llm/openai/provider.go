package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/zqagent/sidecar/llm"
)

// maxEmptyLines is how many non-data SSE lines may come in a row.
const maxEmptyLines = 1 << 20

// Provider streams turns from an OpenAI-compatible endpoint.
type Provider struct {
	opts      Options
	client    *http.Client // wraps opts.HTTPClient; nil when clientErr is set
	clientErr error        // a bad proxy or base URL, reported on every request
	env       func(string) string

	mu       sync.Mutex      // guards chatOnly
	chatOnly map[string]bool // models whose endpoint has no Responses API

	wire wireCache // encoded messages of the conversations streaming now
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider. Zero fields of opts take the environment's values
// and the documented defaults; configuration errors (bad proxy or base URL)
// are reported by each request as llm.KindConfig errors.
func New(opts Options) *Provider {
	p := &Provider{env: os.Getenv, chatOnly: make(map[string]bool)}
	p.opts = opts.withDefaults(p.env)
	if u, err := url.Parse(p.opts.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.clientErr = fmt.Errorf("%w: %q", ErrBadBaseURL, p.opts.BaseURL)
		return p
	}
	p.client, p.clientErr = newHTTPClient(p.opts)
	return p
}

// CloseIdleConnections closes the kept-alive connections of the provider's
// HTTP client; call it when the provider is dropped.
func (p *Provider) CloseIdleConnections() {
	if p.client != nil {
		p.client.CloseIdleConnections()
	}
}

// NamesSessions implements llm.SessionNamer: a real model names the
// sessions it answers.
func (p *Provider) NamesSessions() bool { return true }

// APIMode returns the configured mode: auto, responses or chat.
func (p *Provider) APIMode() string { return p.opts.APIMode }

// BaseURL returns the endpoint.
func (p *Provider) BaseURL() string { return p.opts.BaseURL }

// UsesChat reports whether the Responses API is known to be unsupported for
// model, so that requests go straight to Chat Completions.
func (p *Provider) UsesChat(model string) bool {
	if p.opts.APIMode != ModeAuto {
		return p.opts.APIMode == ModeChat
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chatOnly[model]
}

func (p *Provider) rememberChat(model string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chatOnly[model] = true
}

// isDeepSeek reports whether the target is DeepSeek (model or base URL).
func (p *Provider) isDeepSeek(model string) bool {
	return strings.Contains(strings.ToLower(model), "deepseek") ||
		strings.Contains(strings.ToLower(p.opts.BaseURL), "deepseek")
}

// prepare checks the configuration and reads the key for one request.
func (p *Provider) prepare(ctx context.Context, model string, needModel bool) (*goopenai.Client, string, error) {
	if p.clientErr != nil {
		return nil, "", &llm.Error{Kind: llm.KindConfig, Msg: p.clientErr.Error(), Err: p.clientErr}
	}
	if needModel && strings.TrimSpace(model) == "" {
		return nil, "", &llm.Error{Kind: llm.KindConfig, Msg: "no model configured: set OPENAI_MODEL or choose a model", Err: llm.ErrNoModel}
	}
	var key string
	if p.opts.APIKey != nil {
		k, err := p.opts.APIKey(ctx)
		if err != nil {
			return nil, "", &llm.Error{Kind: llm.KindConfig, Msg: "read API key: " + err.Error(), Err: errors.Join(llm.ErrNoAPIKey, err)}
		}
		key = k
	} else {
		key = p.env("OPENAI_API_KEY")
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, "", &llm.Error{Kind: llm.KindConfig, Msg: "no API key: set OPENAI_API_KEY or store one with keys.set", Err: llm.ErrNoAPIKey}
	}
	cfg := goopenai.DefaultConfig(key)
	cfg.BaseURL = p.opts.BaseURL
	cfg.HTTPClient = p.client
	// Gateways send keep-alive comments (": PROCESSING") while a model thinks;
	// the SDK's default of 300 such lines in a row would abort a long think.
	// Real stalls are the idle watchdog's business.
	cfg.EmptyMessagesLimit = maxEmptyLines
	return goopenai.NewClientWithConfig(cfg), key, nil
}

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		out := &collector{yield: yield}
		rec := p.newAudit("stream", req.ReqID, req.Model)
		key, err := p.stream(withRateSink(ctx, &out.rates), req, out, rec)
		var resp *auditResponse
		if err == nil {
			resp = &auditResponse{Content: out.content.String(), Reasoning: out.reasoning.String(),
				ToolCalls: out.calls, Usage: out.usage, FinishReason: out.finish}
		}
		_ = rec.write(p.opts.LogDir, resp, err, key) // the audit log never fails a turn
		if out.stopped || errors.Is(err, errStopped) {
			return
		}
		if err != nil {
			// A refused request (429) says best when the budget is back.
			if rl := out.rates.get(); rl != nil && !yield(llm.Chunk{RateLimits: rl}, nil) {
				return
			}
			yield(llm.Chunk{}, err)
			return
		}
		yield(llm.Chunk{ToolCalls: out.calls, Usage: out.usage, FinishReason: out.finish, RateLimits: out.rates.get()}, nil)
	}
}

func (p *Provider) stream(ctx context.Context, req llm.Request, out *collector, rec *auditRecord) (string, error) {
	client, key, err := p.prepare(ctx, req.Model, true)
	if err != nil {
		return "", err
	}
	deepseek := p.isDeepSeek(req.Model)
	netTries, statusTries := 0, 0
	for {
		err := p.attempt(ctx, client, req, deepseek, out, rec)
		if err == nil || errors.Is(err, errStopped) {
			return key, err
		}
		if ctx.Err() != nil {
			return key, ctx.Err()
		}
		if !out.emitted {
			switch {
			case isNetwork(err) && !errors.Is(err, llm.ErrStreamIdle) && netTries < p.opts.NetworkRetryMax:
				netTries++
				wait := p.opts.NetworkRetryBase << (netTries - 1)
				info := llm.RetryInfo{Attempt: netTries, Max: p.opts.NetworkRetryMax,
					Reason: redact(truncate(err.Error(), 200), key), WaitMS: wait.Milliseconds()}
				if !out.announce(info) {
					return key, errStopped
				}
				if err := sleep(ctx, wait); err != nil {
					return key, err
				}
				out.reset()
				continue
			case retryableStatus(err) && statusTries < p.opts.MaxRetries:
				statusTries++
				wait := p.opts.NetworkRetryBase << (statusTries - 1)
				info := llm.RetryInfo{Attempt: statusTries, Max: p.opts.MaxRetries,
					Reason: redact(truncate(classify(err, key).Error(), 200), key), WaitMS: wait.Milliseconds()}
				if !out.announce(info) {
					return key, errStopped
				}
				if err := sleep(ctx, wait); err != nil {
					return key, err
				}
				out.reset()
				continue
			}
		}
		return key, classify(err, key)
	}
}

// attempt sends the request once: to the Responses API unless the mode or
// the per-model cache says chat, falling back by seed §10.1.
func (p *Provider) attempt(ctx context.Context, client *goopenai.Client, req llm.Request, deepseek bool, out *collector, rec *auditRecord) error {
	if p.UsesChat(req.Model) {
		return p.runChat(ctx, client, req, deepseek, out, rec)
	}
	wire, body, err := p.responsesBody(req, deepseek)
	if err != nil {
		return err
	}
	rec.attempt(ModeResponses, audited(wire, body))
	err = p.guard(withPrebuilt(ctx, body), func(ctx context.Context) error { return streamResponses(ctx, client, wire, out) })
	if err == nil || out.emitted || out.stopped || ctx.Err() != nil {
		rec.failed(ModeResponses, err, "")
		return err
	}
	if p.opts.APIMode == ModeResponses {
		rec.failed(ModeResponses, err, "")
		if fallbackOf(err) == fallbackAlways {
			f, _ := failureOf(err)
			return &llm.Error{Kind: llm.KindUnsupported, Status: f.status, Err: err,
				Msg: "the endpoint has no Responses API (API mode forced to responses): " + truncate(f.message, maxErrMsg)}
		}
		return err
	}
	switch fallbackOf(err) {
	case fallbackAlways:
		rec.failed(ModeResponses, err, "endpoint unsupported: chat from now on for this model")
		p.rememberChat(req.Model)
	case fallbackThisTime:
		rec.failed(ModeResponses, err, "incompatible parameters: chat this time")
	default:
		rec.failed(ModeResponses, err, "")
		return err
	}
	out.reset()
	return p.runChat(ctx, client, req, deepseek, out, rec)
}

func (p *Provider) runChat(ctx context.Context, client *goopenai.Client, req llm.Request, deepseek bool, out *collector, rec *auditRecord) error {
	wire, body, err := p.chatBody(req, deepseek)
	if err != nil {
		return err
	}
	rec.attempt(ModeChat, audited(wire, body))
	err = p.guard(withPrebuilt(ctx, body), func(ctx context.Context) error { return streamChat(ctx, client, wire, out) })
	rec.failed(ModeChat, err, "")
	return err
}

// audited is what the audit log records of a request: the body sent.
func audited(wire any, body []byte) any {
	if body != nil {
		return json.RawMessage(body)
	}
	return wire
}

// guard runs one HTTP exchange under the watchdog. A watchdog abort is
// returned as its cause (ErrTimeout or llm.ErrStreamIdle).
func (p *Provider) guard(ctx context.Context, run func(context.Context) error) error {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	first := p.opts.Timeout
	if first <= 0 {
		first = p.opts.StreamIdle
	}
	wd := newWatchdog(first, p.opts.StreamIdle, cancel)
	defer wd.stop()
	err := run(context.WithValue(actx, watchdogKey{}, wd))
	if err != nil && ctx.Err() == nil {
		if cause := context.Cause(actx); errors.Is(cause, llm.ErrStreamIdle) || errors.Is(cause, ErrTimeout) {
			return cause
		}
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Chat implements llm.Provider: one small non-streamed call (session names,
// compaction summaries) through the API the streamed requests use: the
// Responses API unless the mode or the per-model cache says chat, falling
// back to Chat Completions by the same rules (seed §10.1). Transient network
// errors, 429 and 5xx are retried silently.
func (p *Provider) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	client, key, err := p.prepare(ctx, req.Model, true)
	if err != nil {
		return llm.ChatResponse{}, err
	}
	deepseek := p.isDeepSeek(req.Model)
	rec := p.newAudit("chat", req.ReqID, req.Model)
	var rates rateSink
	resp, err := p.chatOnce(withRateSink(ctx, &rates), client, req, deepseek, rec)
	resp.RateLimits = rates.get()
	if err != nil && ctx.Err() == nil {
		err = classify(err, key)
	}
	var ar *auditResponse
	if err == nil {
		ar = &auditResponse{Content: resp.Text, Usage: resp.Usage, FinishReason: "stop"}
	}
	_ = rec.write(p.opts.LogDir, ar, err, key)
	if err != nil {
		return llm.ChatResponse{RateLimits: resp.RateLimits}, err
	}
	return resp, nil
}

// chatOnce picks the API for Chat; errors are returned unclassified.
func (p *Provider) chatOnce(ctx context.Context, client *goopenai.Client, req llm.ChatRequest, deepseek bool, rec *auditRecord) (llm.ChatResponse, error) {
	if !p.UsesChat(req.Model) {
		wire := responsesRequest(llm.Request{Model: req.Model, Messages: req.Messages, ReasoningEffort: req.ReasoningEffort, MaxTokens: req.MaxTokens}, deepseek)
		wire.Tools = nil // no tools, not even DeepSeek's web search
		rec.attempt(ModeResponses, wire)
		out, err := p.retried(ctx, func(ctx context.Context) (llm.ChatResponse, error) {
			resp, err := client.CreateResponse(ctx, wire)
			if err != nil {
				return llm.ChatResponse{}, err
			}
			out := llm.ChatResponse{Text: resp.GetOutputText()}
			if resp.Usage != nil {
				out.Usage = usageOfResponse(resp.Usage)
			}
			return out, nil
		})
		if err == nil || ctx.Err() != nil || p.opts.APIMode == ModeResponses {
			rec.failed(ModeResponses, err, "")
			return out, err
		}
		switch fallbackOf(err) {
		case fallbackAlways:
			rec.failed(ModeResponses, err, "endpoint unsupported: chat from now on for this model")
			p.rememberChat(req.Model)
		case fallbackThisTime:
			rec.failed(ModeResponses, err, "incompatible parameters: chat this time")
		default:
			rec.failed(ModeResponses, err, "")
			return llm.ChatResponse{}, err
		}
	}
	wire := goopenai.ChatCompletionRequest{Model: req.Model, Messages: chatMessages(req.Messages, deepseek)}
	if req.ReasoningEffort != "" && !deepseek {
		wire.ReasoningEffort = req.ReasoningEffort
	}
	setMaxTokens(&wire, req.MaxTokens, deepseek)
	rec.attempt(ModeChat, wire)
	out, err := p.retried(ctx, func(ctx context.Context) (llm.ChatResponse, error) {
		resp, err := client.CreateChatCompletion(ctx, wire)
		if err != nil {
			return llm.ChatResponse{}, err
		}
		var out llm.ChatResponse
		if len(resp.Choices) > 0 {
			out.Text = resp.Choices[0].Message.Content
		}
		if resp.Usage != (goopenai.Usage{}) {
			out.Usage = usageOfChat(chatUsageOf(resp.Usage))
		}
		return out, nil
	})
	rec.failed(ModeChat, err, "")
	return out, err
}

// retried runs one non-streamed exchange under the watchdog, retrying
// transient network errors, 429 and 5xx.
func (p *Provider) retried(ctx context.Context, call func(context.Context) (llm.ChatResponse, error)) (llm.ChatResponse, error) {
	for try := 0; ; try++ {
		var out llm.ChatResponse
		err := p.guard(ctx, func(ctx context.Context) error {
			var err error
			out, err = call(ctx)
			return err
		})
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil {
			return llm.ChatResponse{}, ctx.Err()
		}
		if !(isNetwork(err) && try < p.opts.NetworkRetryMax) && !(retryableStatus(err) && try < p.opts.MaxRetries) {
			return llm.ChatResponse{}, err
		}
		if err := sleep(ctx, p.opts.NetworkRetryBase<<try); err != nil {
			return llm.ChatResponse{}, err
		}
	}
}

// Models lists the model ids the endpoint offers (GET /models), sorted.
func (p *Provider) Models(ctx context.Context) ([]string, error) {
	client, key, err := p.prepare(ctx, "", false)
	if err != nil {
		return nil, err
	}
	var list goopenai.ModelsList
	err = p.guard(ctx, func(ctx context.Context) error {
		var err error
		list, err = client.ListModels(ctx)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, classify(err, key)
	}
	ids := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}
