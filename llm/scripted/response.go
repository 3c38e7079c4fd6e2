package scripted

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/zqagent/sidecar/llm"
)

// DefaultChunkSize is how many runes each streamed delta carries.
const DefaultChunkSize = 8

// maxDelay bounds the delay between chunks a script may ask for.
const maxDelay = time.Minute

// Response is one scripted answer to a Stream call. Reasoning streams first,
// then Text; then it waits at Gate (when named) until the gate is released;
// then either Stall (block until the context ends), Err (an
// *llm.Error of ErrKind), or a final chunk with ToolCalls, Usage and the
// finish reason.
type Response struct {
	Text      string         `json:"text,omitempty"`
	Reasoning string         `json:"reasoning,omitempty"`
	ToolCalls []llm.ToolCall `json:"toolCalls,omitempty"`
	// Usage is reported on the final chunk; when nil it is estimated from
	// the request and the text (about four characters a token).
	Usage *llm.Usage `json:"usage,omitempty"`
	// RateLimits, when set, come with the final chunk (or just before Err),
	// as a provider reads them from x-ratelimit-* headers.
	RateLimits *llm.RateLimits `json:"rateLimits,omitempty"`
	// Err, when set, ends the stream with an *llm.Error of ErrKind (one of
	// llm.Kind's names: auth, rate_limit, server, network, context_overflow,
	// bad_request, config, unsupported; empty = unknown). JSON also accepts
	// "error" and "errorKind".
	Err     string `json:"err,omitempty"`
	ErrKind string `json:"errKind,omitempty"`
	// Delay is the pause before each chunk. In JSON a number of milliseconds
	// or a duration string ("40ms"); "delayMs" is accepted too.
	Delay time.Duration `json:"delay,omitempty"`
	// ChunkSize is the runes per delta; 0 means DefaultChunkSize.
	ChunkSize int `json:"chunkSize,omitempty"`
	// Stall blocks after the text until the context is done (to exercise the
	// watchdog and interrupts).
	Stall bool `json:"stall,omitempty"`
	// Gate names a Gate the response waits at after its text and before its
	// end (tool calls, error or stall), until the gate is released or the
	// context ends.
	Gate string `json:"gate,omitempty"`
	// FinishReason overrides the final reason ("stop", or "tool_calls" when
	// there are tool calls); "length" exercises truncated answers.
	FinishReason string `json:"finishReason,omitempty"`
}

// UnmarshalJSON accepts the delay as milliseconds or a duration string.
func (r *Response) UnmarshalJSON(b []byte) error {
	type plain Response
	var aux struct {
		plain
		Delay     json.RawMessage `json:"delay,omitempty"`
		DelayMS   json.RawMessage `json:"delayMs,omitempty"`
		Error     string          `json:"error,omitempty"`
		ErrorKind string          `json:"errorKind,omitempty"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&aux); err != nil {
		return err
	}
	*r = Response(aux.plain)
	if r.Err == "" {
		r.Err = aux.Error
	}
	if r.ErrKind == "" {
		r.ErrKind = aux.ErrorKind
	}
	if len(aux.Delay) == 0 || string(aux.Delay) == "null" {
		aux.Delay = aux.DelayMS
	}
	if len(aux.Delay) == 0 || string(aux.Delay) == "null" {
		return nil
	}
	var ms float64
	if err := json.Unmarshal(aux.Delay, &ms); err == nil {
		r.Delay = time.Duration(ms * float64(time.Millisecond))
		return nil
	}
	var s string
	if err := json.Unmarshal(aux.Delay, &s); err != nil {
		return fmt.Errorf("delay: want milliseconds or a duration string")
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("delay: %w", err)
	}
	r.Delay = d
	return nil
}

// MarshalJSON writes the delay as a duration string.
func (r Response) MarshalJSON() ([]byte, error) {
	type plain Response
	aux := struct {
		plain
		Delay string `json:"delay,omitempty"`
	}{plain: plain(r)}
	if r.Delay != 0 {
		aux.Delay = r.Delay.String()
	}
	return json.Marshal(aux)
}

// validate checks a response of a script file.
func (r Response) validate() error {
	if _, ok := kindOf(r.ErrKind); !ok {
		return fmt.Errorf("unknown errorKind %q", r.ErrKind)
	}
	if r.Delay < 0 || r.Delay > maxDelay {
		return fmt.Errorf("delay %v out of range [0, %v]", r.Delay, maxDelay)
	}
	if r.ChunkSize < 0 {
		return fmt.Errorf("negative chunkSize")
	}
	if !validGateName(r.Gate) {
		return fmt.Errorf("gate %q: letters, digits, '-' and '_' only", r.Gate)
	}
	for i, c := range r.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("toolCalls[%d]: no name", i)
		}
	}
	return nil
}

// kindOf parses an llm.Kind name; "" is KindUnknown.
func kindOf(name string) (llm.Kind, bool) {
	if name == "" {
		return llm.KindUnknown, true
	}
	for k := llm.KindUnknown; k <= llm.KindUnsupported; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return llm.KindUnknown, false
}

// pieces splits s into chunks of n runes.
func pieces(s string, n int) []string {
	if n <= 0 {
		n = DefaultChunkSize
	}
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

// validGateName reports whether a gate name is safe as a file name.
func validGateName(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
