// Command zqchat is a small terminal client of the sidecar: it spawns the
// sidecar binary exactly as a desktop shell would (read the ready line,
// connect with the token), opens a folder as a project and holds one chat
// session in the terminal — streaming text, tool calls as they run, and
// approvals, questions, plans and directory requests answered at prompts.
// `make run` starts it; it is also a readable example of the protocol.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zqagent/sidecar/ipc/client"
)

func main() {
	sidecar := flag.String("sidecar", "bin/sidecar", "path of the sidecar binary")
	project := flag.String("project", ".", "folder to open as the project")
	dataDir := flag.String("data-dir", "", "sidecar data dir (default: the sidecar's own default)")
	mode := flag.String("mode", "interactive", "permission mode: discuss, plan, interactive or auto")
	model := flag.String("model", "", "model for the session (default: the sidecar's configured model)")
	flag.Parse()
	if err := run(*sidecar, *project, *dataDir, *mode, *model); err != nil {
		fmt.Fprintln(os.Stderr, "zqchat:", err)
		os.Exit(1)
	}
}

func run(sidecarPath, projectDir, dataDir, mode, model string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	abs, err := filepath.Abs(projectDir)
	if err != nil {
		return err
	}

	// 1. Spawn the sidecar; its stdin is our pipe, so it exits when we do.
	args := []string{}
	if dataDir != "" {
		args = append(args, "--data-dir", dataDir)
	}
	logPath := filepath.Join(os.TempDir(), "zqchat-sidecar.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(sidecarPath, args...)
	cmd.Stderr = logFile
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start sidecar %s: %w (run `make build` first)", sidecarPath, err)
	}
	defer func() {
		_ = stdin.Close() // stdin EOF: the sidecar shuts down cleanly
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()

	// 2. Read the one ready line, then connect.
	ready, err := client.ReadReady(stdout)
	if err != nil {
		return fmt.Errorf("%w (sidecar log: %s)", err, logPath)
	}
	c, err := client.Dial(ctx, ready.URL, ready.Token, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	initRes, err := c.Initialize(ctx, "zqchat", "1", true)
	if err != nil {
		return err
	}

	// 3. Project and session.
	projectID, err := c.OpenProject(ctx, abs)
	if err != nil {
		return err
	}
	extra := map[string]any{"mode": mode, "title": "zqchat"}
	if model != "" {
		extra["model"] = model
	}
	sessionID, err := c.CreateSession(ctx, projectID, extra)
	if err != nil {
		return err
	}
	if _, err := c.Subscribe(ctx, sessionID, 0); err != nil {
		return err
	}
	banner(initRes, abs, mode, logPath)

	lines := make(chan string)
	go readLines(os.Stdin, lines)
	ch := &chat{c: c, sessionID: sessionID, lines: lines}
	for {
		fmt.Print("\n\033[1myou>\033[0m ")
		text, ok := ch.line(ctx)
		if !ok {
			fmt.Println()
			return nil
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if text == "/quit" || text == "/exit" {
			return nil
		}
		if _, err := c.StartTurn(ctx, sessionID, text); err != nil {
			fmt.Println("error:", err)
			continue
		}
		if err := ch.followTurn(ctx); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
	}
}

// banner says which provider answers; with no key it is the scripted demo.
func banner(initRes json.RawMessage, dir, mode, logPath string) {
	var res struct {
		Server struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"server"`
		Capabilities struct {
			Provider string `json:"provider"` // openai, scripted or demo
			Notice   string `json:"notice"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal(initRes, &res)
	fmt.Printf("\033[1mzqagent sidecar %s\033[0m — project %s, mode %s, provider %s\n", res.Server.Version, dir, mode, res.Capabilities.Provider)
	if res.Capabilities.Provider == "demo" {
		fmt.Println("\033[33mNo API key is configured: you are talking to the scripted demo provider (no tokens, canned answers).\033[0m")
		fmt.Println("Set OPENAI_API_KEY and OPENAI_MODEL (or store a key with keys.set) to use a real model.")
	} else if res.Capabilities.Notice != "" {
		fmt.Println(res.Capabilities.Notice)
	}
	fmt.Printf("Type a message; /quit to leave. Sidecar log: %s\n", logPath)
}

func readLines(r io.Reader, out chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out <- sc.Text()
	}
	close(out)
}

type chat struct {
	c         *client.Client
	sessionID string
	lines     <-chan string
}

func (ch *chat) line(ctx context.Context) (string, bool) {
	select {
	case l, ok := <-ch.lines:
		return l, ok
	case <-ctx.Done():
		return "", false
	}
}

// ask prints a prompt and reads one answer.
func (ch *chat) ask(ctx context.Context, prompt string) string {
	fmt.Print(prompt)
	l, _ := ch.line(ctx)
	return strings.TrimSpace(l)
}

// followTurn prints events until the turn ends, answering what it asks.
func (ch *chat) followTurn(ctx context.Context) error {
	inText, inThought := false, false
	for {
		ev, err := ch.c.NextEvent(ctx, ch.sessionID)
		if err != nil {
			var dropped *client.DroppedError
			if errors.As(err, &dropped) {
				if _, err := ch.c.Subscribe(ctx, ch.sessionID, dropped.Dropped.LastSeq); err != nil {
					return err
				}
				continue
			}
			return err
		}
		var d map[string]any
		_ = json.Unmarshal(ev.Data, &d)
		str := func(k string) string { s, _ := d[k].(string); return s }
		switch ev.Type {
		case "assistant_message":
			inText, inThought = false, false
		case "assistant_delta":
			if !inText {
				fmt.Print("\n\033[1magent>\033[0m ")
				inText = true
			}
			fmt.Print(str("text"))
		case "reasoning_delta":
			if !inThought {
				fmt.Print("\n\033[2m(thinking)\033[0m ")
				inThought = true
			}
			fmt.Print("\033[2m" + str("text") + "\033[0m")
		case "tool_started":
			inText = false
			fmt.Printf("\n\033[36m▶ %s\033[0m", str("name"))
		case "tool_proposed":
			args, _ := json.Marshal(d["arguments"])
			fmt.Printf("\n\033[2m  %s %s\033[0m", str("name"), truncate(string(args), 160))
		case "tool_finished":
			mark := "\033[32m✓\033[0m"
			if str("status") != "ok" {
				mark = "\033[31m✗ " + str("status") + "\033[0m"
			}
			fmt.Printf("\n  %s %s %s", mark, str("name"), truncate(strings.ReplaceAll(str("result_preview"), "\n", " "), 120))
		case "permission_required":
			inText = false
			args, _ := json.Marshal(d["arguments"])
			fmt.Printf("\n\033[33m? %s wants to run\033[0m %s\n  reason: %s\n", str("name"), truncate(string(args), 300), str("reason"))
			outcome := "deny"
			prompt := "  allow? [y]es once / [a]lways this tool / [n]o: "
			offered, _ := d["alwaysCommand"].(bool)
			if offered {
				prompt = "  allow? [y]es once / [a]lways this tool / [c]ommand " + str("command") + " always / [n]o: "
			}
			switch strings.ToLower(ch.ask(ctx, prompt)) {
			case "y", "yes":
				outcome = "once"
			case "a", "always":
				outcome = "always_tool"
			case "c":
				if offered {
					outcome = "always_command"
				}
			}
			if err := ch.c.Respond(ctx, ch.sessionID, str("requestId"), map[string]string{"outcome": outcome}); err != nil {
				fmt.Println("  answer failed:", err)
			}
		case "ask_user_question":
			inText = false
			fmt.Printf("\n\033[33m? %s\033[0m\n", str("question"))
			opts, _ := d["options"].([]any)
			for i, o := range opts {
				fmt.Printf("  %d) %v\n", i+1, o)
			}
			ans := ch.ask(ctx, "  answer (number or text): ")
			var n int
			if _, err := fmt.Sscanf(ans, "%d", &n); err == nil && n >= 1 && n <= len(opts) {
				ans = fmt.Sprint(opts[n-1])
			}
			if err := ch.c.Respond(ctx, ch.sessionID, str("requestId"), map[string]string{"answer": ans}); err != nil {
				fmt.Println("  answer failed:", err)
			}
		case "plan_proposed":
			inText = false
			fmt.Printf("\n\033[33m? proposed plan:\033[0m\n%s\n", str("plan"))
			ok := strings.HasPrefix(strings.ToLower(ch.ask(ctx, "  approve? [y/n]: ")), "y")
			resp := map[string]any{"approved": ok}
			if !ok {
				resp["feedback"] = ch.ask(ctx, "  feedback: ")
			}
			if err := ch.c.Respond(ctx, ch.sessionID, str("requestId"), resp); err != nil {
				fmt.Println("  answer failed:", err)
			}
		case "directory_requested":
			inText = false
			fmt.Printf("\n\033[33m? access to %s requested\033[0m (%s)\n", str("path"), str("reason"))
			ok := strings.HasPrefix(strings.ToLower(ch.ask(ctx, "  grant? [y/n]: ")), "y")
			if err := ch.c.Respond(ctx, ch.sessionID, str("requestId"), map[string]any{"granted": ok, "writable": d["writable"]}); err != nil {
				fmt.Println("  answer failed:", err)
			}
		case "llm_retry":
			fmt.Printf("\n\033[2m(retrying the model: %s)\033[0m", str("reason"))
		case "compacting":
			fmt.Print("\n\033[2m(compacting the context…)\033[0m")
		case "error":
			fmt.Printf("\n\033[31merror: %s\033[0m", str("error"))
		case "turn_end":
			if s := str("status"); s != "completed" {
				fmt.Printf("\n\033[2m(turn %s)\033[0m", s)
			}
			fmt.Println()
			return nil
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
