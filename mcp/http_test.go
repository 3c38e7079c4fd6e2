package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// newInProcessServer is a real mcp-go server with a few tools.
func newInProcessServer() *server.MCPServer {
	s := server.NewMCPServer("inproc", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("greet", mcp.WithDescription("Greet someone."), mcp.WithString("who", mcp.Required())),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("hello " + r.GetString("who", "")), nil
		})
	s.AddTool(mcp.NewTool("doc", mcp.WithDescription("Return an embedded resource.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.TextContent{Type: "text", Text: "see:"},
				mcp.EmbeddedResource{Type: "resource", Resource: mcp.TextResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "the content"}},
				mcp.EmbeddedResource{Type: "resource", Resource: mcp.BlobResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: "AAAA"}},
			}}, nil
		})
	return s
}

// headerCheck counts requests that carry the expected header.
func headerCheck(h http.Handler, seen *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer t0k" {
			seen.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

func TestHTTPAndSSETransports(t *testing.T) {
	var httpSeen, sseSeen atomic.Int32
	hs := httptest.NewServer(headerCheck(server.NewStreamableHTTPServer(newInProcessServer()), &httpSeen))
	defer hs.Close()
	sse := server.NewSSEServer(newInProcessServer())
	ss := httptest.NewServer(headerCheck(sse, &sseSeen))
	defer ss.Close()
	server.WithBaseURL(ss.URL)(sse)
	defer sse.Shutdown(context.Background())

	hdr := map[string]string{"Authorization": "Bearer t0k"}
	cfgs := []ServerConfig{
		{Name: "web", Type: TypeHTTP, URL: hs.URL + "/mcp", Headers: hdr, Enabled: true},
		{Name: "events", Type: TypeSSE, URL: ss.URL + "/sse", Headers: hdr, Enabled: true},
	}
	m, reg, _ := newTestManager(t, cfgs, Options{})
	connected, failed := m.ConnectAll(context.Background())
	if len(connected) != 2 {
		t.Fatalf("ConnectAll = %v, %v", connected, failed)
	}
	for _, name := range []string{"mcp__web__greet", "mcp__events__greet"} {
		out, err := callTool(t, reg, name, `{"who":"ada"}`)
		if err != nil || out != "hello ada" {
			t.Fatalf("%s = %v, %v", name, out, err)
		}
	}
	out, err := callTool(t, reg, "mcp__web__doc", `{}`)
	text, _ := out.(string)
	if err != nil || !strings.Contains(text, "see:\n[resource file:///a.txt]\nthe content") || !strings.Contains(text, "binary data") {
		t.Fatalf("doc = %q, %v", out, err)
	}
	if httpSeen.Load() == 0 || sseSeen.Load() == 0 {
		t.Fatalf("headers not sent: http %d, sse %d", httpSeen.Load(), sseSeen.Load())
	}
	if err := m.CloseAll(); err != nil {
		t.Fatal(err)
	}
}

func TestHTTPConnectFailure(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusUnauthorized)
	}))
	defer hs.Close()
	m, _, _ := newTestManager(t, []ServerConfig{{Name: "locked", Type: TypeHTTP, URL: hs.URL, Enabled: true}}, Options{})
	if err := m.Connect(context.Background(), "locked"); err == nil {
		t.Fatal("connect to a 401 server succeeded")
	}
	if st := stateOf(m, "locked"); st.State != StateFailed || st.LastError == "" {
		t.Fatalf("%+v", st)
	}
}

func TestHTTPServerGoneAndToolsChanged(t *testing.T) {
	hs := httptest.NewServer(server.NewStreamableHTTPServer(newInProcessServer()))
	srv := server.NewMCPServer("live", "1.0.0", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("first", mcp.WithDescription("The first tool.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("1"), nil
		})
	sse := server.NewSSEServer(srv)
	ss := httptest.NewServer(sse)
	defer ss.Close()
	server.WithBaseURL(ss.URL)(sse)
	defer sse.Shutdown(context.Background())

	m, reg, log := newTestManager(t, []ServerConfig{
		{Name: "web", Type: TypeHTTP, URL: hs.URL + "/mcp", Enabled: true},
		{Name: "live", Type: TypeSSE, URL: ss.URL + "/sse", Enabled: true},
	}, Options{})
	if connected, failed := m.ConnectAll(context.Background()); len(connected) != 2 {
		t.Fatal(connected, failed)
	}

	// The server adds a tool: notifications/tools/list_changed re-lists.
	srv.AddTool(mcp.NewTool("second", mcp.WithDescription("Added later.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("2"), nil
		})
	waitFor(t, "the new tool registered", func() bool { _, ok := reg.Lookup("mcp__live__second"); return ok })
	if out, err := callTool(t, reg, "mcp__live__second", `{}`); err != nil || out != "2" {
		t.Fatalf("second = %v, %v", out, err)
	}

	// The HTTP server goes away: the next call fails and the server is
	// reported failed.
	hs.CloseClientConnections()
	hs.Close()
	_, err := callTool(t, reg, "mcp__web__greet", `{"who":"x"}`)
	if !errors.Is(err, ErrServerDied) {
		t.Fatalf("call to a gone server = %v", err)
	}
	if st := stateOf(m, "web"); st.State != StateFailed || !log.has("web", StateFailed) {
		t.Fatalf("status = %+v", st)
	}
	if _, ok := reg.Lookup("mcp__web__greet"); ok {
		t.Fatal("tools of a gone server stay registered")
	}
	// The SSE stream breaks: the server is reported failed at once.
	ss.CloseClientConnections()
	waitFor(t, "the SSE server failed", func() bool { return stateOf(m, "live").State == StateFailed })
	if !log.has("live", StateFailed) || reg.Len() != 0 {
		t.Fatalf("after the SSE stream broke: %v", reg.Names())
	}
	if err := m.CloseAll(); err != nil { // before the SSE server waits for its stream
		t.Fatal(err)
	}
}
