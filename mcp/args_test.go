package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

// TestCallArgumentsNormalized (issue 14): an MCP tool call gets the same
// strict decode as every tool call: duplicate and case-variant keys are
// refused before the server is contacted, also when they come nested in
// mcp_call_tool's arguments; what the server gets is the canonical object.
func TestCallArgumentsNormalized(t *testing.T) {
	m, reg, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "test")}, Options{})
	if _, failed := m.ConnectAll(context.Background()); len(failed) > 0 {
		t.Fatalf("connect: %v", failed)
	}
	for _, args := range []string{
		`{"text":"shown","Text":"sent"}`,
		`{"text":"shown","text":"sent"}`,
		`{"TEXT":"sent"}`,
		`{"text":["not","a","string"]}`,
	} {
		_, err := callTool(t, reg, "mcp__test__echo", args)
		if !errors.Is(err, tools.ErrInvalidArgs) || tools.ErrorType(err) != "invalid_arguments" {
			t.Errorf("echo %s = %v, want invalid_arguments", args, err)
		}
	}
	// Extra keys follow the server's schema (JSON Schema allows them).
	if out, err := callTool(t, reg, "mcp__test__echo", `{ "extra": {"b":1,"a":2}, "text" : "hi" }`); err != nil || out != "echo: hi" {
		t.Fatalf("echo = %v, %v", out, err)
	}
	body, err := m.normalizeFor("mcp__test__echo", []byte(`{ "text" : "a<b", "extra": {"b":1,"a":2.50} }`))
	if err != nil || string(body) != `{"extra":{"a":2.50,"b":1},"text":"a\u003cb"}` {
		t.Fatalf("canonical body = %s, %v", body, err)
	}

	// mcp_call_tool's nested arguments are checked against the target's schema.
	h := m.callHandler
	_, err = h(context.Background(), tools.Call{ID: "c", Name: CallToolName, Args: []byte(`{"name":"mcp__test__echo","arguments":{"text":"a","Text":"b"}}`)})
	if !errors.Is(err, tools.ErrInvalidArgs) || !strings.Contains(err.Error(), "differ only in case") {
		t.Fatalf("nested case variant = %v", err)
	}
}
