package ipc

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/sandbox"
)

// lifecycleRoutes: initialize and shutdown.
func lifecycleRoutes() map[string]handler {
	return map[string]handler{
		"initialize": route(initialize),
		"shutdown":   route(shutdown),
	}
}

// supportedVersions is the range of protocol versions initialize accepts.
var supportedVersions = protocol.VersionRange{Min: protocol.MinVersion, Max: protocol.MaxVersion}

func initialize(ctx context.Context, b *backend.Backend, c *conn, p protocol.InitializeParams) (protocol.InitializeResult, error) {
	version, ok := p.ProtocolVersion.Choose(supportedVersions.Min, supportedVersions.Max)
	if !ok {
		asked := fmt.Sprint(p.ProtocolVersion.Min)
		if p.ProtocolVersion.Max != p.ProtocolVersion.Min {
			asked = fmt.Sprintf("%d to %d", p.ProtocolVersion.Min, p.ProtocolVersion.Max)
		}
		return protocol.InitializeResult{}, &wsrpc.WireError{
			Code:    wsrpc.CodeInvalidParams,
			Message: fmt.Sprintf("invalid params: protocolVersion: unsupported version %s; this sidecar speaks %d to %d", asked, supportedVersions.Min, supportedVersions.Max),
			Data:    &protocol.ErrorData{Kind: protocol.KindUnsupportedVersion, Field: "protocolVersion", Supported: &supportedVersions},
		}
	}
	if p.Locale != "" {
		if err := b.SetShellLocale(p.Locale); err != nil {
			return protocol.InitializeResult{}, err
		}
	}
	c.interruptOnDisconnect.Store(p.InterruptOnDisconnect)
	client := p.Client
	c.client.Store(&client)
	c.MarkInitialized()
	c.Log().Info("initialized", "client", p.Client.Name, "clientVersion", p.Client.Version, "protocolVersion", version)
	types := make([]protocol.EventType, len(protocol.EventTypes()))
	for i, t := range protocol.EventTypes() {
		types[i] = protocol.EventType(t)
	}
	kind, notice := b.DescribeProvider(ctx)
	return protocol.InitializeResult{
		Server:          protocol.ClientInfo{Name: "zqagent-sidecar", Version: c.s.opts.Version},
		ProtocolVersion: version,
		Capabilities: protocol.Capabilities{
			Methods:          c.s.Methods(),
			EventTypes:       types,
			Features:         features(b),
			ProtocolVersions: supportedVersions,
			MaxFrameBytes:    wsrpc.MaxFrame,
			MaxBatch:         wsrpc.MaxBatch,
			Provider:         kind,
			Notice:           notice,
			Languages:        engine.PromptLangs,
			DefaultLang:      b.DefaultLang(),
		},
	}, nil
}

// features lists the optional features this sidecar has here and now.
func features(b *backend.Backend) []protocol.Feature {
	fs := []protocol.Feature{}
	if _, err := exec.LookPath("git"); err == nil {
		fs = append(fs, protocol.FeatureVCS)
	}
	fs = append(fs, protocol.FeatureMCPTrust)
	if b.HasTerminals() {
		fs = append(fs, protocol.FeatureTerminals)
	}
	if st, err := sandbox.Resolve(sandbox.Config{Mode: sandbox.ModeAuto}); err == nil && st.Enforced {
		fs = append(fs, protocol.FeatureSandbox)
	}
	return append(fs, protocol.FeatureACP, protocol.FeatureGrants, protocol.FeatureSecretsStdin, protocol.FeatureErrorData)
}

// shutdown answers, then asks the owner to stop (Options.OnShutdown).
func shutdown(_ context.Context, _ *backend.Backend, c *conn, _ protocol.Empty) (wsrpc.FollowUp, error) {
	return wsrpc.FollowUp{Result: protocol.OKResult{OK: true}, After: c.s.requestShutdown}, nil
}
