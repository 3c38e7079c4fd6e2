package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/keychain"
	"github.com/zqagent/sidecar/mcp"
	"github.com/zqagent/sidecar/protocol"
)

// mcp.login and mcp.logout: sign-in to a project's remote MCP servers
// (OAuth, mcp/oauth.go). The sign-ins live in the OS keychain, in the
// sidecar's keychain service under accounts "mcp-oauth:<hash of the
// server's name and URL>", never in the store, a log or an event. Without
// a keyring there is no sign-in: mcp.login fails with -32005
// (keychain_unavailable) and servers connect without one.

// LoginMCP starts a sign-in and returns the URL for the browser; the
// outcome comes as mcp.status notifications (connected, or needs_auth with
// lastError).
func (b *Backend) LoginMCP(ctx context.Context, p protocol.MCPLoginParams) (protocol.MCPLoginResult, error) {
	pm, err := b.projectMCPOfServer(ctx, p.ProjectID, p.Name)
	if err != nil {
		return protocol.MCPLoginResult{}, err
	}
	u, err := pm.mgr.Login(ctx, p.Name)
	if err != nil {
		return protocol.MCPLoginResult{}, fmt.Errorf("mcp.login: %w", err)
	}
	return protocol.MCPLoginResult{AuthorizationURL: u}, nil
}

// LogoutMCP forgets a server's sign-in and reconnects it: its state is then
// what it is without one (needs_auth for a server that wants one).
func (b *Backend) LogoutMCP(ctx context.Context, p protocol.MCPLoginParams) (protocol.MCPServerResult, error) {
	pm, err := b.projectMCPOfServer(ctx, p.ProjectID, p.Name)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	if err := pm.mgr.Logout(ctx, p.Name); err != nil {
		return protocol.MCPServerResult{}, fmt.Errorf("mcp.logout: %w", err)
	}
	info, err := pm.serverInfo(p.Name)
	if err != nil {
		return protocol.MCPServerResult{}, err
	}
	return protocol.MCPServerResult{Server: info, Warnings: []protocol.MCPWarning{}}, nil
}

// projectMCPOfServer is the manager of projectID, or, when projectID is
// empty, of the one open project that has a server of that name.
func (b *Backend) projectMCPOfServer(ctx context.Context, projectID, name string) (*projectMCP, error) {
	if projectID != "" {
		pm, err := b.projectMCPFor(ctx, projectID)
		if err != nil {
			return nil, err
		}
		if _, err := pm.serverInfo(name); err != nil {
			return nil, err
		}
		return pm, nil
	}
	b.mcp.mu.Lock()
	pms := make([]*projectMCP, 0, len(b.mcp.byProject))
	for _, pm := range b.mcp.byProject {
		pms = append(pms, pm)
	}
	b.mcp.mu.Unlock()
	var found []*projectMCP
	for _, pm := range pms {
		if _, err := pm.serverInfo(name); err == nil {
			found = append(found, pm)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%w: no open project has an MCP server %q: %w", ErrNotFound, name, mcp.ErrUnknownServer)
	case 1:
		return found[0], nil
	}
	return nil, protocol.InvalidField("projectId", fmt.Sprintf("required: %d open projects have an MCP server %q", len(found), name))
}

// mcpSecrets is the keychain of the sign-ins; nil without a keyring.
func (b *Backend) mcpSecrets() mcp.Secrets {
	if b.opts.Keyring == nil {
		return nil
	}
	return keyringSecrets{b.opts.Keyring}
}

// keyringSecrets keeps sign-ins in the sidecar's keychain service (the
// accounts are mcp.SignInAccount's, "mcp-oauth:…").
type keyringSecrets struct{ kr *keychain.Keyring }

func (k keyringSecrets) Get(ctx context.Context, account string) (string, error) {
	v, err := k.kr.Get(ctx, account)
	return v, secretsErr(err)
}

func (k keyringSecrets) Set(ctx context.Context, account, value string) error {
	return secretsErr(k.kr.Set(ctx, account, value))
}

func (k keyringSecrets) Delete(ctx context.Context, account string) error {
	return secretsErr(k.kr.Delete(ctx, account))
}

// secretsErr words the keychain's errors for sign-ins (they never carry
// the value): none stored is mcp.ErrNoSignIn.
func secretsErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, keychain.ErrNotFound):
		return mcp.ErrNoSignIn
	case errors.Is(err, keychain.ErrUnavailable):
		// The keychain's remedy names an API key variable: not this one's.
		cause := strings.TrimPrefix(err.Error(), keychain.ErrUnavailable.Error()+": ")
		if i := strings.LastIndex(cause, "; set "); i >= 0 {
			cause = cause[:i]
		}
		return fmt.Errorf("%w: %s; MCP sign-ins are kept only in the OS keychain: start or unlock it", keychain.ErrUnavailable, cause)
	}
	return fmt.Errorf("MCP sign-in in the keychain: %w", err)
}
