package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zqagent/sidecar/proc"
	"github.com/zqagent/sidecar/protocol"
)

// fileForm is how a config file lists its servers; SaveConfigFile keeps it.
type fileForm int

const (
	formServersArray fileForm = iota // {"servers": [...]} (what a new file gets)
	formArray                        // [...]
	formServersMap                   // {"servers": {"name": {...}}}
	formMCPServers                   // {"mcpServers": {"name": {...}}} (Claude, Cursor)
)

// knownFields are the entry keys ServerConfig understands; everything else
// lands in Extra.
var knownFields = map[string]bool{
	"name": true, "type": true, "command": true, "args": true, "env": true, "cwd": true,
	"url": true, "headers": true, "enabled": true, "disabled": true, "timeout": true,
}

// varRef matches ${VAR} and ${env:VAR}.
var varRef = regexp.MustCompile(`\$\{(env:)?([A-Za-z_][A-Za-z0-9_]*)\}`)

// LoadConfigFile reads a project's MCP config. A missing file is an empty
// config; an unreadable or malformed one yields warnings, never a crash. The
// error is only for a file that exists but cannot be read.
func LoadConfigFile(path string) ([]ServerConfig, []protocol.MCPWarning, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, []protocol.MCPWarning{{File: path, Message: err.Error()}}, fmt.Errorf("load MCP config: %w", err)
	}
	cfgs, warns := ParseConfig(data, path)
	return cfgs, warns, nil
}

// ParseConfig parses the text of an MCP config file in any of the seed's
// forms (§15.2). source names the file in warnings. Bad entries are skipped
// with a warning; a bad file gives no configs and a warning.
func ParseConfig(data []byte, source string) ([]ServerConfig, []protocol.MCPWarning) {
	p := parser{file: source}
	entries, _ := p.entries(data)
	seen := map[string]bool{}
	var out []ServerConfig
	for _, e := range entries {
		c, ok := p.entry(e)
		if !ok {
			continue
		}
		if seen[c.Name] {
			p.warn(c.Name, "name", "duplicate server name; this entry is ignored")
			continue
		}
		seen[c.Name] = true
		out = append(out, c)
	}
	return out, p.warns
}

// rawEntry is one server entry before decoding: its fields, the name given by
// a map key (map forms) and its label for warnings.
type rawEntry struct {
	fields  map[string]json.RawMessage
	keyName string
	label   string
}

type parser struct {
	file  string
	warns []protocol.MCPWarning
}

func (p *parser) warn(server, field, format string, a ...any) {
	p.warns = append(p.warns, protocol.MCPWarning{File: p.file, Server: server, Field: field, Message: fmt.Sprintf(format, a...)})
}

// entries splits a file into its server entries and reports its form.
func (p *parser) entries(data []byte) ([]rawEntry, fileForm) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, formServersArray
	}
	var top any
	if err := json.Unmarshal(data, &top); err != nil {
		p.warn("", "", "invalid JSON: %s", jsonErrorText(data, err))
		return nil, formServersArray
	}
	switch top.(type) {
	case []any:
		return p.list(json.RawMessage(data), ""), formArray
	case map[string]any:
	default:
		p.warn("", "", "the file must hold a JSON array or object of servers, not %s", jsonKind(top))
		return nil, formServersArray
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(data, &obj) // valid: checked above
	if raw, ok := obj["mcpServers"]; ok {
		if _, dup := obj["servers"]; dup {
			p.warn("", "servers", "both mcpServers and servers are present; servers is ignored")
		}
		return p.collection(raw, "mcpServers"), formMCPServers
	}
	if raw, ok := obj["servers"]; ok {
		es := p.collection(raw, "servers")
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			return es, formServersMap
		}
		return es, formServersArray
	}
	if len(obj) > 0 {
		p.warn("", "", "no \"servers\" or \"mcpServers\" key; no servers are configured")
	}
	return nil, formServersArray
}

// collection decodes the value of "servers" or "mcpServers": an array of
// entries or an object of name → entry.
func (p *parser) collection(raw json.RawMessage, field string) []rawEntry {
	t := bytes.TrimSpace(raw)
	switch {
	case bytes.HasPrefix(t, []byte("[")):
		return p.list(raw, field)
	case bytes.HasPrefix(t, []byte("{")):
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			p.warn("", field, "invalid: %v", err)
			return nil
		}
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names) // JSON objects are unordered; keep a stable order
		names = fileOrder(raw, names)
		var out []rawEntry
		for _, n := range names {
			var f map[string]json.RawMessage
			if err := json.Unmarshal(m[n], &f); err != nil || f == nil {
				p.warn(n, "", "a server entry must be a JSON object")
				continue
			}
			out = append(out, rawEntry{fields: f, keyName: n, label: n})
		}
		return out
	case bytes.Equal(t, []byte("null")):
		return nil
	}
	p.warn("", field, "must be an array or an object of servers")
	return nil
}

