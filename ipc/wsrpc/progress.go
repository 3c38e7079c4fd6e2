package wsrpc

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// progressChunk is the most one socket write hands the kernel at once, so
// that a slow but steady reader shows progress within a big frame.
const progressChunk = 32 << 10

// progressListener wraps each accepted connection in a progressConn.
type progressListener struct{ net.Listener }

func (l progressListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &progressConn{Conn: c}, nil
}

type progressKey struct{}

// progressConn counts what the socket accepted. The WebSocket writes
// through it (the HTTP server hijacks the very conn Accept returned).
type progressConn struct {
	net.Conn
	onProgress atomic.Pointer[func()] // set by the watchdog of the WebSocket conn
}

func (c *progressConn) Write(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		n := min(len(p), progressChunk)
		w, err := c.Conn.Write(p[:n])
		total += w
		if w > 0 {
			if f := c.onProgress.Load(); f != nil {
				(*f)()
			}
		}
		if err != nil {
			return total, err
		}
		p = p[n:]
	}
	return total, nil
}

// stallWatch closes a connection whose socket made no progress at all for
// a whole timeout while a frame was being written. A slow reader that keeps
// taking bytes is never cut off, however long one frame takes.
type stallWatch struct {
	timeout time.Duration
	onStall func()
	now     func() time.Time // time.Now; tests set a fake clock

	mu      sync.Mutex // guards timer, writing, last
	timer   *time.Timer
	writing bool
	last    time.Time // the write's start or its last progress
}

func newStallWatch(timeout time.Duration, onStall func()) *stallWatch {
	w := &stallWatch{timeout: timeout, onStall: onStall, now: time.Now}
	w.timer = time.AfterFunc(timeout, w.fire)
	w.timer.Stop()
	return w
}

// fire runs when the timer expires. It decides on the time since the last
// progress, not on the timer alone (a progress can race the expiry): a
// write that moved meanwhile re-arms the timer for what is left.
func (w *stallWatch) fire() {
	w.mu.Lock()
	if !w.writing {
		w.mu.Unlock()
		return
	}
	if left := w.timeout - w.now().Sub(w.last); left > 0 {
		w.timer.Reset(left)
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	w.onStall()
}

// begin arms the watch for one write; end disarms it.
func (w *stallWatch) begin() {
	w.mu.Lock()
	w.writing = true
	w.last = w.now()
	w.timer.Reset(w.timeout)
	w.mu.Unlock()
}

func (w *stallWatch) end() {
	w.mu.Lock()
	w.writing = false
	w.timer.Stop()
	w.mu.Unlock()
}

// progress restarts the timeout: the socket took bytes. It only notes the
// time; fire re-arms the timer when it finds progress.
func (w *stallWatch) progress() {
	w.mu.Lock()
	if w.writing {
		w.last = w.now()
	}
	w.mu.Unlock()
}

// stop disarms the watch for good.
func (w *stallWatch) stop() { w.end() }

// progressConnFrom returns the progressConn of a request, if the server's
// listener made one.
func progressConnFrom(ctx context.Context) *progressConn {
	pc, _ := ctx.Value(progressKey{}).(*progressConn)
	return pc
}
