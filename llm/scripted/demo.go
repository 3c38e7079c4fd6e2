package scripted

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/zqagent/sidecar/llm"
)

// Demo pacing: small deltas with a short pause, so the UI looks alive.
const (
	demoDelay     = 25 * time.Millisecond
	demoChunkSize = 6
)

// Demo returns the provider `make run` uses without an API key, in English
// (DemoIn). It reacts to the conversation: a user message gets a greeting
// and list_files; its result gets run_shell `git status --short` (which
// asks for approval in interactive mode); that result gets ask_user; the
// answer gets a summary of what the tools returned. Deterministic for a
// given history.
func Demo() *Provider { return DemoIn("en") }

// DemoIn is Demo speaking lang, one of the six prompt languages (zh, en,
// zh-TW, ja, ko, es; anything else is English): its text, its question and
// the session names it gives. Unlike a script, the demo names sessions
// (NamesSessions): "デモ：<the first words of the first message>".
func DemoIn(lang string) *Provider { return demo(lang, demoDelay) }

func demo(lang string, delay time.Duration) *Provider {
	t := demoTextOf(lang)
	return &Provider{react: func(req llm.Request) Response { return demoStep(req, t, delay) }, names: &t}
}

func demoStep(req llm.Request, t demoText, delay time.Duration) Response {
	r := demoAnswer(req.Messages, t)
	r.Delay, r.ChunkSize = delay, demoChunkSize
	for i := range r.ToolCalls {
		r.ToolCalls[i].ID = fmt.Sprintf("demo_%s_%d", r.ToolCalls[i].Name, len(req.Messages))
	}
	return r
}

func demoAnswer(msgs []llm.Message, t demoText) Response {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role == llm.RoleUser {
		return Response{
			Reasoning: t.reasoning,
			Text:      t.greeting,
			ToolCalls: []llm.ToolCall{{Name: "list_files", Arguments: `{"path":"."}`}},
		}
	}
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleTool {
		return Response{Text: t.again}
	}
	switch toolOf(msgs, last) {
	case "list_files":
		return Response{
			Text:      fmt.Sprintf(t.listed, t.entries(countEntries(last.Content))),
			ToolCalls: []llm.ToolCall{{Name: "run_shell", Arguments: `{"command":"git status --short"}`}},
		}
	case "run_shell":
		args, _ := json.Marshal(map[string]any{"question": t.ask, "options": t.options[:]})
		return Response{
			Text:      t.question,
			ToolCalls: []llm.ToolCall{{Name: "ask_user", Arguments: string(args)}},
		}
	case "ask_user":
		return Response{Text: demoSummary(msgs, last, t)}
	}
	return Response{Text: t.unknown}
}

// toolOf finds the name of the call a tool message answers.
func toolOf(msgs []llm.Message, tool llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID == tool.ToolCallID {
				return c.Name
			}
		}
	}
	return tool.Name
}

// resultOf returns the content of the latest result of the named tool.
func resultOf(msgs []llm.Message, name string) (string, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleTool && toolOf(msgs, msgs[i]) == name {
			return msgs[i].Content, true
		}
	}
	return "", false
}

func demoSummary(msgs []llm.Message, answer llm.Message, t demoText) string {
	var b strings.Builder
	b.WriteString(t.summary)
	if files, ok := resultOf(msgs, "list_files"); ok {
		if e := errorOf(files); e != "" {
			fmt.Fprintf(&b, t.listFailed, e)
		} else {
			fmt.Fprintf(&b, t.listFound, t.entries(countEntries(files)))
		}
	}
	if status, ok := resultOf(msgs, "run_shell"); ok {
		switch e := errorOf(status); {
		case e != "":
			fmt.Fprintf(&b, t.gitNotRun, e)
		case exitCodeOf(status) != 0:
			// Its output is git's complaint (not a repository, say), not paths.
			fmt.Fprintf(&b, t.gitFailed, exitCodeOf(status),
				truncate(strings.TrimSpace(firstLine(field(status, "stderr", "output", "stdout"))), 200))
		default:
			n := countLines(field(status, "stdout", "output"))
			if n == 0 {
				b.WriteString(t.gitClean)
			} else {
				fmt.Fprintf(&b, t.gitChanged, t.paths(n))
			}
		}
	}
	reply := field(answer.Content, "answer", "answers", "text")
	if e := errorOf(answer.Content); e != "" {
		reply = e
	}
	fmt.Fprintf(&b, t.answered, truncate(strings.TrimSpace(reply), 200))
	b.WriteString(t.end)
	return b.String()
}

// errorOf returns the error of a {error, error_type} tool result.
func errorOf(content string) string {
	var v struct {
		Error any `json:"error"`
	}
	if json.Unmarshal([]byte(content), &v) != nil || v.Error == nil {
		return ""
	}
	if s, ok := v.Error.(string); ok {
		return truncate(s, 200)
	}
	b, _ := json.Marshal(v.Error)
	return truncate(string(b), 200)
}

// field returns the first named string field of a JSON object, or content
// itself when it is not JSON.
func field(content string, names ...string) string {
	var obj map[string]any
	if json.Unmarshal([]byte(content), &obj) != nil {
		return content
	}
	for _, n := range names {
		switch v := obj[n].(type) {
		case string:
			return v
		case []any:
			parts := make([]string, 0, len(v))
			for _, x := range v {
				parts = append(parts, fmt.Sprint(x))
			}
			return strings.Join(parts, ", ")
		}
	}
	return ""
}

// countEntries counts a list_files result: a JSON array, an object with an
// array (entries, files, items), or lines of text.
func countEntries(content string) int {
	var v any
	if json.Unmarshal([]byte(content), &v) != nil {
		return countLines(content)
	}
	switch t := v.(type) {
	case []any:
		return len(t)
	case map[string]any:
		for _, k := range []string{"entries", "files", "items", "children"} {
			if a, ok := t[k].([]any); ok {
				return len(a)
			}
		}
		for _, k := range []string{"output", "content", "text", "listing"} {
			if s, ok := t[k].(string); ok {
				return countLines(s)
			}
		}
	case string:
		return countLines(t)
	}
	return 0
}

// exitCodeOf returns a run_shell result's exit code (0 when it has none).
func exitCodeOf(content string) int {
	var v struct {
		ExitCode  *int `json:"exit_code"`
		ExitCode2 *int `json:"exitCode"`
	}
	if json.Unmarshal([]byte(content), &v) != nil {
		return 0
	}
	switch {
	case v.ExitCode != nil:
		return *v.ExitCode
	case v.ExitCode2 != nil:
		return *v.ExitCode2
	}
	return 0
}

func countLines(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
