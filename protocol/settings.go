package protocol

import "time"

// KeyStatus is a provider's API key status (never the key).
type KeyStatus struct {
	Provider   string `json:"provider"`
	Configured bool   `json:"configured"`
	// Source is keychain, stdin, env, or "" when none is configured.
	Source string `json:"source"`
	// EnvVar is the environment variable consulted for the provider.
	EnvVar string `json:"envVar"`
	// Error says why the keychain could not be read.
	Error string `json:"error,omitempty"`
}

// KeysSetParams are the params of keys.set.
type KeysSetParams struct {
	// Provider is a provider profile name.
	Provider string `json:"provider" rpc:"required"`
	// APIKey is non-empty, without surrounding whitespace or control
	// characters, at most 2048 bytes.
	APIKey string `json:"apiKey" rpc:"required"`
}

// KeysProviderParams are the params of keys.delete.
type KeysProviderParams struct {
	Provider string `json:"provider" rpc:"required"`
}

// KeysStatusResult is the result of keys.status.
type KeysStatusResult struct {
	Keys []KeyStatus `json:"keys"`
}

// APIMode is how a provider profile is asked: auto, responses or chat.
type APIMode string

// The API modes.
const (
	APIAuto      APIMode = "auto"
	APIResponses APIMode = "responses"
	APIChat      APIMode = "chat"
)

// APIModes lists the modes.
var APIModes = []APIMode{APIAuto, APIResponses, APIChat}

// Provider is a provider profile (providers.list, providers.set).
type Provider struct {
	Name          string            `json:"name"`
	BaseURL       string            `json:"baseUrl"`
	APIMode       APIMode           `json:"apiMode"`
	DefaultModel  string            `json:"defaultModel"`
	Headers       map[string]string `json:"headers"`
	Proxy         string            `json:"proxy"`
	ContextWindow int               `json:"contextWindow"`
	KeyConfigured bool              `json:"keyConfigured"`
	// KeySource is keychain, stdin, env, or "".
	KeySource string `json:"keySource"`
	// Retry is the profile's retry and timeout overrides ({} when none).
	Retry RetrySettings `json:"retry"`
	// Prices are the profile's own prices per model id; they replace the
	// default table's for its sessions (absent when none).
	Prices map[string]ModelPrice `json:"prices,omitempty"`
	// Implicit is true for the openai profile while none is stored.
	Implicit bool `json:"implicit"`
}

// RetrySettings are a provider profile's retry and timeout overrides; an
// absent member follows the environment (OPENAI_MAX_RETRIES,
// OPENAI_TIMEOUT_MS, OPENAI_STREAM_IDLE_MS, NETWORK_RETRY_MAX,
// NETWORK_RETRY_BASE_MS). Counts are 0..20, times 0..3,600,000 ms (0 = the
// default). providers.set decodes it strictly: an unknown member is -32602.
type RetrySettings struct {
	// MaxRetries is how often a 429 or 5xx answer is retried.
	MaxRetries *int `json:"maxRetries,omitempty" jsonschema:"minimum=0,maximum=20"`
	// TimeoutMS bounds one model request.
	TimeoutMS *int64 `json:"timeoutMs,omitempty" jsonschema:"minimum=0,maximum=3600000"`
	// StreamIdleMS is the idle watchdog: a stream with no byte for this
	// long fails with a retriable network error.
	StreamIdleMS *int64 `json:"streamIdleMs,omitempty" jsonschema:"minimum=0,maximum=3600000"`
	// NetworkRetryMax is how often a network error is retried.
	NetworkRetryMax *int `json:"networkRetryMax,omitempty" jsonschema:"minimum=0,maximum=20"`
	// NetworkRetryBaseMS is the first backoff of network retries (doubled
	// each time).
	NetworkRetryBaseMS *int64 `json:"networkRetryBaseMs,omitempty" jsonschema:"minimum=0,maximum=3600000"`
}

// ProvidersListResult is the result of providers.list.
type ProvidersListResult struct {
	Providers []Provider `json:"providers"`
}

