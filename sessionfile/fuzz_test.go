package sessionfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// FuzzImport: Read never panics on any bytes, and whatever it answers it
// writes nothing outside its destination: on an error the destination is
// empty, on success it holds exactly the manifest's attachments (regular
// files, no links). Errors are the package's own (no file system error:
// the destination is fine).
func FuzzImport(f *testing.F) {
	valid := writeSample(f)
	f.Add(valid)
	f.Add(valid[:len(valid)/2])
	f.Add(valid[:len(valid)-22]) // no end of central directory
	f.Add([]byte{})
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	for _, e := range []entry{
		{name: "../evil.txt", data: []byte("x")},
		{name: "/tmp/evil.txt", data: []byte("x")},
		{name: "attachments/../../evil.txt", data: []byte("x")},
		{name: `attachments\..\evil.txt`, data: []byte("x")},
		{name: "attachments/1-0-a\x00b", data: []byte("x")},
		{name: "attachments/1-0-link.png", data: []byte("/etc/passwd"), mode: fs.ModeSymlink | 0o777},
		{name: "attachments/1765011600000-0-shot.png", data: []byte("dup")},
		{name: EventsName, data: bytes.Repeat([]byte("0"), 1<<16), declared: 10},
	} {
		f.Add(rezip(f, valid, nil, e))
	}
	f.Add(withAttachment(f, valid, "1-0-x.png", "attachments/1-0-x.png", []byte("ok")))
	// The default limits, scaled down so that an input that inflates to
	// its limits costs milliseconds, not a write of 512 MiB.
	lim := DefaultLimits
	lim.FileBytes = 4 << 20
	lim.EventBytes, lim.EventsBytes = 256<<10, 2<<20
	lim.MessageBytes, lim.HistoryBytes = 256<<10, 2<<20
	lim.AttachmentBytes, lim.AttachmentsBytes = 1<<20, 2<<20
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "dst")
		if err := os.Mkdir(dst, 0o700); err != nil {
			t.Fatal(err)
		}
		root, err := os.OpenRoot(dst)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		c, err := Read(bytes.NewReader(data), int64(len(data)), root, lim)
		got := filesUnder(t, parent)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrVersion) {
				t.Fatalf("an error of no kind: %v", err)
			}
			if len(got) > 0 {
				t.Fatalf("refused (%v) but left %q", err, got)
			}
			return
		}
		want := map[string]bool{}
		for _, a := range c.Manifest.Attachments {
			want["dst/"+a.Name] = true
		}
		if len(got) != len(want) {
			t.Fatalf("wrote %q for the attachments %v", got, c.Manifest.Attachments)
		}
		for _, name := range got {
			if !want[name] {
				t.Fatalf("wrote %q, not an attachment of the manifest", name)
			}
			fi, err := os.Lstat(filepath.Join(parent, name))
			if err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s is not a regular file: %v", name, err)
			}
		}
	})
}

// TestReadSurvivesEveryCut: a valid file cut at every third length, and
// with a byte changed at every third offset, is read without a panic, and
// a refusal leaves nothing behind (a deterministic walk beside
// FuzzImport).
func TestReadSurvivesEveryCut(t *testing.T) {
	valid := writeSample(t)
	parent := t.TempDir()
	dst := filepath.Join(parent, "dst")
	check := func(what string, data []byte) {
		t.Helper()
		if err := os.Mkdir(dst, 0o700); err != nil {
			t.Fatal(err)
		}
		root, err := os.OpenRoot(dst)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Read(bytes.NewReader(data), int64(len(data)), root, DefaultLimits)
		root.Close()
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrVersion) {
				t.Fatalf("%s: an error of no kind: %v", what, err)
			}
			if got := filesUnder(t, parent); len(got) > 0 {
				t.Fatalf("%s: refused (%v) but left %q", what, err, got)
			}
		}
		if err := os.RemoveAll(dst); err != nil {
			t.Fatal(err)
		}
	}
	step := 3 // every third offset: the whole walk costs seconds under -race
	if testing.Short() {
		step = 13
	}
	for n := 0; n < len(valid); n += step {
		check("cut", valid[:n])
		flipped := bytes.Clone(valid)
		flipped[n] ^= 0x5a
		check("flip", flipped)
	}
}
