package wsrpc

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStallWatch: the watch closes a connection only when its socket took
// no byte for a whole timeout during a write; a slow but steady write of
// any length never trips it (a fake clock: no timing in the test).
func TestStallWatch(t *testing.T) {
	now := time.Unix(0, 0)
	stalls := 0
	w := newStallWatch(10*time.Second, func() { stalls++ })
	w.now = func() time.Time { return now }
	defer w.stop()

	w.fire() // no write: nothing to watch
	require.Zero(t, stalls)

	w.begin()
	for range 100 { // a 100-step write, 9 s between bytes: 900 s in all
		now = now.Add(9 * time.Second)
		w.progress()
		w.fire() // even a timer that fires now finds the progress
	}
	require.Zero(t, stalls, "a steady write is never a stall, however long")
	now = now.Add(10 * time.Second) // then nothing for a whole timeout
	w.fire()
	require.Equal(t, 1, stalls)
	w.end()
	now = now.Add(time.Hour)
	w.fire()
	require.Equal(t, 1, stalls, "an idle connection is not stalled")
}

// TestProgressConnReportsEachChunk: a big write reports progress per chunk
// the socket took, not once at its end.
func TestProgressConnReportsEachChunk(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	pc := &progressConn{Conn: a}
	calls := 0
	f := func() { calls++ }
	pc.onProgress.Store(&f)
	go func() { _, _ = io.Copy(io.Discard, b) }()
	n, err := pc.Write(make([]byte, 10*progressChunk+1))
	require.NoError(t, err)
	require.Equal(t, 10*progressChunk+1, n)
	require.Equal(t, 11, calls)
}
