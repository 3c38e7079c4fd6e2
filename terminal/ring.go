package terminal

// ring is the scrollback: the last size bytes of a terminal's output stream,
// addressed by stream offset. The byte at offset x lives at buf[x%size]; buf
// grows on demand up to size so that an idle terminal costs little.
// Not safe for concurrent use: the terminal's mutex guards it.
type ring struct {
	buf  []byte
	size int
	end  int64 // offset just past the newest byte: total bytes ever written
}

func newRing(size int) *ring { return &ring{size: size} }

// start is the offset of the oldest byte still held.
func (r *ring) start() int64 {
	return max(0, r.end-int64(r.size))
}

func (r *ring) write(p []byte) {
	if len(r.buf) < r.size {
		if r.end+int64(len(p)) <= int64(r.size) { // no wrap yet: offsets are indexes
			if need := int(r.end) + len(p); need > cap(r.buf) {
				nb := make([]byte, len(r.buf), min(max(2*cap(r.buf), need, 4096), r.size))
				copy(nb, r.buf)
				r.buf = nb
			}
			r.buf = append(r.buf, p...)
			r.end += int64(len(p))
			return
		}
		nb := make([]byte, r.size)
		copy(nb, r.buf)
		r.buf = nb
	}
	if len(p) > r.size {
		r.end += int64(len(p) - r.size)
		p = p[len(p)-r.size:]
	}
	pos := int(r.end % int64(r.size))
	n := copy(r.buf[pos:], p)
	copy(r.buf, p[n:])
	r.end += int64(len(p))
}

// read copies bytes from offset off (start() <= off <= end) into dst and
// returns how many it copied.
func (r *ring) read(off int64, dst []byte) int {
	if off < r.start() || off >= r.end {
		return 0
	}
	n := int(min(int64(len(dst)), r.end-off))
	if len(r.buf) < r.size {
		return copy(dst[:n], r.buf[off:])
	}
	pos := int(off % int64(r.size))
	c := copy(dst[:n], r.buf[pos:])
	copy(dst[c:n], r.buf)
	return n
}

// tail returns a copy of the last n bytes held (fewer if the ring holds less).
func (r *ring) tail(n int) []byte {
	off := max(r.start(), r.end-int64(n))
	out := make([]byte, r.end-off)
	r.read(off, out)
	return out
}
