// Command zqchat is a small terminal client of the sidecar: it spawns the
// sidecar binary exactly as a desktop shell would (read the ready line,
// connect with the token), opens a folder as a project and holds one chat
// session in the terminal — streaming text, tool calls as they run, and
// approvals, questions, plans and directory requests answered at prompts.
// `make run` starts it; it is also a readable example of the protocol.
// /help lists its commands (show.go renders events, commands.go the
// slash commands).
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C stops the running turn, or leaves at the prompt; SIGTERM leaves.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
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
	provider := banner(os.Stdout, initRes, abs, mode, logPath)

	lines := make(chan string)
	go readLines(os.Stdin, lines)
	ch := &chat{c: c, out: os.Stdout, projectID: projectID, sessionID: sessionID, sessionExtra: extra,
		lines: lines, sigs: sigs, quit: cancel, demo: provider == "demo"}
	for {
		fmt.Print("\n\033[1myou>\033[0m ")
		text, ok := ch.prompt(ctx)
		if !ok {
			fmt.Println()
			return nil
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		handled, err := ch.slash(ctx, text)
		if errors.Is(err, errQuit) {
			return nil
		}
		if err == nil && !handled {
			if _, err = c.StartTurn(ctx, ch.sessionID, text); err != nil {
				fmt.Println("error:", err)
				continue
			}
			err = ch.followTurn(ctx)
		}
		if errors.Is(err, context.Canceled) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// banner says which provider answers (with no key, the built-in demo) and
// returns its kind: openai, scripted or demo.
func banner(w io.Writer, initRes json.RawMessage, dir, mode, logPath string) string {
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
	fmt.Fprintf(w, "\033[1mzqagent sidecar %s\033[0m — project %s, mode %s, provider %s\n", res.Server.Version, dir, mode, res.Capabilities.Provider)
	if res.Capabilities.Provider == "demo" {
		fmt.Fprintln(w, "\033[33mNo API key is configured: you are talking to the built-in demo (no model, no tokens, canned answers).\033[0m")
		fmt.Fprintln(w, "For a real model, start with OPENAI_API_KEY and OPENAI_MODEL set, e.g. OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-4.1 make run")
	} else if res.Capabilities.Notice != "" {
		fmt.Fprintln(w, res.Capabilities.Notice)
	}
	fmt.Fprintf(w, "Type a message; /help lists the commands, /quit leaves. Sidecar log: %s\n", logPath)
	return res.Capabilities.Provider
}

func readLines(r io.Reader, out chan<- string) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		out <- sc.Text()
	}
	close(out)
}

// chat is one terminal conversation with the sidecar.
type chat struct {
	c            *client.Client
	out          io.Writer
	projectID    string
	sessionID    string
	sessionExtra map[string]any // session.create's params, for /new
	lines        <-chan string  // stdin, line by line; closed at EOF
	sigs         <-chan os.Signal
	quit         context.CancelFunc
	demo         bool // the demo provider answers
	demoHinted   bool // demoHint was shown
}

// prompt reads a line at the you> prompt; false at EOF, Ctrl-C or SIGTERM.
func (ch *chat) prompt(ctx context.Context) (string, bool) {
	select {
	case l, ok := <-ch.lines:
		return l, ok
	case <-ch.sigs:
		ch.quit()
		return "", false
	case <-ctx.Done():
		return "", false
	}
}

// ask prints a prompt and reads one answer; ok is false when the turn was
// stopped (Ctrl-C) or stdin ended first.
func (ch *chat) ask(ctx context.Context, stop <-chan struct{}, prompt string) (string, bool) {
	fmt.Fprint(ch.out, prompt)
	select {
	case l, ok := <-ch.lines:
		return strings.TrimSpace(l), ok
	case <-stop:
		return "", false
	case <-ctx.Done():
		return "", false
	}
}

