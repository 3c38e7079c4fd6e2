package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/tools"
)

func TestCheckElicitURL(t *testing.T) {
	for _, tc := range []struct {
		url, host string // host "" = refused
	}{
		{"https://example.com/login?x=1", "example.com"},
		{"HTTPS://Example.COM:8443/a", "example.com"},
		{"https://bücher.example/auth", "xn--bcher-kva.example"},
		{"https://xn--bcher-kva.example/auth", "xn--bcher-kva.example"},
		{"http://127.0.0.1:8080/callback", "127.0.0.1"},
		{"http://localhost:3000/", "localhost"},
		{"http://[::1]:9/", "::1"},
		{"http://evil.example/login", ""},
		{"http://127.0.0.1.evil.example/", ""},
		{"javascript:alert(1)", ""},
		{"file:///etc/passwd", ""},
		{"data:text/html,<script>1</script>", ""},
		{"ftp://example.com/", ""},
		{"https://bank.example@evil.example/", ""},
		{"https:///no-host", ""},
		{"//example.com/", ""},
		{"https://" + strings.Repeat("a", 9000) + ".example/", ""},
	} {
		host, err := CheckElicitURL(tc.url)
		if tc.host == "" {
			require.ErrorIs(t, err, ErrElicitation, "%s must be refused", tc.url)
			continue
		}
		require.NoError(t, err, tc.url)
		require.Equal(t, tc.host, host, tc.url)
	}
}