func (p *parser) list(raw json.RawMessage, field string) []rawEntry {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		p.warn("", field, "invalid: %v", err)
		return nil
	}
	var out []rawEntry
	for i, it := range items {
		label := "#" + strconv.Itoa(i)
		var f map[string]json.RawMessage
		if err := json.Unmarshal(it, &f); err != nil || f == nil {
			p.warn(label, "", "a server entry must be a JSON object")
			continue
		}
		if n, ok := stringField(f, "name"); ok && n != "" {
			label = n
		}
		out = append(out, rawEntry{fields: f, label: label})
	}
	return out
}

// fileOrder sorts the keys of a JSON object by where they appear in raw, so
// that map forms keep the user's order. names must be the object's keys.
func fileOrder(raw json.RawMessage, names []string) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return names
	}
	var ordered []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return names
		}
		k, _ := tok.(string)
		ordered = append(ordered, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return names
		}
	}
	if len(ordered) != len(names) { // duplicate keys: keep the sorted order
		return names
	}
	return ordered
}

// entry decodes one server entry; false when it is unusable.
func (p *parser) entry(e rawEntry) (ServerConfig, bool) {
	f := e.fields
	c := ServerConfig{Enabled: true, raw: f}
	name, ok := stringField(f, "name")
	if _, has := f["name"]; has && !ok {
		p.warn(e.label, "name", "must be a string")
		return c, false
	}
	if name == "" {
		name = e.keyName
	}
	c.Name = strings.TrimSpace(name)
	if c.Name == "" {
		p.warn(e.label, "name", "missing server name; the entry is ignored")
		return c, false
	}
	label := c.Name
	x := expander{p: p, server: label}

	for k, v := range f {
		if !knownFields[k] {
			if c.Extra == nil {
				c.Extra = map[string]json.RawMessage{}
			}
			c.Extra[k] = v
		}
	}
	if !p.flags(&c, f, label) {
		return c, false
	}
	if !p.commandField(&c, f, &x) {
		return c, false
	}
	var good bool
	if c.Env, good = p.stringMap(f, "env", label, &x); !good {
		return c, false
	}
	if c.Headers, good = p.stringMap(f, "headers", label, &x); !good {
		return c, false
	}
	for _, k := range []string{"cwd", "url"} {
		if _, has := f[k]; !has {
			continue
		}
		s, ok := stringField(f, k)
		if !ok {
			p.warn(label, k, "must be a string")
			return c, false
		}
		s = x.expand(s, k)
		if k == "cwd" {
			c.Cwd = s
		} else {
			c.URL = strings.TrimSpace(s)
		}
	}
	if !p.timeoutField(&c, f, label) {
		return c, false
	}
	if !p.typeField(&c, f, label) {
		return c, false
	}
	if err := c.Validate(); err != nil {
		field := "type"
		switch c.Type {
		case TypeStdio:
			field = "command"
		case TypeHTTP, TypeSSE:
			field = "url"
		case TypeBuiltin:
			field = "name"
		}
		p.warn(label, field, "%s; the entry is ignored", strings.TrimPrefix(err.Error(), ErrInvalidConfig.Error()+": "))
		return c, false
	}
	o := c.Clone()
	o.raw, o.orig = nil, nil
	c.orig = &o
	return c, true
}

func (p *parser) flags(c *ServerConfig, f map[string]json.RawMessage, label string) bool {
	if raw, has := f["enabled"]; has {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			p.warn(label, "enabled", "must be true or false; the server stays enabled")
		} else {
			c.Enabled = b
		}
	}
	if raw, has := f["disabled"]; has {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			p.warn(label, "disabled", "must be true or false; ignored")
		} else if b {
			c.Enabled = false
		}
	}
	return true
}

func (p *parser) commandField(c *ServerConfig, f map[string]json.RawMessage, x *expander) bool {
	label := x.server
	if raw, has := f["command"]; has {
		var s string
		var arr []string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			words, err := splitProtected(s)
			if err != nil {
				p.warn(label, "command", "%v", err)
				return false
			}
			for i := range words {
				words[i] = x.expand(words[i], "command")
			}
			c.Command = words
		case json.Unmarshal(raw, &arr) == nil:
			for i := range arr {
				arr[i] = x.expand(arr[i], "command")
			}
			c.Command = arr
		case bytes.Equal(bytes.TrimSpace(raw), []byte("null")):
		default:
			p.warn(label, "command", "must be a string or an array of strings")
			return false
		}
	}
	if raw, has := f["args"]; has {
		var arr []string
		if err := json.Unmarshal(raw, &arr); err != nil {
			p.warn(label, "args", "must be an array of strings")
			return false
		}
		if len(c.Command) == 0 && len(arr) > 0 {
			p.warn(label, "args", "args without a command")
			return false
		}
		for _, a := range arr {
			c.Command = append(c.Command, x.expand(a, "args"))
		}
	}
	return true
}