// watchInterrupt turns Ctrl-C during a turn into turn.interrupt (SIGTERM
// leaves); stop is closed at the first one. It returns when done closes.
func (ch *chat) watchInterrupt(ctx context.Context, stop chan<- struct{}, done <-chan struct{}) {
	stopped := false
	for {
		select {
		case s := <-ch.sigs:
			if s == syscall.SIGTERM {
				ch.quit()
				return
			}
			if !stopped {
				stopped = true
				close(stop)
			}
			fmt.Fprint(ch.out, "\n\033[2m(stopping the turn…)\033[0m")
			_ = ch.c.Call(ctx, "turn.interrupt", map[string]string{"sessionId": ch.sessionID}, nil)
		case <-done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// followTurn prints events until the turn ends, answering what it asks.
func (ch *chat) followTurn(ctx context.Context) error {
	stop, done := make(chan struct{}), make(chan struct{})
	defer close(done)
	go ch.watchInterrupt(ctx, stop, done)
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
		var d struct {
			Text          string            `json:"text"`
			Name          string            `json:"name"`
			Status        string            `json:"status"`
			Arguments     map[string]any    `json:"arguments"`
			ResultPreview string            `json:"result_preview"`
			RequestID     string            `json:"requestId"`
			Reason        string            `json:"reason"`
			Command       string            `json:"command"`
			AlwaysCommand bool              `json:"alwaysCommand"`
			AlwaysNote    string            `json:"alwaysCommandNote"`
			Question      string            `json:"question"`
			Options       []string          `json:"options"`
			Plan          string            `json:"plan"`
			Path          string            `json:"path"`
			Writable      bool              `json:"writable"`
			Error         string            `json:"error"`
			Display       map[string]string `json:"display"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		respond := func(resp any) {
			if err := ch.c.Respond(ctx, ch.sessionID, d.RequestID, resp); err != nil {
				fmt.Fprintln(ch.out, "  answer failed:", err)
			}
		}
		switch ev.Type {
		case "assistant_message":
			inText, inThought = false, false
		case "assistant_delta":
			if !inText {
				fmt.Fprint(ch.out, "\n\033[1magent>\033[0m ")
				inText = true
			}
			fmt.Fprint(ch.out, d.Text)
		case "reasoning_delta":
			if !inThought {
				fmt.Fprint(ch.out, "\n\033[2m(thinking)\033[0m ")
				inThought = true
			}
			fmt.Fprint(ch.out, "\033[2m"+d.Text+"\033[0m")
		case "tool_started":
			inText = false
			fmt.Fprintf(ch.out, "\n\033[36m▶ %s\033[0m", safeText(d.Name))
		case "tool_proposed":
			fmt.Fprintf(ch.out, "\n\033[2m  %s %s\033[0m", safeText(d.Name), oneLine(d.Arguments, 160))
		case "tool_finished":
			mark := "\033[32m✓\033[0m"
			if d.Status != "ok" {
				mark = "\033[31m✗ " + safeText(d.Status) + "\033[0m"
			}
			fmt.Fprintf(ch.out, "\n  %s %s %s", mark, safeText(d.Name), truncate(safeText(strings.ReplaceAll(d.ResultPreview, "\n", " ")), 120))
		case "permission_required":
			inText = false
			fmt.Fprintf(ch.out, "\n\033[33m? %s asks for approval\033[0m — %s\n%s\n", safeText(d.Name), safeText(d.Reason), showArgs(d.Arguments, d.Display, "  ", 12))
			if d.Name == "run_shell" && !d.AlwaysCommand && d.AlwaysNote != "" {
				fmt.Fprintf(ch.out, "  \033[2m(no \"always this command\": %s)\033[0m\n", safeText(d.AlwaysNote))
			}
			cs := approvalChoices(d.Name, d.Command, d.AlwaysCommand)
			fmt.Fprint(ch.out, choicePrompt(cs))
			outcome := "deny"
			for {
				ans, ok := ch.ask(ctx, stop, "  your choice: ")
				if !ok {
					break // stopped or stdin ended: the request is denied
				}
				if o, ok := pickChoice(cs, ans); ok {
					outcome = o
					break
				}
				fmt.Fprintf(ch.out, "  (type one of: %s)\n", choiceKeys(cs))
			}
			respond(map[string]string{"outcome": outcome})
		case "ask_user_question":
			inText = false
			fmt.Fprintf(ch.out, "\n\033[33m? %s\033[0m\n", fieldText(d.Question, "question", d.Display))
			for i, o := range d.Options {
				fmt.Fprintf(ch.out, "  %d) %s\n", i+1, fieldText(o, fmt.Sprintf("options[%d]", i), d.Display))
			}
			ans, _ := ch.ask(ctx, stop, "  answer (number or text): ")
			var n int
			if _, err := fmt.Sscanf(ans, "%d", &n); err == nil && n >= 1 && n <= len(d.Options) {
				ans = d.Options[n-1]
			}
			respond(map[string]string{"answer": ans})
		case "plan_proposed":
			inText = false
			fmt.Fprintf(ch.out, "\n\033[33m? proposed plan:\033[0m\n%s\n", fieldText(d.Plan, "plan", d.Display))
			ans, _ := ch.ask(ctx, stop, "  approve? [y/n]: ")
			ok := strings.HasPrefix(strings.ToLower(ans), "y")
			resp := map[string]any{"approved": ok}
			if !ok {
				resp["feedback"], _ = ch.ask(ctx, stop, "  feedback: ")
			}
			respond(resp)
		case "directory_requested":
			inText = false
			access := "read"
			if d.Writable {
				access = "read and write"
			}
			fmt.Fprintf(ch.out, "\n\033[33m? %s access to %s requested\033[0m — %s\n", access, fieldText(d.Path, "path", d.Display), fieldText(d.Reason, "reason", d.Display))
			ans, _ := ch.ask(ctx, stop, "  grant? [y/n]: ")
			respond(map[string]any{"granted": strings.HasPrefix(strings.ToLower(ans), "y"), "writable": d.Writable})
		case "llm_retry":
			fmt.Fprintf(ch.out, "\n\033[2m(retrying the model: %s)\033[0m", safeText(d.Reason))
		case "compacting":
			fmt.Fprint(ch.out, "\n\033[2m(compacting the context…)\033[0m")
		case "error":
			fmt.Fprintf(ch.out, "\n\033[31merror: %s\033[0m", safeText(d.Error))
		case "turn_end":
			if d.Status != "completed" {
				fmt.Fprintf(ch.out, "\n\033[2m(turn %s)\033[0m", safeText(d.Status))
			}
			fmt.Fprintln(ch.out)
			if ch.demo && !ch.demoHinted && d.Status == "completed" {
				ch.demoHinted = true
				fmt.Fprintf(ch.out, "\n\033[33m%s\033[0m\n", demoHint)
			}
			return nil
		}
	}
}
