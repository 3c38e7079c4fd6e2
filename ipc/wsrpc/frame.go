package wsrpc

import (
	"context"
	"fmt"
	"io"

	"github.com/coder/websocket"
)

// smallFrame is the largest frame read into the Go heap. A larger one is
// read into one of the process's large-frame buffers (frameSlots), so that
// it costs its size once and that memory goes back to the OS as soon as
// the frame was handled.
const smallFrame = 1 << 20

// LargeFrameSlots is how many frames larger than 1 MiB the process reads
// and handles at the same time: the budget of large frames is
// LargeFrameSlots × MaxFrame. A connection whose frame needs a slot while
// all are taken stops reading (its client's writes wait) until one is
// free; small frames on every connection go on meanwhile.
const LargeFrameSlots = 2

// frameBufBytes is the size of a large-frame buffer: the websocket
// library reads up to MaxFrame+1 bytes before it refuses a frame (1009), and
// the buffer has room for one more read, which gets that refusal.
const frameBufBytes = MaxFrame + 2

// frameBuf is one large-frame buffer of frameBufBytes. Its memory is
// taken from the OS when first used and given back after each frame
// (frameBuf.release, per OS in framebuf_*.go); only the pages a frame
// touched are resident in between.
type frameBuf struct {
	mem []byte // nil until first used
}

// frameSlots are the endpoint's large-frame buffers; a buffer is in free
// while nobody reads or handles a frame in it.
type frameSlots struct {
	free chan *frameBuf // capacity LargeFrameSlots
}

func newFrameSlots(n int) *frameSlots {
	s := &frameSlots{free: make(chan *frameBuf, n)}
	for range n {
		s.free <- &frameBuf{}
	}
	return s
}

// acquire waits for a free buffer until ctx ends.
func (s *frameSlots) acquire(ctx context.Context) (*frameBuf, error) {
	select {
	case b := <-s.free:
		if b.mem == nil {
			mem, err := allocFrameMem(frameBufBytes)
			if err != nil {
				s.free <- b
				return nil, fmt.Errorf("large frame buffer: %w", err)
			}
			b.mem = mem
		}
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// put gives the pages of the used bytes back to the OS and frees the
// buffer. Nothing may read the frame after put.
func (s *frameSlots) put(b *frameBuf, used int) {
	b.mem = releaseFrameMem(b.mem, used)
	s.free <- b
}

// frame is one text or binary message as read.
type frame struct {
	typ  websocket.MessageType
	data []byte
	buf  *frameBuf // the large-frame buffer data lives in; nil for a small frame
}

// large reports whether the frame lives in a large-frame buffer.
func (f *frame) large() bool { return f.buf != nil }

// readFrame reads one message: up to smallFrame bytes into the Go heap,
// the rest of a larger one straight into a large-frame buffer (waiting for
// a free one; the first smallFrame bytes are copied over once). The
// websocket library enforces MaxFrame. A large frame must be given back
// with c.e.slots().put once handled.
func (c *Conn) readFrame() (frame, error) {
	typ, r, err := c.ws.Reader(c.ctx)
	if err != nil {
		return frame{}, err
	}
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= smallFrame {
				break
			}
			next := make([]byte, len(buf), min(2*cap(buf), smallFrame))
			copy(next, buf)
			buf = next
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return frame{typ: typ, data: buf}, nil
		}
		if err != nil {
			return frame{}, err
		}
	}
	slots := c.e.slots()
	fb, err := slots.acquire(c.ctx)
	if err != nil {
		return frame{}, err
	}
	n := copy(fb.mem, buf)
	buf = nil
	for {
		m, err := r.Read(fb.mem[n:])
		n += m
		if err == io.EOF {
			return frame{typ: typ, data: fb.mem[:n], buf: fb}, nil
		}
		if err == nil && n == len(fb.mem) {
			err = fmt.Errorf("frame larger than %d bytes", MaxFrame) // the library's limit comes first
		}
		if err != nil {
			slots.put(fb, n)
			return frame{}, err
		}
	}
}
