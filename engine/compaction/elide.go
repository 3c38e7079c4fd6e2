package compaction

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/llm"
)

// Stub prefixes; a message already stubbed is never counted as elidable.
const (
	elidedPrefix     = "[elided by context compaction"
	supersededPrefix = "[superseded by a later read"
	trimmedPrefix    = "[trimmed by context compaction"
)

func isStub(s string) bool {
	return strings.HasPrefix(s, elidedPrefix) || strings.HasPrefix(s, supersededPrefix) || strings.HasPrefix(s, trimmedPrefix)
}

// callIndex maps tool call ids to their calls.
func callIndex(msgs []llm.Message) map[string]llm.ToolCall {
	out := map[string]llm.ToolCall{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			out[c.ID] = c
		}
	}
	return out
}

// describeCall renders "name(args)" with the arguments shortened.
func describeCall(c llm.ToolCall, name string) string {
	if c.Name != "" {
		name = c.Name
	}
	args := c.Arguments
	if len(args) > 200 {
		args = args[:200] + "…"
	}
	return fmt.Sprintf("%s(%s)", name, args)
}

// protectedFrom returns the index from which messages are recent enough to
// keep verbatim: the suffix holding keepPct of the tokens, never splitting a
// tool result from its call, and always at least the newest iteration.
func protectedFrom(msgs []llm.Message, est *Estimator, keepPct float64) int {
	total := est.Messages(msgs)
	budget := int(float64(total) * keepPct)
	i := len(msgs)
	acc := 0
	for i > 0 {
		n := est.Message(msgs[i-1])
		if acc+n > budget && acc > 0 {
			break
		}
		acc += n
		i--
	}
	// Keep the newest assistant message and its results whole.
	lastAssistant := -1
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == llm.RoleAssistant {
			lastAssistant = j
			break
		}
	}
	if lastAssistant >= 0 && lastAssistant < i {
		i = lastAssistant
	}
	return alignToCall(msgs, i)
}

// alignToCall moves i back so that it does not point into a run of tool
// results (their assistant message comes with them).
func alignToCall(msgs []llm.Message, i int) int {
	for i > 0 && i < len(msgs) && msgs[i].Role == llm.RoleTool {
		i--
	}
	return i
}

// readKey identifies a read_file call by path and range.
func readKey(c llm.ToolCall) (string, bool) {
	if c.Name != "read_file" {
		return "", false
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(c.Arguments), &a); err != nil {
		return "", false
	}
	p, _ := a["path"].(string)
	if p == "" {
		return "", false
	}
	return fmt.Sprintf("%s|%v|%v|%v|%v", p, a["start_line"], a["end_line"], a["offset"], a["limit"]), true
}

// elideAndDedup returns a copy of msgs with old tool results replaced by
// stubs (elide) and earlier reads of the same file and range replaced by a
// pointer to the later one (dedup). It returns how many results changed.
func elideAndDedup(msgs []llm.Message, est *Estimator, keepPct float64, elide, dedup bool) ([]llm.Message, int) {
	calls := callIndex(msgs)
	out := append([]llm.Message(nil), msgs...)
	changed := 0
	if dedup {
		lastRead := map[string]int{}
		for i, m := range out {
			if m.Role != llm.RoleTool || isStub(m.Content) {
				continue
			}
			if k, ok := readKey(calls[m.ToolCallID]); ok {
				lastRead[k] = i
			}
		}
		for i, m := range out {
			if m.Role != llm.RoleTool || isStub(m.Content) {
				continue
			}
			c := calls[m.ToolCallID]
			if k, ok := readKey(c); ok && lastRead[k] != i {
				out[i].Content = fmt.Sprintf("%s: %s returned the same file again later in the conversation; see that result.]", supersededPrefix, describeCall(c, m.Name))
				changed++
			}
		}
	}
	if elide {
		from := protectedFrom(out, est, keepPct)
		for i := 0; i < from; i++ {
			m := out[i]
			if m.Role != llm.RoleTool || isStub(m.Content) {
				continue
			}
			n := est.Text(m.Content)
			if n < 64 {
				continue // small results cost less than their stub's value
			}
			out[i].Content = fmt.Sprintf("%s: the result of %s was %d tokens. Call the tool again if you need it.]", elidedPrefix, describeCall(calls[m.ToolCallID], m.Name), n)
			changed++
		}
	}
	return out, changed
}

// trim brings msgs under target tokens without a model call: first old tool
// results become stubs, then the oldest turns go, never the system prompt,
// the first request, a compaction summary or the current turn.
func trim(msgs []llm.Message, est *Estimator, target int) []llm.Message {
	out := append([]llm.Message(nil), msgs...)
	if est.Messages(out) <= target {
		return out
	}
	calls := callIndex(out)
	cur := currentTurnStart(out)
	// 1. Old tool results, oldest first.
	for i := 0; i < cur && est.Messages(out) > target; i++ {
		m := out[i]
		if m.Role == llm.RoleTool && !isStub(m.Content) {
			out[i].Content = fmt.Sprintf("%s: the result of %s was removed to fit the context window.]", trimmedPrefix, describeCall(calls[m.ToolCallID], m.Name))
		}
	}
	// 2. The oldest turns, whole.
	keep := pinned(out)
	for est.Messages(out) > target {
		cur = currentTurnStart(out)
		start := -1
		for i := 0; i < cur; i++ {
			if !keep[&out[i]] {
				start = i
				break
			}
		}
		if start < 0 {
			break
		}
		end := start + 1
		for end < cur && !(out[end].Role == llm.RoleUser && out[end].Notice == "") && !keep[&out[end]] {
			end++
		}
		out = append(out[:start:start], out[end:]...)
		keep = pinned(out)
	}
	// 3. The current turn's own older tool results, shortened.
	for i := cur; i < len(out) && est.Messages(out) > target; i++ {
		if out[i].Role == llm.RoleTool && len(out[i].Content) > 2000 && i < len(out)-1 {
			out[i].Content = out[i].Content[:runeStart(out[i].Content, 1000)] + "\n" + trimmedPrefix + ": the rest of this result was removed to fit the context window.]"
		}
	}
	return out
}

// pinned marks the messages trimming never drops: the system prompt, the
// first user request and compaction summaries.
func pinned(msgs []llm.Message) map[*llm.Message]bool {
	keep := map[*llm.Message]bool{}
	first := true
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.Role == llm.RoleSystem, m.Notice == NoticeSummary:
			keep[m] = true
		case m.Role == llm.RoleUser && m.Notice == "" && first:
			keep[m] = true
			first = false
		}
	}
	return keep
}

// currentTurnStart is the index of the last user message that the user typed
// (not a notice): the current turn starts there.
func currentTurnStart(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && msgs[i].Notice == "" {
			return i
		}
	}
	return len(msgs)
}
