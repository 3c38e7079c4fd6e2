package shell

import (
	"strings"
	"testing"
)

func TestOutputSmall(t *testing.T) {
	o := newOutput(4, 4)
	for _, p := range []string{"ab", "cde", "f"} {
		o.Write([]byte(p))
	}
	if s, tr := o.Summary(); s != "abcdef" || tr {
		t.Fatalf("Summary = %q %v", s, tr)
	}
	c := o.ReadAt(2, 100, true)
	if c.Data != "cdef" || c.Next != 6 || c.Dropped != 0 {
		t.Fatalf("ReadAt(2) = %+v", c)
	}
}

func TestOutputElides(t *testing.T) {
	o := newOutput(4, 4)
	o.Write([]byte("0123456789abcdef"))
	o.Write([]byte("XY"))
	s, tr := o.Summary()
	if !tr || !strings.HasPrefix(s, "0123\n") || !strings.HasSuffix(s, "\nefXY") || !strings.Contains(s, "10 bytes") {
		t.Fatalf("Summary = %q %v", s, tr)
	}
	c := o.ReadAt(4, 100, true)
	if c.Dropped == 0 || !strings.HasSuffix(c.Data, "efXY") || c.Next != 18 {
		t.Fatalf("ReadAt(4) = %+v", c)
	}
}

func TestOutputUTF8Boundaries(t *testing.T) {
	o := newOutput(100, 100)
	o.Write([]byte("añ")[:2]) // 'a' and half of 'ñ'
	c := o.ReadAt(0, 100, false)
	if c.Data != "a" || c.Next != 1 {
		t.Fatalf("partial rune not held back: %+v", c)
	}
	o.Write([]byte("añ")[2:])
	c = o.ReadAt(c.Next, 100, false)
	if c.Data != "ñ" || c.Next != 3 {
		t.Fatalf("rune not completed: %+v", c)
	}
	// A cut by max inside a rune moves back to its start.
	o.Write([]byte("日本"))
	c = o.ReadAt(3, 4, false)
	if c.Data != "日" || c.Next != 6 {
		t.Fatalf("max cut: %+v", c)
	}
}

func FuzzOutput(f *testing.F) {
	f.Add([]byte("hello\nworld"), uint8(3), uint8(5), int64(2), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, head, tail uint8, off int64, max uint8) {
		h, tl, mx := int(head%16)+1, int(tail%16)+1, int(max%32)+4
		o := newOutput(h, tl)
		for i := 0; i < len(data); i += 3 {
			o.Write(data[i:min(i+3, len(data))])
		}
		if o.Total() != int64(len(data)) {
			t.Fatalf("Total = %d", o.Total())
		}
		s, tr := o.Summary()
		if !tr && s != strings.ToValidUTF8(string(data), "\uFFFD") {
			t.Fatalf("untruncated Summary %q != %q", s, data)
		}
		c := o.ReadAt(off, mx, true)
		if c.Next < c.Start || c.Next > o.Total() || c.Next-c.Start > int64(mx) {
			t.Fatalf("ReadAt(%d,%d) = %+v", off, mx, c)
		}
		if c.Dropped == 0 && c.Start < int64(len(data)) && c.Start >= 0 {
			want := strings.ToValidUTF8(string(data[c.Start:c.Next]), "\uFFFD")
			if c.Data != want {
				t.Fatalf("ReadAt data %q, want %q", c.Data, want)
			}
		}
	})
}
