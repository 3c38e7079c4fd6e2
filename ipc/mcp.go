package ipc

import (
	"context"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/protocol"
)

// mcpRoutes: mcp.* (the backend's mcp_methods.go, mcp_project.go,
// mcp_trust.go and mcp_session.go).
func mcpRoutes() map[string]handler {
	return map[string]handler{
		"mcp.list":         call((*backend.Backend).MCPList),
		"mcp.add":          call((*backend.Backend).AddMCP),
		"mcp.update":       call((*backend.Backend).UpdateMCP),
		"mcp.remove":       call((*backend.Backend).RemoveMCP),
		"mcp.refresh":      call((*backend.Backend).RefreshMCP),
		"mcp.trust":        call((*backend.Backend).TrustMCP),
		"mcp.untrust":      call((*backend.Backend).UntrustMCP),
		"mcp.sessionAdd":   route(mcpSessionAdd),
		"mcp.sessionTrust": call((*backend.Backend).TrustSessionMCP),
		"mcp.login":        call((*backend.Backend).LoginMCP),  // mcp_oauth.go
		"mcp.logout":       call((*backend.Backend).LogoutMCP), // mcp_oauth.go
	}
}

// mcpSessionAdd binds the servers to this connection: they stop when it
// ends (conn.ended).
func mcpSessionAdd(ctx context.Context, b *backend.Backend, c *conn, p protocol.MCPSessionAddParams) (protocol.MCPSessionAddResult, error) {
	return b.AddSessionMCP(ctx, c.Conn, p)
}
