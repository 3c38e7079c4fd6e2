package ipc

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/zqagent/sidecar/engine/llm"
	"github.com/zqagent/sidecar/engine/llm/openai"
	"github.com/zqagent/sidecar/engine/llm/scripted"
)

// Provider kinds reported by initialize.
const (
	ProviderScripted = "scripted" // ZQAGENT_SCRIPT names a script file
	ProviderOpenAI   = "openai"   // an API key is configured
	ProviderDemo     = "demo"     // no key: the built-in demo script
)

// ScriptEnv names the environment variable of a script file that replaces
// the model (end-to-end tests, UI development).
const ScriptEnv = "ZQAGENT_SCRIPT"

// DemoNotice is the notice of the demo provider.
const DemoNotice = "no API key is configured: turns are answered by the built-in demo script, not a model (set a key with keys.set or OPENAI_API_KEY)"

// providerSource chooses and builds the model provider once, on first use:
// ZQAGENT_SCRIPT → the script; else a configured key → OpenAI-compatible;
// else the demo script with a notice.
type providerSource struct {
	apiKey func(ctx context.Context) (string, error)

	fixed bool // Options.Provider was given: never re-chosen

	mu    sync.Mutex // guards the fields below
	prov  llm.Provider
	kind  string
	model string // default model of this provider
}

func newProviderSource(opts Options) *providerSource {
	key := opts.APIKey
	if key == nil {
		key = func(context.Context) (string, error) { return os.Getenv("OPENAI_API_KEY"), nil }
	}
	p := &providerSource{apiKey: key}
	if opts.Provider != nil {
		p.prov, p.kind, p.model, p.fixed = opts.Provider, ProviderScripted, "scripted", true
	}
	return p
}

// describe reports the provider kind and notice without building it.
func (p *providerSource) describe(ctx context.Context) (kind, notice string) {
	p.mu.Lock()
	kind = p.kind
	p.mu.Unlock()
	if kind == "" {
		kind = p.choose(ctx)
	}
	if kind == ProviderDemo {
		notice = DemoNotice
	}
	return kind, notice
}

func (p *providerSource) choose(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second) // a hung keychain must not hang initialize
	defer cancel()
	if os.Getenv(ScriptEnv) != "" {
		return ProviderScripted
	}
	if k, err := p.apiKey(ctx); err == nil && strings.TrimSpace(k) != "" {
		return ProviderOpenAI
	}
	return ProviderDemo
}

// provider returns the provider and the model a session uses (its own model,
// else the provider's default).
func (p *providerSource) provider(ctx context.Context, sessionModel string) (llm.Provider, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.prov == nil {
		kind := p.choose(ctx)
		switch kind {
		case ProviderScripted:
			path := os.Getenv(ScriptEnv)
			sp, err := scripted.Load(path)
			if err != nil {
				return nil, "", fmt.Errorf("%w: %s=%s: %w", ErrConfig, ScriptEnv, path, err)
			}
			p.prov, p.model = sp, "scripted"
		case ProviderOpenAI:
			p.prov = openai.New(openai.Options{APIKey: p.apiKey})
			p.model = firstNonEmpty(os.Getenv("ZQAGENT_MODEL"), os.Getenv("OPENAI_MODEL"))
		default:
			p.prov, p.model = scripted.Demo(), "demo"
		}
		p.kind = kind
	}
	model := firstNonEmpty(sessionModel, p.model)
	if model == "" {
		return nil, "", fmt.Errorf("%w: %w: pass model in session.create or set OPENAI_MODEL", ErrConfig, llm.ErrNoModel)
	}
	return p.prov, model, nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// kindLoaded is the kind of the provider built so far ("" before the first
// turn).
func (p *providerSource) kindLoaded() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kind
}

// reset forgets the chosen provider, so that the next engine built chooses
// again (after a key was set or deleted). Loaded engines keep theirs until
// they are rebuilt; ResetProvider also releases the idle ones.
func (p *providerSource) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fixed {
		return
	}
	p.prov, p.kind, p.model = nil, "", ""
}

// ResetProvider makes sessions choose their model provider again (call it
// after an API key or a provider profile changed): idle engines are
// released now, busy ones are rebuilt before their next turn.
func (s *Server) ResetProvider() {
	s.providers.reset()
	s.mu.Lock()
	hosts := make([]*sessionHost, 0, len(s.sessions))
	for _, h := range s.sessions {
		hosts = append(hosts, h)
	}
	s.mu.Unlock()
	for _, h := range hosts {
		if !h.unloadIfIdle() {
			h.mu.Lock()
			if h.eng != nil {
				h.reload = true
			}
			h.mu.Unlock()
		}
	}
}
