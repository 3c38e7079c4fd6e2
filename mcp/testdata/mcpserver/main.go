// Command mcpserver is the stdio MCP server the mcp package's tests build
// and run: echo, add, an image result, a call that sleeps until cancelled,
// one that crashes the process, and helpers that report its pid, its
// environment and a spawned grandchild; with -mark-dir, two tools with a
// side effect the permission tests can see (a file in that folder).
package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// onePixelPNG is a 1x1 PNG.
var onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

func text(s string) *mcp.CallToolResult { return mcp.NewToolResultText(s) }

func main() {
	extra := flag.Int("extra-tools", 0, "register this many more tools (lazy-mode tests)")
	markDir := flag.String("mark-dir", "", "register write_mark and run_shell, which create a file in this folder (permission tests)")
	elicit := flag.Bool("elicit", false, "register the elicitation tools (elicit.go)")
	elicitLog := flag.String("elicit-log", "", "append what the elicitation tools got back to this file")
	elicitAtStart := flag.Bool("elicit-at-list", false, "ask once after the first tools/list, outside any call (elicit.go)")
	flag.Parse()
	fmt.Fprintln(os.Stderr, "mcpserver: starting, pid", os.Getpid())

	opts := []server.ServerOption{server.WithToolCapabilities(false)}
	hooks := &server.Hooks{}
	if *elicitAtStart {
		opts = append(opts, server.WithHooks(hooks))
	}
	if *elicit {
		//lint:ignore SA1019 elicit_direct asks the old way on purpose
		opts = append(opts, server.WithElicitation(), server.WithLegacyServerInitiatedRequests())
	}
	s := server.NewMCPServer("testserver", "1.0.0", opts...)
	if *elicit {
		addElicitTools(s, *elicitLog)
	}
	if *elicitAtStart {
		elicitAtList(s, hooks, *elicitLog)
	}
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text back."),
		mcp.WithString("text", mcp.Required())),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("echo: " + r.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Add two numbers."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required())),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, _ := r.RequireFloat("a")
			b, _ := r.RequireFloat("b")
			return text(strconv.FormatFloat(a+b, 'f', -1, 64)), nil
		})
	s.AddTool(mcp.NewTool("image", mcp.WithDescription("Return a one-pixel PNG.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultImage("a pixel", base64.StdEncoding.EncodeToString(onePixelPNG), "image/png"), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Answer with isError.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("it broke on purpose"), nil
		})
	s.AddTool(mcp.NewTool("sleep", mcp.WithDescription("Sleep until cancelled.")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Minute):
				return text("woke up"), nil
			}
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exit the process at once.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "mcpserver: crashing on request")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(mcp.NewTool("pid", mcp.WithDescription("Report the server's pid.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})
	s.AddTool(mcp.NewTool("getenv", mcp.WithDescription("Report an environment variable."),
		mcp.WithString("name", mcp.Required())),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v, ok := os.LookupEnv(r.GetString("name", ""))
			if !ok {
				return text("<unset>"), nil
			}
			return text(v), nil
		})
	s.AddTool(mcp.NewTool("spawn", mcp.WithDescription("Start a long-lived grandchild and report its pid.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			cmd := exec.Command("sleep", "300")
			if err := cmd.Start(); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			go func() { _ = cmd.Wait() }()
			return text(strconv.Itoa(cmd.Process.Pid)), nil
		})
	if dir := *markDir; dir != "" {
		mark := func(name string) (*mcp.CallToolResult, error) {
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), []byte("ran\n"), 0o600); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return text("marked " + name), nil
		}
		s.AddTool(mcp.NewTool("write_mark", mcp.WithDescription("Create a marker file (a side effect)."),
			mcp.WithString("name", mcp.Required())),
			func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mark(r.GetString("name", ""))
			})
		// A tool named like the builtin shell tool: it is the server's, and
		// creates the marker "run_shell".
		s.AddTool(mcp.NewTool("run_shell", mcp.WithDescription("Pretend to run a command (creates a marker file)."),
			mcp.WithString("command", mcp.Required())),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mark("run_shell")
			})
	}
	for i := range *extra {
		name := fmt.Sprintf("extra_%03d", i)
		desc := fmt.Sprintf("Extra tool number %d for widget %d.", i, i)
		if i == 7 {
			desc = "Convert a temperature from celsius to fahrenheit."
		}
		s.AddTool(mcp.NewTool(name, mcp.WithDescription(desc), mcp.WithString("x")),
			func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text(name + " got " + r.GetString("x", "")), nil
			})
	}
	if err := server.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "mcpserver:", err)
		os.Exit(1)
	}
}
