//go:build !windows

package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

// everythingConfig is @modelcontextprotocol/server-everything from
// testdata/npm over stdio. Without it the test fails (make deps installs
// it) unless ZQAGENT_SKIP_NPM=1.
func everythingConfig(t *testing.T) ServerConfig {
	t.Helper()
	pkg, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", "@modelcontextprotocol", "server-everything"))
	if err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(pkg, "dist", "index.js")
	node, nodeErr := exec.LookPath("node")
	if _, err := os.Stat(entry); err != nil || nodeErr != nil {
		if os.Getenv("ZQAGENT_SKIP_NPM") == "1" {
			t.Skip("ZQAGENT_SKIP_NPM=1: skipping the @modelcontextprotocol/server-everything test")
		}
		t.Fatalf("@modelcontextprotocol/server-everything is not installed (%s: %v; node: %v): run `make deps` "+
			"(it runs npm install in mcp/testdata/npm), or set ZQAGENT_SKIP_NPM=1", entry, err, nodeErr)
	}
	return ServerConfig{Name: "everything", Type: TypeStdio, Command: []string{node, entry, "stdio"}, Enabled: true}
}

func TestEverythingServer(t *testing.T) {
	eager := false
	m, reg, _ := newTestManager(t, []ServerConfig{everythingConfig(t)}, Options{Lazy: LazyOptions{Enabled: &eager}})
	if err := m.Connect(context.Background(), "everything"); err != nil {
		t.Fatal(err)
	}
	st := stateOf(m, "everything")
	if st.State != StateConnected || st.Tools < 5 {
		t.Fatalf("status = %+v, tools %v", st, reg.Names())
	}
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image"} {
		if _, ok := reg.Lookup(want); !ok {
			t.Fatalf("%s missing from %v", want, reg.Names())
		}
	}
	out, err := callTool(t, reg, "mcp__everything__echo", `{"message":"hello from Go"}`)
	if err != nil || out != "Echo: hello from Go" {
		t.Fatalf("echo = %v, %v", out, err)
	}
	out, err = callTool(t, reg, "mcp__everything__get-sum", `{"a":2,"b":3}`)
	if s, _ := out.(string); err != nil || !strings.Contains(s, "5") {
		t.Fatalf("get-sum = %v, %v", out, err)
	}
	out, err = callTool(t, reg, "mcp__everything__get-tiny-image", `{}`)
	if r, ok := out.(tools.Result); err != nil || !ok || len(r.Attachments) == 0 || !strings.HasPrefix(r.Attachments[0].DataURL, "data:image/") {
		t.Fatalf("get-tiny-image = %#v, %v", out, err)
	}
}
