package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The elicitation tools (-elicit): each asks the user through the client and
// reports what the server got back, as its result and, with -elicit-log, as
// a line appended to that file (the server's view survives a cancelled
// call):
//   - elicit_form asks a form the multi round-trip way (protocol 2026-07-28;
//     mcp-go bridges it for earlier clients);
//   - elicit_direct asks the same form with a server-initiated
//     elicitation/create (the way of servers before 2026-07-28);
//   - elicit_url asks a URL-mode elicitation of its argument url;
//   - with -elicit-at-list the server asks once after its first tools/list
//     (the client's handshake), outside any tool call.

// formSchema is the form the elicit tools ask.
var formSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":  map[string]any{"type": "string", "minLength": 1, "description": "Your name"},
		"age":   map[string]any{"type": "integer", "minimum": 0, "maximum": 150},
		"email": map[string]any{"type": "string", "format": "email"},
		"color": map[string]any{"type": "string", "enum": []any{"red", "green"}},
	},
	"required": []any{"name"},
}

func seen(r *mcp.ElicitationResult) string {
	if r == nil {
		return "action=none"
	}
	b, _ := json.Marshal(r.Content)
	return fmt.Sprintf("action=%s content=%s", r.Action, b)
}

// appendSeen appends what a tool got back to logFile ("": nowhere).
func appendSeen(logFile, tool, what string) {
	if logFile == "" {
		return
	}
	f, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%s %s\n", tool, what)
	_ = f.Close()
}

func addElicitTools(s *server.MCPServer, logFile string) {
	logSeen := func(tool, what string) { appendSeen(logFile, tool, what) }
	s.AddTool(mcp.NewTool("elicit_form", mcp.WithDescription("Ask the user a form (multi round-trip).")),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, ok := server.InputResponse(r.Params.InputResponses, "form"); ok {
				got := seen(server.ElicitationResponse(r.Params.InputResponses, "form"))
				logSeen("elicit_form", got)
				return text(got), nil
			}
			return server.NewInputRequestBuilder("").Elicit("form", mcp.ElicitationParams{
				Message: "Who are you?", RequestedSchema: formSchema,
			}).ToolResult(), nil
		})
	s.AddTool(mcp.NewTool("elicit_direct", mcp.WithDescription("Ask the user a form (server-initiated request).")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// Not cancelled with the call: the server waits for the
			// client's answer to its own request.
			res, err := s.RequestElicitation(context.WithoutCancel(ctx), mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Message: "Who are you?", RequestedSchema: formSchema,
			}})
			got := seen(res)
			if err != nil {
				got = "error=" + err.Error()
			}
			logSeen("elicit_direct", got)
			return text(got), nil
		})
	s.AddTool(mcp.NewTool("elicit_flood", mcp.WithDescription("Ask 8 forms at once (server-initiated requests).")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			const n = 8
			got := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					res, err := s.RequestElicitation(context.WithoutCancel(ctx), mcp.ElicitationRequest{Params: mcp.ElicitationParams{
						Message: fmt.Sprintf("Form %d", i), RequestedSchema: formSchema,
					}})
					got[i] = "action=none"
					if res != nil {
						got[i] = "action=" + string(res.Action)
					}
					if err != nil {
						got[i] = "error=" + err.Error()
					}
					logSeen("elicit_flood", got[i])
				})
			}
			wg.Wait()
			slices.Sort(got)
			return text(strings.Join(got, " ")), nil
		})
	s.AddTool(mcp.NewTool("elicit_url", mcp.WithDescription("Ask the user to open a URL."),
		mcp.WithString("url", mcp.Required())),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := s.RequestURLElicitation(context.WithoutCancel(ctx), server.ClientSessionFromContext(ctx),
				"el-1", r.GetString("url", ""), "Sign in to continue")
			got := seen(res)
			if err != nil {
				got = "error=" + err.Error()
			}
			logSeen("elicit_url", got)
			return text(got), nil
		})
}

// elicitAtList makes the server ask, once, right after its first tools/list
// (the client's handshake): a request that belongs to no tool call.
func elicitAtList(s *server.MCPServer, hooks *server.Hooks, logFile string) {
	var once sync.Once
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, _ *mcp.ListToolsResult) {
		once.Do(func() {
			bg := context.WithoutCancel(ctx)
			go func() {
				res, err := s.RequestElicitation(bg, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
					Message: "Out of the blue", RequestedSchema: formSchema,
				}})
				got := seen(res)
				if err != nil {
					got = "error=" + err.Error()
				}
				appendSeen(logFile, "elicit_at_list", got)
			}()
		})
	})
}
