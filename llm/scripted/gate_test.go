package scripted

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

// TestGateInProcess: a response waits at its gate after its text, and goes
// on when the test releases it; later responses naming it pass.
func TestGateInProcess(t *testing.T) {
	p := New(Response{Text: "streaming", Gate: "mid"}, Response{Text: "again", Gate: "mid"})
	g := p.Gate("mid")
	got := make(chan played, 1)
	go func() { got <- playAll(context.Background(), p, llm.Request{}) }()
	<-g.Reached()
	select {
	case r := <-got:
		t.Fatalf("the response passed a closed gate: %+v", r)
	default:
	}
	g.Release()
	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, "streaming", r.content)
	require.Equal(t, "stop", r.final.FinishReason)
	r = playAll(context.Background(), p, llm.Request{})
	require.NoError(t, r.err, "a released gate stays open")
	require.Equal(t, "again", r.content)
}

// TestGateCancelled: the context ends a wait at a gate.
func TestGateCancelled(t *testing.T) {
	p := New(Response{Text: "x", Gate: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan played, 1)
	go func() { got <- playAll(ctx, p, llm.Request{}) }()
	<-p.Gate("never").Reached()
	cancel()
	require.ErrorIs(t, (<-got).err, context.Canceled)
}

// TestGateFile: a script's gateDir makes gates file-backed, for tests and
// shells that drive the real binary (ZQAGENT_SCRIPT).
func TestGateFile(t *testing.T) {
	dir := t.TempDir()
	b, err := json.Marshal(map[string]any{"gateDir": dir, "responses": []any{
		map[string]any{"text": "held", "gate": "g1", "toolCalls": []any{map[string]any{"name": "list_files"}}}}})
	require.NoError(t, err)
	p, err := Parse(b)
	require.NoError(t, err)
	got := make(chan played, 1)
	go func() { got <- playAll(context.Background(), p, llm.Request{}) }()
	waitFile(t, filepath.Join(dir, "g1.reached"))
	select {
	case r := <-got:
		t.Fatalf("passed a closed gate: %+v", r)
	default:
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "g1.open"), nil, 0o600))
	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, "tool_calls", r.final.FinishReason)

	for _, bad := range []string{
		`{"responses":[{"gate":"../x"}]}`,
		`{"gateDir":"relative","responses":[]}`,
	} {
		_, err := Parse([]byte(bad))
		require.ErrorIs(t, err, ErrBadScript, bad)
	}
}

// waitFile waits (with a generous deadline) until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		require.True(t, time.Now().Before(deadline), "%s never appeared", path)
		time.Sleep(5 * time.Millisecond)
	}
}
