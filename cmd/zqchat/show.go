package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// This file turns events into what the terminal shows. Text is shown as
// written — no Go quoting, no JSON escaping — except characters that could
// fool a terminal (control characters, ANSI escapes, bidi and invisible
// characters): those are shown escaped, in the engine's display form when
// the event carries one.

// safeText returns s with every character that is not plain printable text
// (newlines and tabs stay) written as \u{XXXX}.
func safeText(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unsafeRune(r) {
			fmt.Fprintf(&b, `\u{%04X}`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar
}

// fieldText is a string field of an event for the terminal: the engine's
// display form when it flagged the field (marked ⚠), else safeText.
func fieldText(s, path string, display map[string]string) string {
	if d, ok := display[path]; ok {
		return d + " ⚠"
	}
	return safeText(s)
}

// argOrder puts the members a reader looks for first.
var argOrder = []string{"command", "path", "paths", "pattern", "query", "url", "cwd"}

// orderedKeys returns args' names, the ones in argOrder first.
func orderedKeys(args map[string]any) []string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		ia, ib := slices.Index(argOrder, a), slices.Index(argOrder, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}

// argText is one argument's value for the terminal: a string as written,
// anything else as compact JSON without HTML escaping.
func argText(k string, v any, display map[string]string) string {
	if s, ok := v.(string); ok {
		return fieldText(s, "arguments."+k, display)
	}
	return safeText(compactJSON(v))
}

// showArgs renders a tool call's arguments, one "name: value" per line
// (prefixed by indent), in a useful order; a multi-line value is an
// indented block of at most maxLines lines.
func showArgs(args map[string]any, display map[string]string, indent string, maxLines int) string {
	var b strings.Builder
	for _, k := range orderedKeys(args) {
		name := safeText(k)
		lines := strings.Split(strings.TrimRight(argText(k, args[k], display), "\n"), "\n")
		if len(lines) == 1 {
			fmt.Fprintf(&b, "%s%s: %s\n", indent, name, lines[0])
			continue
		}
		fmt.Fprintf(&b, "%s%s:\n", indent, name)
		for i, l := range lines {
			if i == maxLines {
				fmt.Fprintf(&b, "%s  … %d more lines\n", indent, len(lines)-maxLines)
				break
			}
			fmt.Fprintf(&b, "%s  │ %s\n", indent, l)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLine renders arguments on one line, for a call that needs no answer:
// "command: git status --short" or "path: a.txt, content: first line…".
func oneLine(args map[string]any, n int) string {
	parts := make([]string, 0, len(args))
	for _, k := range orderedKeys(args) {
		v := argText(k, args[k], nil)
		if first, _, more := strings.Cut(v, "\n"); more {
			v = first + "…"
		}
		parts = append(parts, safeText(k)+": "+v)
	}
	return truncate(strings.Join(parts, ", "), n)
}

func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimRight(buf.String(), "\n")
}

// choice is one answer to an approval request.
type choice struct {
	key     string // what the user types
	label   string
	outcome string // request.respond's outcome
}

// approvalChoices are the answers that fit a request: "always this
// command" only where the event offers it (a single simple shell command;
// never for a file write), and "always this tool" named for what it
// allows.
func approvalChoices(tool, command string, alwaysCommand bool) []choice {
	cs := []choice{{"y", "yes, once", "once"}}
	if alwaysCommand && command != "" {
		cs = append(cs, choice{"c", "always allow " + safeText(command) + " commands in this session", "always_command"})
	}
	always := "always allow " + safeText(tool) + " in this session"
	if tool == "run_shell" {
		always = "always allow every shell command in this session"
	}
	return append(cs, choice{"a", always, "always_tool"}, choice{"n", "no", "deny"})
}

// choicePrompt lists the choices, one per line.
func choicePrompt(cs []choice) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  [%s] %s\n", c.key, c.label)
	}
	return b.String()
}

// choiceKeys lists what the user may type: "y, c, a or n".
func choiceKeys(cs []choice) string {
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = c.key
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}

// pickChoice maps an answer to an outcome; ok is false for an answer that
// is none of the choices.
func pickChoice(cs []choice, answer string) (outcome string, ok bool) {
	a := strings.ToLower(strings.TrimSpace(answer))
	for _, c := range cs {
		if a == c.key || a == c.outcome || (c.key == "y" && a == "yes") || (c.key == "n" && a == "no") {
			return c.outcome, true
		}
	}
	return "", false
}

// demoHint is said once, after the first turn the demo provider answered:
// what a terminal user does to talk to a real model.
const demoHint = `That was the built-in demo: no API key is configured, so no model answered.
To talk to a real model, leave with /quit and start again with a key and a model, e.g.
    OPENAI_API_KEY=sk-... OPENAI_MODEL=gpt-4.1 make run
(for another OpenAI-compatible endpoint add OPENAI_BASE_URL=https://.../v1).`

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
