//go:build !windows

package terminal

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// holdFirst makes the first Output block until release is closed.
func (r *recorder) holdFirst(release chan struct{}) {
	r.hold, r.holding = release, make(chan struct{})
}

func (r *recorder) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
}

func (r *recorder) waitCount(t testing.TB, substr string, n int) {
	t.Helper()
	r.waitUntil(t, fmt.Sprintf("%d× %q", n, substr), func(r *recorder) bool { return bytes.Count(r.data.Bytes(), []byte(substr)) >= n })
}

// poll waits until cond holds.
func poll(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
