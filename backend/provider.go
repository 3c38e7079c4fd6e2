package backend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/openai"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/store"
)

// Provider kinds reported by initialize.
const (
	ProviderScripted = "scripted" // ZQAGENT_SCRIPT names a script file
	ProviderOpenAI   = "openai"   // an API key is configured
	ProviderDemo     = "demo"     // no key: the built-in demo script
)

// DefaultProfile is the provider profile of a session that names none. It
// exists implicitly, configured from the environment (OPENAI_BASE_URL,
// OPENAI_MODEL, OPENAI_FORCE_API_MODE), until providers.set stores one.
const DefaultProfile = "openai"

// ScriptEnv names the environment variable of a script file that replaces
// the model (end-to-end tests, UI development).
const ScriptEnv = "ZQAGENT_SCRIPT"

// DemoNotice is the notice of the demo provider, in English; initialize
// says it in the default language (engine.PromptSet.DemoNotice).
var DemoNotice = engine.Prompts("en").DemoNotice

// providerSource chooses and builds model providers: ZQAGENT_SCRIPT → the
// script for every session; else one OpenAI-compatible provider per
// profile, built from the profile on first use and rebuilt when the profile
// changed. The default profile without a configured key gets the demo
// script with a notice. Keys are never held here: each provider asks for its
// profile's key at every request, and the keyring answers from its cache
// (the keychain is read once per change, each read bounded by
// keychain.LookupTimeout; see keyFunc).
type providerSource struct {
	apiKey  func(ctx context.Context) (string, error) // the default profile's key
	keyring *keychain.Keyring                         // nil: keys come from the environment
	fixed   llm.Provider                              // Options.Provider: never re-chosen
	logDir  string                                    // Options.AuditLogDir

	mu     sync.Mutex // guards the fields below
	kind   string     // kind of the default profile's provider ("" before it was chosen)
	script llm.Provider
	built  map[string]builtProvider // by profile name
}

// builtProvider is a profile's provider and the profile it was built from.
type builtProvider struct {
	prov *openai.Provider
	prof store.ProviderProfile
}

func newProviderSource(opts Options) *providerSource {
	p := &providerSource{keyring: opts.Keyring, fixed: opts.Provider, built: map[string]builtProvider{}, logDir: opts.AuditLogDir}
	p.apiKey = opts.APIKey
	if p.apiKey == nil {
		p.apiKey = p.keyFunc(DefaultProfile)
	}
	if p.fixed != nil {
		p.kind = ProviderScripted
	}
	return p
}

// keyFunc returns the key reader of a profile: the keychain's key, else the
// key given at start or the profile's environment variable
// (keychain.EnvVar). "" when none is configured. A keychain that cannot be
// used or did not answer within keychain.LookupTimeout, with no other key,
// is an error naming the remedy (keychain.ErrUnavailable, -32005; on a turn
// an error event with error_type "config").
func (p *providerSource) keyFunc(profile string) func(ctx context.Context) (string, error) {
	if profile == DefaultProfile && p.apiKey != nil {
		return p.apiKey
	}
	kr := p.keyring
	return func(ctx context.Context) (string, error) {
		if kr == nil {
			return os.Getenv(keychain.EnvVar(profile)), nil
		}
		k, err := kr.Resolve(ctx, profile)
		if errors.Is(err, keychain.ErrNotFound) {
			return "", nil
		}
		return k, err
	}
}

// describe reports the default profile's provider kind and notice, in
// lang, without building it.
func (p *providerSource) describe(ctx context.Context, lang string) (kind, notice string) {
	p.mu.Lock()
	kind = p.kind
	p.mu.Unlock()
	if kind == "" {
		kind = p.choose(ctx)
	}
	if kind == ProviderDemo {
		notice = engine.Prompts(lang).DemoNotice
	}
	return kind, notice
}

// chooseTimeout bounds choose's key lookup; the keyring's own bound
// (keychain.LookupTimeout) is shorter.
const chooseTimeout = keychain.LookupTimeout + time.Second

// choose decides the kind of the default profile's provider: openai when a
// key is configured, or when the keychain did not answer (the key may be
// there: the model requests then report the silent keychain instead of a
// demo answering), else demo.
func (p *providerSource) choose(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, chooseTimeout) // a hung keychain must not hang initialize
	defer cancel()
	if os.Getenv(ScriptEnv) != "" {
		return ProviderScripted
	}
	k, err := p.apiKey(ctx)
	switch {
	case err == nil && strings.TrimSpace(k) != "":
		return ProviderOpenAI
	case errors.Is(err, keychain.ErrNoAnswer), errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return ProviderOpenAI
	}
	return ProviderDemo
}

