//go:build !windows

package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

func TestLazySearchLoadCall(t *testing.T) {
	t.Setenv("ZQAGENT_MCP_LAZY", "")
	m, reg, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "big", "-extra-tools", "20")}, Options{Lazy: LazyOptions{ThresholdTools: 16, MaxLoaded: 10}})
	if err := m.Connect(context.Background(), "big"); err != nil {
		t.Fatal(err)
	}
	if st := stateOf(m, "big"); !st.Lazy || st.Tools != 29 {
		t.Fatalf("status = %+v", st)
	}
	if got := reg.Names(); !slices.Equal(got, []string{CallToolName, SearchToolName}) {
		t.Fatalf("lazy registry = %v", got)
	}
	search, _ := reg.Lookup(SearchToolName)
	call, _ := reg.Lookup(CallToolName)
	if search.Meta.RequiresApproval || search.Meta.Class != tools.ClassRead || search.Meta.RiskLevel != tools.RiskLow || !search.Meta.Parallel() {
		t.Fatalf("search meta = %+v", search.Meta)
	}
	if !call.Meta.RequiresApproval || call.Meta.RiskLevel != tools.RiskHigh {
		t.Fatalf("call meta = %+v", call.Meta)
	}

	out, err := callTool(t, reg, SearchToolName, `{"query":"celsius to fahrenheit"}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	var res struct {
		Tools []SearchResult `json:"tools"`
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res.Tools) == 0 || res.Tools[0].Name != "mcp__big__extra_007" {
		t.Fatalf("search = %s (%v)", b, err)
	}
	if len(res.Tools) > 8 {
		t.Fatalf("search loaded %d tools", len(res.Tools))
	}
	if _, ok := reg.Lookup("mcp__big__extra_007"); !ok {
		t.Fatalf("match not loaded: %v", reg.Names())
	}
	spec, _ := reg.Lookup("mcp__big__extra_007")
	if !spec.Meta.RequiresApproval || spec.Source != "mcp:big" {
		t.Fatalf("loaded spec = %+v", spec)
	}

	// Call it directly, and through mcp_call_tool by its three names.
	if out, err := callTool(t, reg, "mcp__big__extra_007", `{"x":"1"}`); err != nil || out != "extra_007 got 1" {
		t.Fatalf("direct = %v, %v", out, err)
	}
	for _, name := range []string{"mcp__big__extra_007", "big/extra_007", "extra_007"} {
		out, err := callTool(t, reg, CallToolName, `{"name":"`+name+`","arguments":{"x":"2"}}`)
		if err != nil || out != "extra_007 got 2" {
			t.Fatalf("mcp_call_tool %s = %v, %v", name, out, err)
		}
	}
	if out, err := callTool(t, reg, CallToolName, `{"name":"big/echo","arguments":{"text":"unloaded"}}`); err != nil || out != "echo: unloaded" {
		t.Fatalf("call of an unloaded tool = %v, %v", out, err)
	}
	if _, err := callTool(t, reg, CallToolName, `{"name":"nope"}`); tools.ErrorType(err) != "not_found" {
		t.Fatalf("unknown tool = %v", err)
	}

	// A broad search fills the loaded set up to MaxLoaded, evicting the
	// least recently used.
	if _, err := callTool(t, reg, SearchToolName, `{"query":"extra widget"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := callTool(t, reg, SearchToolName, `{"query":"echo add image"}`); err != nil {
		t.Fatal(err)
	}
	loaded := 0
	for _, n := range reg.Names() {
		if strings.HasPrefix(n, "mcp__big__") {
			loaded++
		}
	}
	if loaded != 10 {
		t.Fatalf("loaded %d tools, want MaxLoaded 10: %v", loaded, reg.Names())
	}
	if _, ok := reg.Lookup("mcp__big__echo"); !ok {
		t.Fatal("the latest match was evicted")
	}
}

func TestLazyForcedByEnv(t *testing.T) {
	t.Setenv("ZQAGENT_MCP_LAZY", "1")
	m, reg, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "small")}, Options{Lazy: LazyOptions{ThresholdTools: 16}})
	if err := m.Connect(context.Background(), "small"); err != nil {
		t.Fatal(err)
	}
	if reg.Len() != 2 || !stateOf(m, "small").Lazy {
		t.Fatalf("forced lazy: %v", reg.Names())
	}

	t.Setenv("ZQAGENT_MCP_LAZY", "0")
	m2, reg2, _ := newTestManager(t, []ServerConfig{stdioConfig(t, "big", "-extra-tools", "20")}, Options{Lazy: LazyOptions{ThresholdTools: 16}})
	if err := m2.Connect(context.Background(), "big"); err != nil {
		t.Fatal(err)
	}
	if reg2.Len() != 29 || stateOf(m2, "big").Lazy {
		t.Fatalf("forced eager: %d tools", reg2.Len())
	}
}