func TestCheckRequestedSchema(t *testing.T) {
	ok := []string{
		`{"type":"object","properties":{"name":{"type":"string","minLength":1,"format":"email"},"n":{"type":"integer","minimum":1},"b":{"type":"boolean","default":true}},"required":["name"]}`,
		`{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"r","title":"Red"}]},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}}}`,
		`{"type":"object","properties":{}}`,
		`{"type":"object","properties":{"$ref":{"type":"string","default":"$ref","enum":["$ref"]}}}`, // names and values, not references
	}
	for _, s := range ok {
		require.NoError(t, CheckRequestedSchema(json.RawMessage(s)), s)
	}
	bad := map[string]string{
		`{"type":"string"}`: "type must be object",
		`{"type":"object","properties":{"a":{"type":"object","properties":{}}}}`:          "not a primitive",
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}`: "string enum",
		`{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`:              "$ref",
		`{"type":"object","$defs":{"x":{}},"properties":{}}`:                              "$defs",
		// References at any depth: never fetched, and never a cycle no
		// answer validates against.
		`{"type":"object","properties":{"a":{"type":"string","allOf":[{"$ref":"#/properties/a"}]}}}`:      "$ref",
		`{"type":"object","properties":{"a":{"type":"string","anyOf":[{"$ref":"https://x.example/s"}]}}}`: "$ref",
		`{"type":"object","properties":{"a":{"type":"string"}},"not":{"$dynamicRef":"#x"}}`:               "$dynamicRef",
		`{"type":"object","properties":{"a":{"type":"string","minLength":"one"}}}`:                        "does not compile",
		`[1]`: "not an object",
	}
	for s, why := range bad {
		err := CheckRequestedSchema(json.RawMessage(s))
		require.ErrorIs(t, err, ErrElicitation, s)
		require.Contains(t, err.Error(), why, s)
	}
}

func TestValidateContentNamesTheField(t *testing.T) {
	schema, err := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":  map[string]any{"type": "string", "minLength": 1},
			"age":   map[string]any{"type": "integer", "minimum": 0, "maximum": 150},
			"email": map[string]any{"type": "string", "format": "email"},
			"color": map[string]any{"type": "string", "enum": []any{"red", "green"}},
		},
		"required": []any{"name"},
	})
	require.NoError(t, err)
	require.NoError(t, ValidateContent(schema, json.RawMessage(`{"name":"Ada","age":36,"email":"ada@example.com","color":"red"}`)))
	for content, field := range map[string]string{
		`{}`:                                    "name",
		`{"name":""}`:                           "name",
		`{"name":"Ada","age":200}`:              "age",
		`{"name":"Ada","age":1.5}`:              "age",
		`{"name":"Ada","email":"not-an-email"}`: "email",
		`{"name":"Ada","color":"blue"}`:         "color",
		`{"name":7}`:                            "name",
	} {
		err := ValidateContent(schema, json.RawMessage(content))
		var ce *ContentError
		require.ErrorAs(t, err, &ce, content)
		require.Equal(t, field, ce.Field, "%s: %v", content, err)
	}
}

// fakeElicitor is the engine's side of a tool call in these tests: it
// records what it was asked and answers with answer.
type fakeElicitor struct {
	mu     sync.Mutex
	asked  []tools.Elicitation
	answer func(ctx context.Context, el tools.Elicitation) (tools.ElicitationAnswer, error)
}

func (f *fakeElicitor) Elicit(ctx context.Context, el tools.Elicitation) (tools.ElicitationAnswer, error) {
	f.mu.Lock()
	f.asked = append(f.asked, el)
	f.mu.Unlock()
	return f.answer(ctx, el)
}

func (f *fakeElicitor) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

func answerWith(action, content string) func(context.Context, tools.Elicitation) (tools.ElicitationAnswer, error) {
	return func(context.Context, tools.Elicitation) (tools.ElicitationAnswer, error) {
		return tools.ElicitationAnswer{Action: action, Content: json.RawMessage(content)}, nil
	}
}

// callWith runs a tool of reg with el as the call's Elicitor.
func callWith(t *testing.T, ctx context.Context, reg *tools.Registry, el tools.Elicitor, name, args string) string {
	t.Helper()
	spec, ok := reg.Lookup(name)
	require.True(t, ok, "tool %s; have %v", name, reg.Names())
	if el != nil {
		ctx = tools.WithElicitor(ctx, el)
	}
	out, err := spec.Handler(ctx, tools.Call{ID: "c1", Name: name, Args: []byte(args)})
	require.NoError(t, err)
	return toolText(t, out)
}

func toolText(t *testing.T, out any) string {
	t.Helper()
	if s, ok := out.(string); ok {
		return s
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	return string(b)
}

// elicitServer connects the test server with its elicitation tools.
func elicitServer(t *testing.T, args ...string) *tools.Registry {
	t.Helper()
	m, reg, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "el", append([]string{"-elicit"}, args...)...)}, Options{})
	connected, failed := m.ConnectAll(context.Background())
	require.Equal(t, []string{"el"}, connected, "%v", failed)
	return reg
}

// TestElicitationReachesTheServer: a real stdio server's form elicitation,
// asked both ways (multi round-trip and server-initiated), reaches the
// call's Elicitor with its schema, and the server gets exactly the answer:
// accept with content, decline, cancel; an Elicitor that fails (no answer)
// is cancel.
func TestElicitationReachesTheServer(t *testing.T) {
	reg := elicitServer(t)
	for _, tool := range []string{"mcp__el__elicit_form", "mcp__el__elicit_direct"} {
		for _, tc := range []struct {
			action, content string
			err             error
			want            string
		}{
			{"accept", `{"name":"Ada","age":36}`, nil, `action=accept content={"age":36,"name":"Ada"}`},
			{"decline", ``, nil, `action=decline content=null`},
			{"cancel", ``, nil, `action=cancel content=null`},
			{"", ``, errors.New("the turn ended"), `action=cancel content=null`},
		} {
			f := &fakeElicitor{answer: func(context.Context, tools.Elicitation) (tools.ElicitationAnswer, error) {
				return tools.ElicitationAnswer{Action: tc.action, Content: json.RawMessage(tc.content)}, tc.err
			}}
			got := callWith(t, tctx(t), reg, f, tool, `{}`)
			require.Contains(t, got, tc.want, "%s %s", tool, tc.action)
			require.Equal(t, 1, f.count())
			el := f.asked[0]
			require.Equal(t, "el", el.Server)
			require.Equal(t, "form", el.Mode)
			require.Equal(t, "Who are you?", el.Message)
			require.Contains(t, string(el.RequestedSchema), `"required":["name"]`)
		}
	}
}

// TestElicitationEndsWithTheCall: a server-initiated elicitation whose call
// is cancelled (the turn was interrupted) while the user has not answered
// gets cancel, as the server sees it.
func TestElicitationEndsWithTheCall(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "seen")
	reg := elicitServer(t, "-elicit-log", logFile)
	asked := make(chan struct{})
	f := &fakeElicitor{answer: func(ctx context.Context, _ tools.Elicitation) (tools.ElicitationAnswer, error) {
		close(asked)
		<-ctx.Done()
		return tools.ElicitationAnswer{}, ctx.Err()
	}}
	ctx, cancel := context.WithCancel(tctx(t))
	spec, _ := reg.Lookup("mcp__el__elicit_direct")
	done := make(chan error, 1)
	go func() {
		_, err := spec.Handler(tools.WithElicitor(ctx, f), tools.Call{ID: "c1", Name: spec.Name, Args: []byte(`{}`)})
		done <- err
	}()
	select {
	case <-asked:
	case err := <-done:
		t.Fatalf("the call ended (%v) without asking", err)
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	waitFor(t, "the server's view of the answer", func() bool {
		b, _ := os.ReadFile(logFile)
		return strings.Contains(string(b), "elicit_direct action=cancel")
	})
}

// TestElicitationFloodAskedOneAtATime: a server that sends many
// elicitation requests at once during a call has one shown at a time; the
// ones that come while it waits for the user are declined at once.
func TestElicitationFloodAskedOneAtATime(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "seen")
	reg := elicitServer(t, "-elicit-log", logFile)
	var inFlight, most atomic.Int32
	f := &fakeElicitor{answer: func(ctx context.Context, _ tools.Elicitation) (tools.ElicitationAnswer, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		// Answer once the server has the other seven answers (with the
		// old code they all wait here: cancel at the deadline).
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for {
			b, _ := os.ReadFile(logFile)
			if strings.Count(string(b), "elicit_flood ") >= 7 {
				return tools.ElicitationAnswer{Action: "accept", Content: json.RawMessage(`{"name":"Ada"}`)}, nil
			}
			select {
			case <-wctx.Done():
				return tools.ElicitationAnswer{}, wctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	}}
	got := callWith(t, tctx(t), reg, f, "mcp__el__elicit_flood", `{}`)
	require.Equal(t, int32(1), most.Load(), "one form at a time")
	require.Equal(t, 1, f.count())
	require.Contains(t, got, "action=accept "+strings.Repeat("action=decline ", 6)+"action=decline")
}

// TestElicitationURLMode: a URL-mode elicitation is shown with its host
// (punycode for an IDN) only for https: or loopback http:; any other URL is
// declined to the server without asking anyone.
func TestElicitationURLMode(t *testing.T) {
	reg := elicitServer(t)
	for _, tc := range []struct {
		url, host string
	}{
		{"https://bücher.example/sign-in", "xn--bcher-kva.example"},
		{"https://login.example.com/x", "login.example.com"},
		{"http://127.0.0.1:9/cb", "127.0.0.1"},
		{"javascript:alert(1)", ""},
		{"file:///etc/passwd", ""},
		{"http://evil.example/login", ""},
		{"https://good.example@evil.example/", ""},
	} {
		f := &fakeElicitor{answer: answerWith("accept", "")}
		args, _ := json.Marshal(map[string]string{"url": tc.url})
		got := callWith(t, tctx(t), reg, f, "mcp__el__elicit_url", string(args))
		if tc.host == "" {
			require.Contains(t, got, "action=decline", tc.url)
			require.Zero(t, f.count(), "%s was shown", tc.url)
			continue
		}
		require.Contains(t, got, "action=accept content=null", tc.url)
		require.Equal(t, 1, f.count())
		require.Equal(t, tc.host, f.asked[0].Host)
		require.Equal(t, tc.url, f.asked[0].URL)
		require.Equal(t, "url", f.asked[0].Mode)
		require.Equal(t, "el-1", f.asked[0].ElicitationID)
	}
}

// TestElicitationOutsideACallIsDeclined: a server that asks when no tool
// call of its is in flight (here: right after the handshake) gets decline.
func TestElicitationOutsideACallIsDeclined(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "seen")
	elicitServer(t, "-elicit-at-list", "-elicit-log", logFile)
	waitFor(t, "the server's view of the answer", func() bool {
		b, _ := os.ReadFile(logFile)
		return len(b) > 0
	})
	b, err := os.ReadFile(logFile)
	require.NoError(t, err)
	require.Equal(t, "elicit_at_list action=decline content=null\n", string(b))
}

// TestElicitationWithoutAnElicitorIsDeclined: a call made with no session
// behind it (no Elicitor in its context) declines the server's request.
func TestElicitationWithoutAnElicitorIsDeclined(t *testing.T) {
	reg := elicitServer(t)
	for _, tool := range []string{"mcp__el__elicit_form", "mcp__el__elicit_direct"} {
		require.Contains(t, callWith(t, tctx(t), reg, nil, tool, `{}`), "action=decline", tool)
	}
}

// FuzzElicitationChecks: a server's URL, schema and the user's content never
// panic the checks; what is offered is https: or loopback http:.
func FuzzElicitationChecks(f *testing.F) {
	f.Add("https://bücher.example/x", `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":"x"}`)
	f.Add("javascript:alert(1)", `{"type":"object","properties":{"a":{"$ref":"#"}}}`, `[]`)
	f.Add("http://[::1]:80/", `{"type":"object","properties":{"n":{"type":"integer","maximum":1e308}}}`, `{"n":1e400}`)
	f.Fuzz(func(t *testing.T, u, schema, content string) {
		if host, err := CheckElicitURL(u); err == nil {
			low := strings.ToLower(u)
			if !strings.HasPrefix(low, "https:") && !(strings.HasPrefix(low, "http:") && loopback(host)) {
				t.Fatalf("offered %q (host %q)", u, host)
			}
		}
		if CheckRequestedSchema(json.RawMessage(schema)) == nil {
			_ = ValidateContent(json.RawMessage(schema), json.RawMessage(content))
		}
	})
}
