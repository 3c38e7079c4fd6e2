package client

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadReady(t *testing.T) {
	rd, err := ReadReady(strings.NewReader(`{"event":"ready","url":"ws://127.0.0.1:1/rpc","token":"t","pid":7,"version":"v","protocol":1}` + "\n"))
	require.NoError(t, err)
	require.Equal(t, 7, rd.PID)
	_, err = ReadReady(strings.NewReader("hello\n"))
	require.Error(t, err)
	_, err = ReadReady(strings.NewReader(`{"event":"other"}` + "\n"))
	require.Error(t, err)
}

func TestFastNotification(t *testing.T) {
	n, ok := fastNotification([]byte(`{"jsonrpc":"2.0","method":"session.event","params":{"seq":1,"data":{"text":"}"}}}`))
	require.True(t, ok)
	require.Equal(t, "session.event", n.Method)
	require.JSONEq(t, `{"seq":1,"data":{"text":"}"}}`, string(n.Params))
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","method":"m","params":{"a":1}, "x":2}`,
		`{"jsonrpc":"2.0","method":"m\"x","params":{}}`,
	} {
		_, ok := fastNotification([]byte(s))
		require.False(t, ok, s)
	}
}

// FuzzFastNotification: when the fast path accepts a frame, it agrees with
// a full decode.
func FuzzFastNotification(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session.event","params":{"seq":1}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"a","params":[1,2]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, ok := fastNotification(data)
		if !ok {
			return
		}
		var full struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(data, &full); err != nil {
			t.Fatalf("fast path accepted invalid JSON %q", data)
		}
		if full.Method != n.Method {
			t.Fatalf("method %q vs %q", n.Method, full.Method)
		}
		var a, b any
		_ = json.Unmarshal(full.Params, &a)
		_ = json.Unmarshal(n.Params, &b)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("params %s vs %s", n.Params, full.Params)
		}
	})
}
