package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Transport types of a server config.
const (
	TypeStdio   = "stdio"
	TypeHTTP    = "http"
	TypeSSE     = "sse"
	TypeBuiltin = "builtin"
)

// ServerConfig is one MCP server of a project. Values are as written:
// ${VAR} references are expanded only when a trusted server is connected
// (never to the sidecar's secrets), so what the trust card shows, what Hash
// covers and what is saved are the same text. The entry's original text is
// remembered so that SaveConfigFile writes every field that was not changed
// as it was. Its JSON form (MarshalJSON,
// UnmarshalJSON) is the file's entry format: name, type, command, args, env,
// cwd, url, headers, enabled/disabled, timeout (ms) and unknown fields.
type ServerConfig struct {
	Name    string
	Type    string // stdio | http | sse | builtin
	Command []string
	Env     map[string]string
	Cwd     string
	URL     string
	Headers map[string]string
	Enabled bool
	// Timeout bounds connecting and each call of this server; 0 = the
	// manager's defaults. In the file: "timeout" in milliseconds.
	Timeout time.Duration
	// Extra holds the entry's unknown fields; SaveConfigFile writes them back.
	Extra map[string]json.RawMessage

	// orig is the config as parsed (expanded) and raw the entry's original
	// fields; both nil for configs built in code.
	orig *ServerConfig
	raw  map[string]json.RawMessage
	// auto marks a builtin preset added by WithBuiltinConfigs; it is never
	// saved.
	auto bool
}

// Clone returns a deep copy.
func (c ServerConfig) Clone() ServerConfig {
	out := c
	out.Command = slices.Clone(c.Command)
	out.Env = maps.Clone(c.Env)
	out.Headers = maps.Clone(c.Headers)
	out.Extra = maps.Clone(c.Extra)
	out.raw = maps.Clone(c.raw)
	return out
}

// Validate reports why a config cannot be connected, wrapping
// ErrInvalidConfig.
func (c ServerConfig) Validate() error {
	if strings.TrimSpace(c.Name) == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidConfig)
	}
	switch c.Type {
	case TypeStdio:
		if len(c.Command) == 0 || c.Command[0] == "" {
			return fmt.Errorf("%w: server %q: stdio needs a command", ErrInvalidConfig, c.Name)
		}
	case TypeHTTP, TypeSSE:
		if varRef.MatchString(c.URL) && strings.TrimSpace(c.URL) != "" {
			break // checked once expanded, when connecting
		}
		if err := checkURL(c.URL); err != nil {
			return fmt.Errorf("%w: server %q: %v", ErrInvalidConfig, c.Name, err)
		}
	case TypeBuiltin:
		if !isBuiltin(c.Name) {
			return fmt.Errorf("%w: server %q: no builtin preset of that name (known: %s)", ErrInvalidConfig, c.Name, strings.Join(builtinNames(), ", "))
		}
	default:
		return fmt.Errorf("%w: server %q: unknown type %q", ErrInvalidConfig, c.Name, c.Type)
	}
	if _, err := c.OAuth(); err != nil {
		return err
	}
	return nil
}

// sameConnection reports whether two configs connect the same way (a watch
// reload reconnects a server only when this changes).
func sameConnection(a, b ServerConfig) bool {
	return a.Name == b.Name && a.Type == b.Type && slices.Equal(a.Command, b.Command) &&
		maps.Equal(a.Env, b.Env) && a.Cwd == b.Cwd && a.URL == b.URL &&
		maps.Equal(a.Headers, b.Headers) && a.Enabled == b.Enabled && a.Timeout == b.Timeout
}

// DefaultConfigPath is the project's MCP config: <workspace>/.agent/mcp.json.
func DefaultConfigPath(workspace string) string {
	return filepath.Join(workspace, ".agent", "mcp.json")
}
