package openai

import (
	"fmt"

	"github.com/zqagent/sidecar/llm"
)

// callDelta is one fragment of a streamed tool call, as Chat Completions sends
// it: the first fragment of a call carries id and name, later ones pieces of
// the arguments, all keyed by index. Index is -1 when the API sent none.
type callDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// callAssembler joins tool-call deltas into complete calls. Calls may be
// interleaved (parallel tool calls); the order of first appearance is kept.
// Some gateways reuse index 0 for every call but give each a new id: a new id
// on an index whose call already has another id starts a new call.
type callAssembler struct {
	calls   []llm.ToolCall
	byIndex map[int]int // API index → position in calls
}

func (a *callAssembler) add(d callDelta) {
	if a.byIndex == nil {
		a.byIndex = make(map[int]int)
	}
	pos, ok := -1, false
	if d.Index >= 0 {
		pos, ok = a.byIndex[d.Index]
	} else if d.ID != "" {
		for i := range a.calls {
			if a.calls[i].ID == d.ID {
				pos, ok = i, true
				break
			}
		}
	} else if len(a.calls) > 0 {
		pos, ok = len(a.calls)-1, true // continuation of the last call
	}
	if ok && d.ID != "" && a.calls[pos].ID != "" && a.calls[pos].ID != d.ID {
		ok = false
	}
	if !ok {
		a.calls = append(a.calls, llm.ToolCall{})
		pos = len(a.calls) - 1
		if d.Index >= 0 {
			a.byIndex[d.Index] = pos
		}
	}
	c := &a.calls[pos]
	if d.ID != "" {
		c.ID = d.ID
	}
	if d.Name != "" && c.Name != d.Name {
		if c.Name == "" {
			c.Name = d.Name
		} else {
			c.Name += d.Name // a few gateways stream names in pieces
		}
	}
	c.Arguments += d.Arguments
}

// result returns the complete calls; calls without a name are dropped and
// missing ids are made up so that tool results can refer to them.
func (a *callAssembler) result() []llm.ToolCall {
	out := make([]llm.ToolCall, 0, len(a.calls))
	for i, c := range a.calls {
		if c.Name == "" {
			continue
		}
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", i)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