// ProvidersSetParams are the params of providers.set; absent members keep
// their current values.
type ProvidersSetParams struct {
	Name          string             `json:"name" rpc:"required"`
	BaseURL       *string            `json:"baseUrl,omitempty"`
	APIMode       *APIMode           `json:"apiMode,omitempty"`
	DefaultModel  *string            `json:"defaultModel,omitempty"`
	Headers       *map[string]string `json:"headers,omitempty"`
	Proxy         *string            `json:"proxy,omitempty"`
	ContextWindow *int               `json:"contextWindow,omitempty"`
	// Retry replaces the profile's retry overrides as a whole ({} clears
	// them).
	Retry *RetrySettings `json:"retry,omitempty"`
	// Prices replace the profile's prices per model id as a whole ({}
	// clears them).
	Prices *map[string]ModelPrice `json:"prices,omitempty"`
}

// ModelPrice is a model's price in USD per 1M tokens (0 to 10,000 each).
type ModelPrice struct {
	Input float64 `json:"input" jsonschema:"minimum=0,maximum=10000"`
	// CachedInput prices the cached part of the input; absent: the same as
	// Input (no discount).
	CachedInput *float64 `json:"cachedInput,omitempty" jsonschema:"minimum=0,maximum=10000"`
	Output      float64  `json:"output" jsonschema:"minimum=0,maximum=10000"`
}

// NameParams are the params of methods that name one thing
// (providers.delete, agents.remove).
type NameParams struct {
	Name string `json:"name" rpc:"required"`
}

// ModelsListParams are the params of models.list.
type ModelsListParams struct {
	// Provider defaults to openai.
	Provider string `json:"provider,omitempty"`
}

// ModelsListResult is the result of models.list.
type ModelsListResult struct {
	Provider string   `json:"provider"`
	Models   []string `json:"models"`
	Cached   bool     `json:"cached"`
}

// SearchKind is the web_search backend: none, searxng or brave.
type SearchKind string

// The search backends.
const (
	SearchNone    SearchKind = "none"
	SearchSearXNG SearchKind = "searxng"
	SearchBrave   SearchKind = "brave"
)

// SearchKinds lists the backends.
var SearchKinds = []SearchKind{SearchNone, SearchSearXNG, SearchBrave}

// SearchConfig is the result of search.get and search.set.
type SearchConfig struct {
	// Kind is a SearchKind (a string: the sidecar compares it with its own
	// names).
	Kind    string `json:"kind" enum:"SearchKind"`
	BaseURL string `json:"baseUrl,omitempty"`
	// KeyConfigured says, for brave, whether its API key is stored.
	KeyConfigured bool `json:"keyConfigured"`
}

// SearchSetParams are the params of search.set.
type SearchSetParams struct {
	Kind    SearchKind `json:"kind" rpc:"required"`
	BaseURL string     `json:"baseUrl,omitempty"`
}

// Agent is an agent (a role: a name, a prompt, an optional model).
type Agent struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Prompt is "" for builtins (the engine's prompt).
	Prompt  string `json:"prompt"`
	Model   string `json:"model"`
	Builtin bool   `json:"builtin"`
	// UpdatedAt is absent for builtins.
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// AgentsListResult is the result of agents.list (builtins first).
type AgentsListResult struct {
	Agents []Agent `json:"agents"`
}

// AgentsAddParams are the params of agents.add.
type AgentsAddParams struct {
	Name        string `json:"name" rpc:"required"`
	Description string `json:"description,omitempty"`
	Prompt      string `json:"prompt" rpc:"required"`
	Model       string `json:"model,omitempty"`
}

// AgentsUpdateParams are the params of agents.update; absent members are
// unchanged.
type AgentsUpdateParams struct {
	Name        string  `json:"name" rpc:"required"`
	Description *string `json:"description,omitempty"`
	Prompt      *string `json:"prompt,omitempty"`
	Model       *string `json:"model,omitempty"`
}

// RemovedResult is the result of agents.remove and mcp.remove.
type RemovedResult struct {
	Removed bool `json:"removed"`
}
