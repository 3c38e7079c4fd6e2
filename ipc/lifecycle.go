package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/sandbox"
)

func (s *Server) lifecycleRoutes() map[string]handler {
	return map[string]handler{
		"initialize": s.initialize,
		"shutdown":   s.shutdown,
	}
}

// The wire types of initialize, under their old names here.
type (
	ClientInfo       = protocol.ClientInfo
	InitializeParams = protocol.InitializeParams
	InitializeResult = protocol.InitializeResult
	Capabilities     = protocol.Capabilities
)

// supportedVersions is the range of protocol versions initialize accepts.
var supportedVersions = protocol.VersionRange{Min: protocol.MinVersion, Max: protocol.MaxVersion}

func (s *Server) initialize(ctx context.Context, c *conn, raw json.RawMessage) (any, error) {
	var p protocol.InitializeParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	version, ok := p.ProtocolVersion.Choose(supportedVersions.Min, supportedVersions.Max)
	if !ok {
		asked := fmt.Sprint(p.ProtocolVersion.Min)
		if p.ProtocolVersion.Max != p.ProtocolVersion.Min {
			asked = fmt.Sprintf("%d to %d", p.ProtocolVersion.Min, p.ProtocolVersion.Max)
		}
		return nil, &WireError{
			Code:    CodeInvalidParams,
			Message: fmt.Sprintf("invalid params: protocolVersion: unsupported version %s; this sidecar speaks %d to %d", asked, supportedVersions.Min, supportedVersions.Max),
			Data:    &protocol.ErrorData{Kind: protocol.KindUnsupportedVersion, Field: "protocolVersion", Supported: &supportedVersions},
		}
	}
	if p.Locale != "" {
		if err := validLocale(p.Locale); err != nil {
			return nil, err
		}
		s.setShellLocale(p.Locale)
	}
	c.interruptOnDisconnect.Store(p.InterruptOnDisconnect)
	c.MarkInitialized()
	c.Log().Info("initialized", "client", p.Client.Name, "clientVersion", p.Client.Version, "protocolVersion", version)
	types := make([]protocol.EventType, len(protocol.EventTypes()))
	for i, t := range protocol.EventTypes() {
		types[i] = protocol.EventType(t)
	}
	kind, notice := s.providers.describe(ctx, s.defaultLang())
	return protocol.InitializeResult{
		Server:          protocol.ClientInfo{Name: "zqagent-sidecar", Version: s.opts.Version},
		ProtocolVersion: version,
		Capabilities: protocol.Capabilities{
			Methods:          s.Methods(),
			EventTypes:       types,
			Features:         s.features(),
			ProtocolVersions: supportedVersions,
			MaxFrameBytes:    MaxFrame,
			MaxBatch:         MaxBatch,
			Provider:         kind,
			Notice:           notice,
			Languages:        engine.PromptLangs,
			DefaultLang:      s.defaultLang(),
		},
	}, nil
}

// features lists the optional features this sidecar has here and now.
func (s *Server) features() []protocol.Feature {
	fs := []protocol.Feature{}
	if _, err := exec.LookPath("git"); err == nil {
		fs = append(fs, protocol.FeatureVCS)
	}
	fs = append(fs, protocol.FeatureMCPTrust)
	if s.opts.Terminals != nil {
		fs = append(fs, protocol.FeatureTerminals)
	}
	if st, err := sandbox.Resolve(sandbox.Config{Mode: sandbox.ModeAuto}); err == nil && st.Enforced {
		fs = append(fs, protocol.FeatureSandbox)
	}
	return append(fs, protocol.FeatureACP, protocol.FeatureGrants, protocol.FeatureSecretsStdin, protocol.FeatureErrorData)
}

func (s *Server) shutdown(_ context.Context, _ *conn, raw json.RawMessage) (any, error) {
	var p protocol.Empty
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	return followUp(protocol.OKResult{OK: true}, s.requestShutdown), nil
}
