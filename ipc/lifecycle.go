package ipc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zqagent/sidecar/engine"
)

func (s *Server) lifecycleRoutes() map[string]handler {
	return map[string]handler{
		"initialize": s.initialize,
		"shutdown":   s.shutdown,
	}
}

// ClientInfo names the connecting shell.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	Client          ClientInfo `json:"client"`
	ProtocolVersion int        `json:"protocolVersion" rpc:"required"`
	// InterruptOnDisconnect interrupts the turns this connection started when
	// it closes. By default turns keep running (the window may come back).
	InterruptOnDisconnect bool `json:"interruptOnDisconnect,omitempty"`
	// Locale is the shell's UI language ("ja-JP", "zh_TW"): the default
	// language of the sessions created from now on (lang.go).
	Locale string `json:"locale,omitempty"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	Server          ClientInfo   `json:"server"`
	ProtocolVersion int          `json:"protocolVersion"`
	Capabilities    Capabilities `json:"capabilities"`
}

// Capabilities describe what this sidecar serves.
type Capabilities struct {
	Methods       []string `json:"methods"`
	EventTypes    []string `json:"eventTypes"`
	MaxFrameBytes int      `json:"maxFrameBytes"`
	MaxBatch      int      `json:"maxBatch"`
	// Provider is how turns are answered: "scripted", "openai" or "demo".
	Provider string `json:"provider"`
	// Notice explains a demo provider (no key configured), empty otherwise.
	Notice string `json:"notice,omitempty"`
	// Languages are the session languages (session.create {lang});
	// DefaultLang is the one a session that names none gets.
	Languages   []string `json:"languages"`
	DefaultLang string   `json:"defaultLang"`
}

func (s *Server) initialize(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	var p InitializeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion != ProtocolVersion {
		return nil, invalidField("protocolVersion", fmt.Sprintf("unsupported version %d; this sidecar speaks %d", p.ProtocolVersion, ProtocolVersion))
	}
	if p.Locale != "" {
		if err := validLocale(p.Locale); err != nil {
			return nil, err
		}
		s.setShellLocale(p.Locale)
	}
	c.interruptOnDisconnect.Store(p.InterruptOnDisconnect)
	c.MarkInitialized()
	c.Log().Info("initialized", "client", p.Client.Name, "clientVersion", p.Client.Version)
	types := make([]string, len(engine.AllEventTypes))
	for i, t := range engine.AllEventTypes {
		types[i] = string(t)
	}
	kind, notice := s.providers.describe(ctx)
	return InitializeResult{
		Server:          ClientInfo{Name: "zqagent-sidecar", Version: s.opts.Version},
		ProtocolVersion: ProtocolVersion,
		Capabilities: Capabilities{
			Methods:       s.Methods(),
			EventTypes:    types,
			MaxFrameBytes: MaxFrame,
			MaxBatch:      MaxBatch,
			Provider:      kind,
			Notice:        notice,
			Languages:     engine.PromptLangs,
			DefaultLang:   s.defaultLang(),
		},
	}, nil
}

func (s *Server) shutdown(_ context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p struct{}
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	return followUp(struct {
		OK bool `json:"ok"`
	}{true}, s.requestShutdown), nil
}
