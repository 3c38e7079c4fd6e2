package terminal

import (
	"bytes"
	"testing"
)

// checkRing compares r with model, the whole stream written so far.
func checkRing(t *testing.T, r *ring, model []byte) {
	t.Helper()
	if r.end != int64(len(model)) {
		t.Fatalf("end = %d, want %d", r.end, len(model))
	}
	wantStart := max(0, len(model)-r.size)
	if r.start() != int64(wantStart) {
		t.Fatalf("start = %d, want %d", r.start(), wantStart)
	}
	if len(r.buf) > r.size {
		t.Fatalf("buffer grew to %d > size %d", len(r.buf), r.size)
	}
	for off := wantStart; off <= len(model); off += max(1, r.size/7) {
		got := make([]byte, r.size+3)
		n := r.read(int64(off), got)
		if !bytes.Equal(got[:n], model[off:]) {
			t.Fatalf("read(%d) = %q, want %q", off, got[:n], model[off:])
		}
	}
	if got := r.tail(r.size / 2); !bytes.Equal(got, model[max(wantStart, len(model)-r.size/2):]) {
		t.Fatalf("tail = %q", got)
	}
	if wantStart > 0 && r.read(int64(wantStart-1), make([]byte, 4)) != 0 {
		t.Fatal("read before start returned data")
	}
}

func ringOps(t *testing.T, size int, writes [][]byte) {
	r := newRing(size)
	var model []byte
	for _, w := range writes {
		r.write(w)
		model = append(model, w...)
		checkRing(t, r, model)
	}
}

func TestRing(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 10)
	for _, tc := range []struct {
		name   string
		size   int
		writes [][]byte
	}{
		{"empty", 8, nil},
		{"fits", 16, [][]byte{[]byte("hello"), []byte(" world")}},
		{"exactly full", 10, [][]byte{[]byte("12345"), []byte("67890")}},
		{"wraps", 10, [][]byte{[]byte("1234567"), []byte("abcdef"), []byte("XY")}},
		{"write larger than ring", 10, [][]byte{[]byte("ab"), big, []byte("z")}},
		{"many small", 7, [][]byte{{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}}},
		{"grows then wraps", 100, [][]byte{big[:30], big[:30], big[:30], big[:30], big[:3]}},
	} {
		t.Run(tc.name, func(t *testing.T) { ringOps(t, tc.size, tc.writes) })
	}
}

func FuzzRing(f *testing.F) {
	f.Add(uint8(10), []byte("hello world, this is a ring"), []byte{3, 7, 1, 20})
	f.Fuzz(func(t *testing.T, size uint8, data []byte, cuts []byte) {
		if size == 0 {
			return
		}
		var writes [][]byte
		for _, c := range cuts {
			n := min(int(c), len(data))
			writes = append(writes, data[:n])
			data = data[n:]
		}
		writes = append(writes, data)
		ringOps(t, int(size), writes)
	})
}
