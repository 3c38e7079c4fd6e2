package shell

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// output is a bounded record of a command's combined stdout and stderr: the
// first headCap bytes and at least the last tailCap bytes, addressed by
// absolute byte offsets since the start of the stream. It is safe for
// concurrent use (one writer, many readers).
type output struct {
	headCap, tailCap int

	mu    sync.Mutex
	head  []byte // guarded by mu; the first headCap bytes
	tail  []byte // guarded by mu; bytes after head, the latest tailCap..2*tailCap of them
	total int64  // guarded by mu; every byte ever written
}

func newOutput(headCap, tailCap int) *output {
	return &output{headCap: headCap, tailCap: tailCap}
}

// Write records p; it never fails, so the writer never blocks on a reader.
func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	o.total += int64(n)
	if room := o.headCap - len(o.head); room > 0 {
		k := min(room, len(p))
		o.head = append(o.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= o.tailCap {
		o.tail = append(o.tail[:0], p[len(p)-o.tailCap:]...)
		return n, nil
	}
	o.tail = append(o.tail, p...)
	if len(o.tail) > 2*o.tailCap {
		k := copy(o.tail, o.tail[len(o.tail)-o.tailCap:])
		o.tail = o.tail[:k]
	}
	return n, nil
}

// Total is the number of bytes written so far.
func (o *output) Total() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total
}

// Summary returns the whole output when it fit, else its head and the last
// tailCap bytes around a note that says how much was left out. truncated
// reports whether anything was.
func (o *output) Summary() (text string, truncated bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	tail := o.tail
	if len(tail) > o.tailCap {
		tail = tail[len(tail)-o.tailCap:]
	}
	elided := o.total - int64(len(o.head)) - int64(len(tail))
	if elided <= 0 {
		return strings.ToValidUTF8(string(o.head)+string(tail), "\uFFFD"), false
	}
	head := trimPartialRune(o.head)
	tail = skipContinuation(tail)
	return fmt.Sprintf("%s\n[... %d bytes of output elided ...]\n%s",
		strings.ToValidUTF8(string(head), "\uFFFD"), elided, strings.ToValidUTF8(string(tail), "\uFFFD")), true
}

// chunk is one incremental read.
type chunk struct {
	Data    string // the bytes from Start to Next
	Start   int64  // the offset Data begins at (> the asked offset when bytes were dropped)
	Next    int64  // the offset to ask for next
	Dropped int64  // bytes between the asked offset and Start that are no longer kept
}

// ReadAt returns up to max bytes from offset on. Bytes no longer kept are
// skipped and counted in Dropped. While the stream may still grow (final is
// false) an incomplete UTF-8 sequence at the end is held back for the next
// read.
func (o *output) ReadAt(offset int64, max int, final bool) chunk {
	o.mu.Lock()
	defer o.mu.Unlock()
	if offset < 0 {
		offset = 0
	}
	if offset >= o.total {
		return chunk{Start: o.total, Next: o.total}
	}
	headEnd := int64(len(o.head))
	tailStart := o.total - int64(len(o.tail))
	var seg []byte
	start := offset
	switch {
	case offset < headEnd:
		seg = o.head[offset:]
		if tailStart == headEnd { // nothing dropped yet: continue into the tail
			seg = append(seg[:len(seg):len(seg)], o.tail[:min(len(o.tail), max)]...)
		}
	case offset < tailStart:
		start = tailStart
		seg = skipContinuation(o.tail)
		start += int64(len(o.tail) - len(seg))
	default:
		seg = o.tail[offset-tailStart:]
	}
	cut := len(seg) > max
	if cut {
		seg = seg[:max]
	}
	if cut || (!final && start+int64(len(seg)) == o.total) {
		if t := trimPartialRune(seg); len(t) > 0 {
			seg = t
		}
	}
	return chunk{
		Data:    strings.ToValidUTF8(string(seg), "\uFFFD"),
		Start:   start,
		Next:    start + int64(len(seg)),
		Dropped: start - offset,
	}
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// skipContinuation drops UTF-8 continuation bytes at the start of b (a cut
// in the middle of a character).
func skipContinuation(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return b
}
