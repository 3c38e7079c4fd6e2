package mcp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zqagent/sidecar/protocol"
)

// brief is the part of a config the table compares.
type brief struct {
	Name, Type string
	Command    []string
	URL        string
	Enabled    bool
}

func briefOf(cs []ServerConfig) []brief {
	var out []brief
	for _, c := range cs {
		out = append(out, brief{c.Name, c.Type, c.Command, c.URL, c.Enabled})
	}
	return out
}

func TestParseConfigForms(t *testing.T) {
	t.Setenv("MCP_TEST_DIR", "/data dir")
	t.Setenv("MCP_TEST_TOKEN", "tok123")
	fs := brief{"filesystem", TypeStdio, []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"}, "", true}
	remote := brief{"remote", TypeHTTP, nil, "https://example.com/mcp", true}
	cases := []struct {
		name string
		in   string
		want []brief
	}{
		{"bare array", `[
			{"name":"filesystem","type":"stdio","command":["npx","-y","@modelcontextprotocol/server-filesystem","/data"]},
			{"name":"remote","type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer ${MCP_TEST_TOKEN}"}}
		]`, []brief{fs, remote}},
		{"servers array", `{"servers":[{"name":"filesystem","command":"npx -y @modelcontextprotocol/server-filesystem /data"},{"name":"remote","url":"https://example.com/mcp"}]}`, []brief{fs, remote}},
		{"servers map keeps file order", `{"servers":{"remote":{"url":"https://example.com/mcp"},"filesystem":{"command":["npx","-y"],"args":["@modelcontextprotocol/server-filesystem","/data"]}}}`, []brief{remote, fs}},
		{"claude mcpServers", `{"mcpServers":{"filesystem":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/data"]}}}`, []brief{fs}},
		{"command string with quotes and vars", `[{"name":"q","command":"node 'my server.js' --dir \"${MCP_TEST_DIR}\" --x=${env:MCP_TEST_DIR} a\\ b"}]`,
			[]brief{{"q", TypeStdio, []string{"node", "my server.js", "--dir", "${MCP_TEST_DIR}", "--x=${env:MCP_TEST_DIR}", "a b"}, "", true}}},
		{"dollar stays literal", `[{"name":"d","command":"sh -c 'echo $HOME' $PATH"}]`,
			[]brief{{"d", TypeStdio, []string{"sh", "-c", "echo $HOME", "$PATH"}, "", true}}},
		{"sse inferred from url", `[{"name":"s","url":"http://localhost:9/sse"}]`, []brief{{"s", TypeSSE, nil, "http://localhost:9/sse", true}}},
		{"streamable-http alias", `[{"name":"h","type":"streamable-http","url":"http://localhost:9/mcp"}]`, []brief{{"h", TypeHTTP, nil, "http://localhost:9/mcp", true}}},
		{"builtin inferred by name", `[{"name":"ocr","enabled":false}]`, []brief{{"ocr", TypeBuiltin, nil, "", false}}},
		{"disabled true", `{"mcpServers":{"x":{"command":"x","disabled":true}}}`, []brief{{"x", TypeStdio, []string{"x"}, "", false}}},
		{"enabled false", `[{"name":"x","command":"x","enabled":false}]`, []brief{{"x", TypeStdio, []string{"x"}, "", false}}},
		{"empty file", ``, nil},
		{"empty object", `{}`, nil},
		{"empty array", `[]`, nil},
		{"null servers", `{"servers":null}`, nil},
		{"bom", "\xef\xbb\xbf[{\"name\":\"x\",\"command\":\"x\"}]", []brief{{"x", TypeStdio, []string{"x"}, "", true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, warns := ParseConfig([]byte(tc.in), "mcp.json")
			if len(warns) > 0 {
				t.Fatalf("warnings: %v", warns)
			}
			if b := briefOf(got); !slices.EqualFunc(b, tc.want, func(a, b brief) bool {
				return a.Name == b.Name && a.Type == b.Type && slices.Equal(a.Command, b.Command) && a.URL == b.URL && a.Enabled == b.Enabled
			}) {
				t.Fatalf("got  %+v\nwant %+v", b, tc.want)
			}
		})
	}
}

func TestParseConfigFields(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "tok123")
	got, warns := ParseConfig([]byte(`[{"name":"r","url":"https://x.test/mcp","headers":{"Authorization":"Bearer ${MCP_TEST_TOKEN}","X-N":5},
		"env":{"A":"${MCP_TEST_TOKEN}","B":true},"cwd":"sub","timeout":1500,"custom":{"k":1}}]`), "f")
	if len(warns) > 0 || len(got) != 1 {
		t.Fatal(got, warns)
	}
	c := got[0]
	// Kept as written: expanded only when a trusted server connects.
	if c.Headers["Authorization"] != "Bearer ${MCP_TEST_TOKEN}" || c.Headers["X-N"] != "5" || c.Env["A"] != "${MCP_TEST_TOKEN}" || c.Env["B"] != "true" ||
		c.Cwd != "sub" || c.Timeout != 1500*time.Millisecond || string(c.Extra["custom"]) != `{"k":1}` {
		t.Fatalf("config = %+v", c)
	}
	got, _ = ParseConfig([]byte(`[{"name":"r","command":"x","timeout":"2s"}]`), "f")
	if got[0].Timeout != 2*time.Second {
		t.Fatalf("timeout = %v", got[0].Timeout)
	}
}

func TestParseConfigBadInput(t *testing.T) {
	cases := []struct {
		name      string
		in        string
		servers   []string // names still loaded
		server    string   // the warning's server
		field     string   // the warning's field
		substring string
	}{
		{"invalid json", `[{"name":"x",}]`, nil, "", "", "line 1"},
		{"top-level string", `"hello"`, nil, "", "", "array or object"},
		{"no servers key", `{"foo":1}`, nil, "", "", "no \"servers\""},
		{"servers wrong type", `{"servers":5}`, nil, "", "servers", "array or an object"},
		{"entry not object", `[5,{"name":"ok","command":"x"}]`, []string{"ok"}, "#0", "", "JSON object"},
		{"map entry not object", `{"mcpServers":{"a":"npx a"}}`, nil, "a", "", "JSON object"},
		{"missing name", `[{"command":"x"}]`, nil, "#0", "name", "missing server name"},
		{"name not string", `[{"name":3,"command":"x"}]`, nil, "#0", "name", "must be a string"},
		{"duplicate name", `[{"name":"a","command":"x"},{"name":"a","command":"y"}]`, []string{"a"}, "a", "name", "duplicate"},
		{"unknown type", `[{"name":"a","type":"pipe","command":"x"}]`, nil, "a", "type", "unknown type"},
		{"type not string", `[{"name":"a","type":1,"command":"x"}]`, nil, "a", "type", "must be a string"},
		{"nothing to connect", `[{"name":"a"}]`, nil, "a", "type", "cannot tell"},
		{"stdio without command", `[{"name":"a","type":"stdio"}]`, nil, "a", "command", "needs a command"},
		{"command number", `[{"name":"a","command":5}]`, nil, "a", "command", "string or an array"},
		{"command array of numbers", `[{"name":"a","command":[1,2]}]`, nil, "a", "command", "string or an array"},
		{"unclosed quote", `[{"name":"a","command":"node 'oops"}]`, nil, "a", "command", "invalid command line"},
		{"backquote substitution", "[{\"name\":\"a\",\"command\":\"node `id`\"}]", nil, "a", "command", "invalid command line"},
		{"args not array", `[{"name":"a","command":"x","args":"y"}]`, nil, "a", "args", "array of strings"},
		{"args without command", `[{"name":"a","args":["y"],"url":"http://h/mcp"}]`, nil, "a", "args", "without a command"},
		{"http without url", `[{"name":"a","type":"http"}]`, nil, "a", "url", "url must be http"},
		{"bad url scheme", `[{"name":"a","url":"ftp://h/x"}]`, nil, "a", "url", "http or https"},
		{"url without host", `[{"name":"a","url":"http:///x"}]`, nil, "a", "url", "no host"},
		{"url not string", `[{"name":"a","url":5}]`, nil, "a", "url", "must be a string"},
		{"env not object", `[{"name":"a","command":"x","env":["A=1"]}]`, nil, "a", "env", "object of strings"},
		{"env value object", `[{"name":"a","command":"x","env":{"A":{"b":1}}}]`, []string{"a"}, "a", "env.A", "dropped"},
		{"headers not object", `[{"name":"a","url":"http://h/mcp","headers":"x"}]`, nil, "a", "headers", "object of strings"},
		{"enabled not bool", `[{"name":"a","command":"x","enabled":"no"}]`, []string{"a"}, "a", "enabled", "true or false"},
		{"disabled not bool", `[{"name":"a","command":"x","disabled":1}]`, []string{"a"}, "a", "disabled", "true or false"},
		{"bad timeout", `[{"name":"a","command":"x","timeout":"soon"}]`, []string{"a"}, "a", "timeout", "milliseconds"},
		{"negative timeout", `[{"name":"a","command":"x","timeout":-5}]`, []string{"a"}, "a", "timeout", "out of range"},
		{"unset variable", `[{"name":"a","command":"x ${MCP_TEST_SURELY_UNSET}"}]`, []string{"a"}, "a", "command", "MCP_TEST_SURELY_UNSET is not set"},
		{"unknown builtin", `[{"name":"nope","type":"builtin"}]`, nil, "nope", "name", "no builtin preset"},
		{"both keys", `{"mcpServers":{"a":{"command":"x"}},"servers":[]}`, []string{"a"}, "", "servers", "both"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, warns := ParseConfig([]byte(tc.in), "/ws/.agent/mcp.json")
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tc.servers) {
				t.Fatalf("servers = %v, want %v", names, tc.servers)
			}
			if !slices.ContainsFunc(warns, func(w protocol.MCPWarning) bool {
				return w.File == "/ws/.agent/mcp.json" && w.Server == tc.server && w.Field == tc.field && strings.Contains(w.Message, tc.substring)
			}) {
				t.Fatalf("no warning {server %q field %q ~%q} in %+v", tc.server, tc.field, tc.substring, warns)
			}
		})
	}
}

func TestLoadConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfgs, warns, err := LoadConfigFile(filepath.Join(dir, "missing.json"))
	if err != nil || cfgs != nil || warns != nil {
		t.Fatalf("missing file = %v %v %v", cfgs, warns, err)
	}
	if got := DefaultConfigPath("/ws"); got != filepath.Join("/ws", ".agent", "mcp.json") {
		t.Fatal(got)
	}
	if _, _, err := LoadConfigFile(dir); err == nil { // a directory cannot be read
		t.Fatal("reading a directory succeeded")
	}
}

func TestSplitCommandLine(t *testing.T) {
	got, err := SplitCommandLine(`npx -y "@scope/pkg" 'a b' c\ d "e \"f\"" $X`)
	want := []string{"npx", "-y", "@scope/pkg", "a b", "c d", `e "f"`, "$X"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, bad := range []string{`a "b`, `a 'b`, "a `b`", "a | b", "a > f", "a; b"} {
		if _, err := SplitCommandLine(bad); !errors.Is(err, ErrCommandLine) {
			t.Errorf("SplitCommandLine(%q) = %v", bad, err)
		}
	}
	if got, err := SplitCommandLine(`x *.go`); err != nil || !slices.Equal(got, []string{"x", "*.go"}) {
		t.Fatalf("glob: %q, %v", got, err)
	}
}

func TestSaveConfigKeepsFormAndText(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "tok123")
	dir := t.TempDir()
	path := filepath.Join(dir, ".agent", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := `{"comment":"mine","mcpServers":{"gh":{"command":"npx -y gh-mcp","env":{"GH_TOKEN":"${MCP_TEST_TOKEN}"},"custom":{"keep":true}},"web":{"url":"https://x.test/mcp","disabled":true}}}`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgs, warns, err := LoadConfigFile(path)
	if err != nil || len(warns) > 0 || cfgs[0].Env["GH_TOKEN"] != "${MCP_TEST_TOKEN}" {
		t.Fatal(cfgs, warns, err)
	}
	// Change one field of web, add a server, keep builtins out.
	cfgs[1].Enabled = true
	cfgs = append(cfgs, ServerConfig{Name: "new", Type: TypeStdio, Command: []string{"srv", "--flag"}, Enabled: true})
	if err := SaveConfigFile(path, WithBuiltinConfigs(cfgs)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	text := string(data)
	for _, want := range []string{`"comment": "mine"`, `"mcpServers"`, `"GH_TOKEN": "${MCP_TEST_TOKEN}"`, `"command": "npx -y gh-mcp"`, `"custom": {`, `"enabled": true`} {
		if !strings.Contains(text, want) {
			t.Errorf("saved file lacks %s:\n%s", want, text)
		}
	}
	for _, bad := range []string{"tok123", `"disabled"`, `"ocr"`, `"name"`} {
		if strings.Contains(text, bad) {
			t.Errorf("saved file has %s:\n%s", bad, text)
		}
	}
	again, warns, err := LoadConfigFile(path)
	if err != nil || len(warns) > 0 {
		t.Fatal(warns, err)
	}
	if b := briefOf(again); len(b) != 3 || !b[1].Enabled || b[2].Name != "new" || !slices.Equal(b[2].Command, []string{"srv", "--flag"}) {
		t.Fatalf("reloaded %+v", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v", st.Mode())
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("temp files left: %v", entries)
	}
}

func TestSaveConfigForms(t *testing.T) {
	dir := t.TempDir()
	cfg := ServerConfig{Name: "a", Type: TypeHTTP, URL: "http://h/mcp", Enabled: true}
	for _, tc := range []struct{ existing, want string }{
		{"", `{"servers":[{"name":"a","type":"http","url":"http://h/mcp"}]}`},
		{`[]`, `[{"name":"a","type":"http","url":"http://h/mcp"}]`},
		{`{"servers":{}}`, `{"servers":{"a":{"type":"http","url":"http://h/mcp"}}}`},
		{`{"servers":[],"x":1}`, `{"servers":[{"name":"a","type":"http","url":"http://h/mcp"}],"x":1}`},
		{`not json`, `{"servers":[{"name":"a","type":"http","url":"http://h/mcp"}]}`},
	} {
		path := filepath.Join(dir, "m.json")
		os.Remove(path)
		if tc.existing != "" {
			if err := os.WriteFile(path, []byte(tc.existing), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := SaveConfigFile(path, []ServerConfig{cfg}); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		var got, want any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal([]byte(tc.want), &want)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("existing %q: saved %s, want %s", tc.existing, g, w)
		}
	}
}

func TestWithBuiltinConfigs(t *testing.T) {
	got := WithBuiltinConfigs(nil)
	if len(got) != 1 || got[0].Name != "ocr" || got[0].Type != TypeBuiltin || !got[0].Enabled {
		t.Fatalf("%+v", got)
	}
	user, _ := ParseConfig([]byte(`[{"name":"ocr","enabled":false}]`), "f")
	got = WithBuiltinConfigs(user)
	if len(got) != 1 || got[0].Enabled {
		t.Fatalf("disabled ocr: %+v", got)
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`[{"name":"a","command":"npx -y x","env":{"A":"${B}"}}]`,
		`{"servers":{"a":{"url":"http://h/sse","headers":{"X":"1"}}}}`,
		`{"mcpServers":{"a":{"command":["x"],"args":["y"],"disabled":true,"timeout":"1s"}}}`,
		`[{"name":"ocr","enabled":false}]`, `{"servers":[5]}`, `[{"name":"a","command":"'"}]`, ``, `{}`,
		`{"mcpServers":{"w":{"url":"https://${HOST}/mcp","headers":{"A":"Bearer ${OPENAI_API_KEY}"}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfgs, _ := ParseConfig(data, "fuzz.json")
		seen := map[string]bool{}
		for _, c := range cfgs {
			if err := c.Validate(); err != nil {
				t.Fatalf("ParseConfig returned an invalid config %+v: %v", c, err)
			}
			if seen[c.Name] {
				t.Fatalf("duplicate %q", c.Name)
			}
			seen[c.Name] = true
		}
		// What is saved, in the file's own form, parses back to the same
		// servers.
		out, err := encodeFile(data, cfgs)
		if err != nil {
			t.Fatal(err)
		}
		back, _ := ParseConfig(out, "saved.json")
		if len(back) != len(cfgs) {
			t.Fatalf("round trip: %d configs, then %d:\n%s", len(cfgs), len(back), out)
		}
		for i := range back {
			if !sameConnection(back[i], cfgs[i]) {
				t.Fatalf("round trip changed %+v into %+v", cfgs[i], back[i])
			}
			// What was approved is what is saved.
			if back[i].Hash() != cfgs[i].Hash() {
				t.Fatalf("round trip changed the hash of %+v", cfgs[i])
			}
		}
	})
}

func TestServerWireForm(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "tok123")
	c, warns, err := ParseServer([]byte(`{"command":"npx -y pkg","env":{"T":"${MCP_TEST_TOKEN}"},"disabled":true,"x-ui":{"color":"red"}}`), "gh")
	if err != nil || len(warns) > 0 || c.Name != "gh" || c.Env["T"] != "${MCP_TEST_TOKEN}" || c.Enabled || !slices.Equal(c.Command, []string{"npx", "-y", "pkg"}) {
		t.Fatalf("ParseServer = %+v, %v, %v", c, warns, err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if strings.Contains(text, "tok123") || !strings.Contains(text, `"T":"${MCP_TEST_TOKEN}"`) || !strings.Contains(text, `"enabled":false`) ||
		strings.Contains(text, "disabled") || !strings.Contains(text, `"x-ui":{"color":"red"}`) || !strings.Contains(text, `"name":"gh"`) {
		t.Fatalf("wire form = %s", text)
	}
	var back ServerConfig
	if err := json.Unmarshal(b, &back); err != nil || !sameConnection(back, c) {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
	if _, _, err := ParseServer([]byte(`{"name":"x","command":5}`), ""); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "field command") {
		t.Fatalf("bad server = %v", err)
	}
	if err := json.Unmarshal([]byte(`[1]`), &back); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("not an object = %v", err)
	}
	fresh, _ := json.Marshal(ServerConfig{Name: "n", Type: TypeHTTP, URL: "http://h/mcp", Enabled: true, Timeout: 1500 * time.Millisecond})
	if string(fresh) != `{"name":"n","type":"http","url":"http://h/mcp","timeout":1500,"enabled":true}` {
		t.Fatalf("fresh = %s", fresh)
	}
}
