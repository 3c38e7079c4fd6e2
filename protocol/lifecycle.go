package protocol

// ClientInfo names the connecting shell, or the sidecar in a result.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	// Client names the shell (logged; optional).
	Client ClientInfo `json:"client,omitzero"`
	// ProtocolVersion is the version the shell speaks (1) or the range it
	// can speak ({"min": 1, "max": 2}); the result names the one chosen.
	ProtocolVersion VersionSpec `json:"protocolVersion" rpc:"required"`
	// InterruptOnDisconnect interrupts the turns this connection started when
	// it closes. By default turns keep running (the window may come back).
	InterruptOnDisconnect bool `json:"interruptOnDisconnect,omitempty"`
	// Locale is the shell's UI language ("ja-JP", "zh_TW"): the default
	// language of the sessions created from now on.
	Locale string `json:"locale,omitempty"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	Server ClientInfo `json:"server"`
	// ProtocolVersion is the version chosen: the highest both sides speak.
	ProtocolVersion int          `json:"protocolVersion"`
	Capabilities    Capabilities `json:"capabilities"`
}

// Feature names an optional feature a shell may adapt to.
type Feature string

// The optional features.
const (
	// FeatureVCS: per-turn change tracking can work here (a git binary was
	// found): vcs.turns, vcs.diff and vcs.restore can return data.
	FeatureVCS Feature = "vcs"
	// FeatureMCPTrust: project MCP servers wait for mcp.trust (trust cards).
	FeatureMCPTrust Feature = "mcpTrust"
	// FeatureTerminals: terminal.* methods can start PTYs on this platform.
	FeatureTerminals Feature = "terminals"
	// FeatureSandbox: an OS sandbox for shell commands works on this machine
	// (bubblewrap or sandbox-exec); shellPolicy "sandbox" can be enforced.
	FeatureSandbox Feature = "sandbox"
	// FeatureACP: this binary also serves the Agent Client Protocol
	// (`sidecar acp`, for editors) on the same data directory.
	FeatureACP Feature = "acp"
	// FeatureGrants: session.grants and session.revokeGrant exist.
	FeatureGrants Feature = "grants"
	// FeatureSecretsStdin: the binary reads secrets from stdin
	// (--secrets-stdin).
	FeatureSecretsStdin Feature = "secretsStdin"
	// FeatureErrorData: every error carries error.data {kind, field?, ...}.
	FeatureErrorData Feature = "errorData"
)

// Features lists every feature name, in the order above.
var Features = []Feature{FeatureVCS, FeatureMCPTrust, FeatureTerminals, FeatureSandbox, FeatureACP, FeatureGrants, FeatureSecretsStdin, FeatureErrorData}

// Capabilities describe what this sidecar serves.
type Capabilities struct {
	// Methods are the routed method names, sorted.
	Methods []string `json:"methods"`
	// EventTypes are the session event types.
	EventTypes []EventType `json:"eventTypes"`
	// Features are the optional features available on this sidecar, here
	// and now (a feature absent is not available).
	Features []Feature `json:"features"`
	// ProtocolVersions is the range of protocol versions the sidecar speaks.
	ProtocolVersions VersionRange `json:"protocolVersions"`
	MaxFrameBytes    int          `json:"maxFrameBytes"`
	MaxBatch         int          `json:"maxBatch"`
	// Provider is how turns are answered: "scripted", "openai" or "demo".
	Provider string `json:"provider"`
	// Notice explains a demo provider (no key configured), empty otherwise.
	Notice string `json:"notice,omitempty"`
	// Languages are the session languages (session.create {lang});
	// DefaultLang is the one a session that names none gets.
	Languages   []string `json:"languages"`
	DefaultLang string   `json:"defaultLang"`
}

// Empty is the params of methods that take none ({}).
type Empty struct{}

// OKResult is the result of shutdown.
type OKResult struct {
	OK bool `json:"ok"`
}
