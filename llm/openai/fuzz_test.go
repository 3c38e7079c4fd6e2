package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/llm"
)

func FuzzCallAssembler(f *testing.F) {
	f.Add([]byte{0, 1, 'a', 0, 2, 'b', 1, 1, 'c'}, "read_file", `{"path":"x"}`)
	f.Add([]byte{255, 0, 0, 255, 1, 1}, "", "")
	f.Fuzz(func(t *testing.T, script []byte, name, args string) {
		var a callAssembler
		var wantArgs int
		for len(script) >= 3 {
			idx := int(int8(script[0])) // negative: no index
			if idx < 0 {
				idx = -1
			}
			var d callDelta
			d.Index = idx
			if script[1]&1 != 0 {
				d.ID = "id" + string(rune('a'+script[1]%8))
			}
			if script[1]&2 != 0 {
				d.Name = name
			}
			n := int(script[2]) % (len(args) + 1)
			d.Arguments = args[:n]
			wantArgs += n
			a.add(d)
			script = script[3:]
		}
		total := 0
		for _, c := range a.calls {
			total += len(c.Arguments)
		}
		if total != wantArgs {
			t.Fatalf("arguments lost: %d of %d bytes", total, wantArgs)
		}
		for _, c := range a.result() {
			if c.Name == "" || c.ID == "" {
				t.Fatalf("incomplete call delivered: %+v", c)
			}
		}
	})
}

// bodyTransport answers every request with a fixed 200 body.
type bodyTransport struct{ body []byte }

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(b.body)), Request: r}, nil
}

// FuzzStreamBody feeds arbitrary server bytes to both stream parsers: they
// must end (no hang, no panic) with a final chunk or an error.
func FuzzStreamBody(f *testing.F) {
	f.Add(true, []byte("data: "+chatChunk(`{"content":"hi","tool_calls":[{"index":0,"id":"c","function":{"name":"x","arguments":"{}"}}]}`, "stop")+"\n\ndata: [DONE]\n\n"))
	f.Add(false, []byte("event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"fc\",\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"x\"}}\n\nevent: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc\",\"output_index\":0,\"delta\":\"{}\"}\n\n"))
	f.Add(false, []byte("data: {\"type\":\"error\",\"code\":\"x\",\"message\":\"boom\"}\n\n"))
	f.Add(true, []byte("data: {\"error\":{\"message\":\"bad\"}}\n\n"))
	f.Fuzz(func(t *testing.T, chat bool, body []byte) {
		mode := ModeResponses
		if chat {
			mode = ModeChat
		}
		p := New(Options{BaseURL: "http://fuzz.invalid/v1", APIMode: mode, HTTPClient: &http.Client{Transport: bodyTransport{body}},
			APIKey: func(context.Context) (string, error) { return "k-fuzz", nil }})
		var last llm.Chunk
		var err error
		n := 0
		for ch, e := range p.Stream(context.Background(), llm.Request{Model: "m"}) {
			n++
			if e != nil {
				err = e
				break
			}
			last = ch
		}
		if n == 0 {
			t.Fatal("stream yielded nothing")
		}
		if err == nil {
			for _, c := range last.ToolCalls {
				if c.Name == "" || c.ID == "" {
					t.Fatalf("incomplete call: %+v", c)
				}
			}
		} else if strings.Contains(err.Error(), "k-fuzz") {
			t.Fatal("key in error")
		}
	})
}