// stringMap decodes env or headers; numbers and booleans are taken as their
// text, other values are dropped with a warning.
func (p *parser) stringMap(f map[string]json.RawMessage, field, label string, x *expander) (map[string]string, bool) {
	raw, has := f[field]
	if !has || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, true
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		p.warn(label, field, "must be an object of strings")
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case float64:
			s = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			s = strconv.FormatBool(v)
		default:
			p.warn(label, field+"."+k, "must be a string; dropped")
			continue
		}
		if k == "" || (field == "env" && strings.ContainsAny(k, "=\x00")) {
			p.warn(label, field+"."+k, "invalid variable name; dropped")
			continue
		}
		out[k] = x.expand(s, field+"."+k)
	}
	return out, true
}

func (p *parser) timeoutField(c *ServerConfig, f map[string]json.RawMessage, label string) bool {
	raw, has := f["timeout"]
	if !has {
		return true
	}
	var ms float64
	var s string
	switch {
	case json.Unmarshal(raw, &ms) == nil:
		c.Timeout = time.Duration(ms * float64(time.Millisecond))
	case json.Unmarshal(raw, &s) == nil:
		d, err := time.ParseDuration(s)
		if err != nil {
			p.warn(label, "timeout", "must be milliseconds or a duration such as \"30s\"; ignored")
			return true
		}
		c.Timeout = d
	default:
		p.warn(label, "timeout", "must be milliseconds or a duration such as \"30s\"; ignored")
		return true
	}
	if c.Timeout < 0 || c.Timeout > 24*time.Hour {
		p.warn(label, "timeout", "out of range; ignored")
		c.Timeout = 0
	}
	return true
}

// typeField reads or infers the type: builtin → url → command.
func (p *parser) typeField(c *ServerConfig, f map[string]json.RawMessage, label string) bool {
	if _, has := f["type"]; has {
		t, ok := stringField(f, "type")
		if !ok {
			p.warn(label, "type", "must be a string")
			return false
		}
		t = strings.ToLower(strings.TrimSpace(t))
		switch t {
		case "streamable-http", "streamablehttp", "streamable_http", "http":
			t = TypeHTTP
		case "stdio", "sse", "builtin":
		case "":
		default:
			p.warn(label, "type", "unknown type %q (stdio, http, sse or builtin); the entry is ignored", t)
			return false
		}
		c.Type = t
	}
	if c.Type == "" {
		c.Type = inferType(*c)
	}
	if c.Type == "" {
		p.warn(label, "type", "no type, url or command: cannot tell how to connect; the entry is ignored")
		return false
	}
	return true
}

// inferType is the seed's order: builtin → url → command.
func inferType(c ServerConfig) string {
	switch {
	case isBuiltin(c.Name) && c.URL == "" && len(c.Command) == 0:
		return TypeBuiltin
	case c.URL != "":
		if u, err := url.Parse(c.URL); err == nil && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/sse") {
			return TypeSSE
		}
		return TypeHTTP
	case len(c.Command) > 0:
		return TypeStdio
	}
	return ""
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("bad url: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("url must be http or https, got %q", s)
	}
	if u.Host == "" {
		return fmt.Errorf("url has no host: %q", s)
	}
	return nil
}

// expander checks the ${VAR} and ${env:VAR} references of a field. It
// expands nothing: a config keeps its text, and is expanded (expandConfig)
// only when a trusted server is connected. It warns about variables that
// are unset and about the sidecar's secrets, which never expand.
type expander struct {
	p      *parser
	server string
}

func (x *expander) expand(s, field string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	for _, m := range varRef.FindAllStringSubmatch(s, -1) {
		name := m[2]
		if proc.IsSecret(name) {
			x.p.warn(x.server, field, "%s is a secret of the sidecar: it is never expanded (an empty string)", name)
		} else if _, ok := os.LookupEnv(name); !ok {
			x.p.warn(x.server, field, "environment variable %s is not set; it expands to an empty string", name)
		}
	}
	return s
}

func stringField(f map[string]json.RawMessage, k string) (string, bool) {
	raw, ok := f[k]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "a value"
}

// jsonErrorText is err with the line and column of a syntax error.
func jsonErrorText(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := min(int(se.Offset), len(data))
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		col := off - bytes.LastIndexByte(data[:off], '\n')
		return fmt.Sprintf("%v (line %d, column %d)", err, line, col)
	}
	return err.Error()
}
