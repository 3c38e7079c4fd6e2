package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/protocol"
)

// ParseServer parses one server entry in the file's format (what mcp.add
// and mcp.update carry): command as a string or an array plus args,
// ${VAR} references, enabled/disabled, unknown fields kept. name is used
// when the entry has no "name" (map forms). Like the file, the config
// remembers its text, so a save writes ${VAR} references, not their values.
// The error is set when the entry is unusable; warnings are the rest.
func ParseServer(data []byte, name string) (ServerConfig, []protocol.MCPWarning, error) {
	p := parser{file: "request"}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil || f == nil {
		return ServerConfig{}, nil, fmt.Errorf("%w: a server must be a JSON object", ErrInvalidConfig)
	}
	label := name
	if n, ok := stringField(f, "name"); ok && n != "" {
		label = n
	}
	c, ok := p.entry(rawEntry{fields: f, keyName: name, label: label})
	if !ok {
		var msgs []string
		for _, w := range p.warns {
			msgs = append(msgs, strings.TrimPrefix(w.String(), "request: "))
		}
		return ServerConfig{}, p.warns, fmt.Errorf("%w: %s", ErrInvalidConfig, strings.Join(msgs, "; "))
	}
	return c, p.warns, nil
}

// MarshalJSON writes the config in the file's entry format, with "name"
// and "enabled" always present. Fields loaded from a file keep their text:
// ${VAR} references are shown, never the secrets they expand to.
func (c ServerConfig) MarshalJSON() ([]byte, error) {
	fields := encodeEntry(c, true)
	if !containsKey(fields, "enabled") {
		b, _ := json.Marshal(c.Enabled)
		fields = append(fields, kv{"enabled", b})
		for i, f := range fields {
			if f.key == "disabled" {
				fields = append(fields[:i], fields[i+1:]...)
				break
			}
		}
	}
	return marshalObject(fields)
}

// UnmarshalJSON reads the file's entry format (see ParseServer).
func (c *ServerConfig) UnmarshalJSON(b []byte) error {
	parsed, _, err := ParseServer(b, "")
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

func containsKey(fields []kv, k string) bool {
	for _, f := range fields {
		if f.key == k {
			return true
		}
	}
	return false
}
