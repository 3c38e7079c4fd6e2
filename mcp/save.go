package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sort"

	"github.com/zqagent/sidecar/atomicfile"
)

// SaveConfigFile writes servers to path atomically (a temporary file in the
// same directory, then a rename). It keeps the form of the existing file
// (bare array, servers array or map, mcpServers map) and its other top-level
// keys, each entry's unknown fields, and the original text (${VAR}
// references included) of every field that was not changed since the file
// was loaded. Builtin presets added by WithBuiltinConfigs are not written.
func SaveConfigFile(path string, servers []ServerConfig) error {
	mode := fs.FileMode(0o600)
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	default:
		return fmt.Errorf("save MCP config: %w", err)
	}
	data, err := encodeFile(old, servers)
	if err != nil {
		return fmt.Errorf("save MCP config: %w", err)
	}
	return writeAtomic(path, data, mode)
}

// encodeFile is the text of a config file holding servers, in the form of
// the file's previous text old (nil for a new file).
func encodeFile(old []byte, servers []ServerConfig) ([]byte, error) {
	form := formServersArray
	var top []kv
	if old != nil {
		p := parser{file: "old"}
		_, form = p.entries(old)
		top = topLevel(old)
	}
	var list []json.RawMessage
	var byName []kv
	withName := form == formArray || form == formServersArray
	for _, c := range servers {
		if c.auto {
			continue
		}
		obj, err := marshalObject(encodeEntry(c, withName))
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", c.Name, err)
		}
		list = append(list, obj)
		byName = append(byName, kv{c.Name, obj})
	}
	if list == nil {
		list = []json.RawMessage{}
	}
	var body json.RawMessage
	var err error
	switch form {
	case formArray:
		body, err = json.Marshal(list)
	case formServersMap, formMCPServers:
		key := "servers"
		if form == formMCPServers {
			key = "mcpServers"
		}
		var servers json.RawMessage
		if servers, err = marshalObject(byName); err == nil {
			body, err = marshalObject(setKey(top, key, servers))
		}
	default:
		var arr json.RawMessage
		if arr, err = json.Marshal(list); err == nil {
			body, err = marshalObject(setKey(top, "servers", arr))
		}
	}
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// kv is one key of a JSON object whose key order matters.
type kv struct {
	key string
	val json.RawMessage
}

func marshalObject(fields []kv) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		if !json.Valid(f.val) {
			return nil, fmt.Errorf("field %q: invalid JSON", f.key)
		}
		b.Write(f.val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func setKey(fields []kv, key string, val json.RawMessage) []kv {
	for i := range fields {
		if fields[i].key == key {
			fields[i].val = val
			return fields
		}
	}
	return append(fields, kv{key, val})
}

// topLevel returns the keys of a top-level JSON object in file order (nil
// for anything else). "servers" is dropped when "mcpServers" is present.
func topLevel(data []byte) []kv {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !json.Valid(data) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []kv
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		out = append(out, kv{k, v})
	}
	if slices.ContainsFunc(out, func(f kv) bool { return f.key == "mcpServers" }) {
		out = slices.DeleteFunc(out, func(f kv) bool { return f.key == "servers" })
	}
	return out
}

// encodeEntry is the file form of c: unchanged fields as they were written,
// changed ones in canonical form, unknown fields last.
func encodeEntry(c ServerConfig, withName bool) []kv {
	var out []kv
	put := func(k string, v any) {
		b, err := json.Marshal(v)
		if err == nil {
			out = append(out, kv{k, b})
		}
	}
	// keep copies the original text of keys when the field group did not
	// change; it reports whether it did.
	keep := func(same bool, keys ...string) bool {
		if c.orig == nil || !same {
			return false
		}
		for _, k := range keys {
			if v, ok := c.raw[k]; ok {
				out = append(out, kv{k, v})
			}
		}
		return true
	}
	o := c.orig
	if o == nil {
		o = &ServerConfig{}
	}
	if withName {
		put("name", c.Name)
	}
	if !keep(o.Type == c.Type, "type") {
		put("type", c.Type)
	}
	if !keep(slices.Equal(o.Command, c.Command), "command", "args") && len(c.Command) > 0 {
		put("command", c.Command)
	}
	if !keep(maps.Equal(o.Env, c.Env), "env") && len(c.Env) > 0 {
		put("env", c.Env)
	}
	if !keep(o.Cwd == c.Cwd, "cwd") && c.Cwd != "" {
		put("cwd", c.Cwd)
	}
	if !keep(o.URL == c.URL, "url") && c.URL != "" {
		put("url", c.URL)
	}
	if !keep(maps.Equal(o.Headers, c.Headers), "headers") && len(c.Headers) > 0 {
		put("headers", c.Headers)
	}
	if !keep(o.Enabled == c.Enabled, "enabled", "disabled") && (!c.Enabled || c.orig != nil) {
		put("enabled", c.Enabled)
	}
	if !keep(o.Timeout == c.Timeout, "timeout") && c.Timeout > 0 {
		put("timeout", c.Timeout.Milliseconds())
	}
	keys := slices.Collect(maps.Keys(c.Extra))
	sort.Strings(keys)
	for _, k := range keys {
		if !knownFields[k] && json.Valid(c.Extra[k]) {
			out = append(out, kv{k, c.Extra[k]})
		}
	}
	return out
}

// writeAtomic writes data to a temporary file beside path and renames it
// over path, so that readers (and the watcher) never see half a file.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := atomicfile.WriteFile(path, data, mode, atomicfile.SetMode); err != nil {
		return fmt.Errorf("save MCP config: %w", err)
	}
	return nil
}