// implicitProfile is the default profile when none is stored: the
// environment configures it.
func implicitProfile() store.ProviderProfile {
	return store.ProviderProfile{
		Name:         DefaultProfile,
		BaseURL:      firstNonEmpty(os.Getenv("OPENAI_BASE_URL"), openai.DefaultBaseURL),
		APIMode:      firstNonEmpty(os.Getenv("OPENAI_FORCE_API_MODE"), openai.ModeAuto),
		DefaultModel: firstNonEmpty(os.Getenv("ZQAGENT_MODEL"), os.Getenv("OPENAI_MODEL")),
	}
}

// provider returns the provider and the model a session of profile prof
// uses (the session's own model, else the profile's default); the demo
// speaks lang, the session's language.
func (p *providerSource) provider(ctx context.Context, prof store.ProviderProfile, sessionModel, lang string) (llm.Provider, string, error) {
	if p.fixed != nil {
		return p.fixed, firstNonEmpty(sessionModel, "scripted"), nil
	}
	if path := os.Getenv(ScriptEnv); path != "" {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.script == nil {
			sp, err := scripted.Load(path)
			if err != nil {
				return nil, "", fmt.Errorf("%w: %s=%s: %w", ErrConfig, ScriptEnv, path, err)
			}
			p.script = sp
		}
		p.kind = ProviderScripted
		return p.script, firstNonEmpty(sessionModel, "scripted"), nil
	}
	if prof.Name == DefaultProfile && p.choose(ctx) == ProviderDemo {
		p.mu.Lock()
		p.kind = ProviderDemo
		p.mu.Unlock()
		return scripted.DemoIn(lang), "demo", nil
	}
	prov := p.openaiFor(prof)
	if prof.Name == DefaultProfile {
		p.mu.Lock()
		p.kind = ProviderOpenAI
		p.mu.Unlock()
	}
	model := firstNonEmpty(sessionModel, prof.DefaultModel)
	if model == "" {
		return nil, "", fmt.Errorf("%w: %w: pass model in session.create, set the default model of provider profile %q, or set OPENAI_MODEL", ErrConfig, llm.ErrNoModel, prof.Name)
	}
	return prov, model, nil
}

// openaiFor returns the profile's OpenAI-compatible provider, built on first
// use and rebuilt when the profile changed.
func (p *providerSource) openaiFor(prof store.ProviderProfile) *openai.Provider {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.built[prof.Name]; ok && sameProfile(b.prof, prof) {
		return b.prov
	} else if ok {
		b.prov.CloseIdleConnections()
	}
	// The reliability settings (OPENAI_MAX_RETRIES, OPENAI_TIMEOUT_MS,
	// OPENAI_STREAM_IDLE_MS, NETWORK_RETRY_*) come from the environment,
	// each overridden by the profile's retry member when set; the profile
	// sets the endpoint, mode, headers and proxy.
	o := withRetry(openai.FromEnv(), prof.Retry)
	o.APIKey = p.keyFunc(prof.Name)
	o.BaseURL = prof.BaseURL
	o.APIMode = prof.APIMode
	o.Headers = maps.Clone(prof.Headers)
	if prof.Proxy != "" {
		o.Proxy = prof.Proxy
	}
	o.LogDir = p.logDir
	prov := openai.New(o)
	p.built[prof.Name] = builtProvider{prov: prov, prof: prof}
	return prov
}

// withRetry applies a profile's retry overrides to o.
func withRetry(o openai.Options, r store.RetrySettings) openai.Options {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	if r.MaxRetries != nil {
		o.MaxRetries = *r.MaxRetries
	}
	if r.TimeoutMS != nil {
		o.Timeout = ms(*r.TimeoutMS)
	}
	if r.StreamIdleMS != nil {
		o.StreamIdle = ms(*r.StreamIdleMS) // 0: the default
	}
	if r.NetworkRetryMax != nil {
		o.NetworkRetryMax = *r.NetworkRetryMax
	}
	if r.NetworkRetryBaseMS != nil {
		o.NetworkRetryBase = ms(*r.NetworkRetryBaseMS) // 0: the default
	}
	return o
}

// sameProfile reports whether two profiles build the same provider.
func sameProfile(a, b store.ProviderProfile) bool {
	return a.BaseURL == b.BaseURL && a.APIMode == b.APIMode && a.Proxy == b.Proxy && maps.Equal(a.Headers, b.Headers) &&
		reflect.DeepEqual(a.Retry, b.Retry)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// reset forgets the chosen providers, so that the next engine built chooses
// again (after a key or a profile was set or deleted). Loaded engines keep
// theirs until they are rebuilt; ResetProvider also releases the idle ones.
func (p *providerSource) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fixed != nil {
		return
	}
	for _, b := range p.built {
		b.prov.CloseIdleConnections()
	}
	p.kind, p.script, p.built = "", nil, map[string]builtProvider{}
}

// ResetProvider makes sessions choose their model provider again (call it
// after an API key or a provider profile changed): idle engines are
// released now, busy ones are rebuilt before their next turn.
func (b *Backend) ResetProvider() {
	b.providers.reset()
	b.reloadEngines("")
}
