package protocol

// ReadyLine is the one line the sidecar prints on stdout when it accepts
// connections: connect to URL with Token. Nothing else ever goes to stdout.
type ReadyLine struct {
	// Event is "ready".
	Event string `json:"event"`
	// URL is ws://127.0.0.1:PORT/rpc.
	URL   string `json:"url"`
	Token string `json:"token"`
	PID   int    `json:"pid"`
	// Version is the sidecar's version.
	Version string `json:"version"`
	// Protocol is the highest protocol version the sidecar speaks.
	Protocol int `json:"protocol"`
}

// SecretsLine is the line a shell writes on the sidecar's stdin with
// --secrets-stdin, before anything else. It is decoded strictly: exactly
// these field names, no other, no duplicate, strings only.
type SecretsLine struct {
	// Token is the connection token ("": the environment's, else random).
	Token string `json:"token,omitempty"`
	// Keys are API keys by provider profile name, as keys.set takes them.
	Keys map[string]string `json:"keys,omitempty"`
}
