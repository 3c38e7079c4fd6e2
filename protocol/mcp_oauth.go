package protocol

// MCPLoginParams are the params of mcp.login and mcp.logout.
type MCPLoginParams struct {
	// ProjectID is the open project of the server; it may be left out when
	// exactly one open project has a server of that name.
	ProjectID string `json:"projectId,omitempty"`
	Name      string `json:"name" rpc:"required"`
}

// MCPLoginResult is the result of mcp.login.
type MCPLoginResult struct {
	// AuthorizationURL is the page the shell opens in the user's browser.
	// Its host is the server's authorization server (from the server's
	// metadata, not from the sidecar): show it to the user.
	AuthorizationURL string `json:"authorizationUrl"`
}
