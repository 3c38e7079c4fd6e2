package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("three.txt"), "one\ntwo\r\nthree")
	write(t, e.path("empty.txt"), "")
	write(t, e.path("nul.bin"), "abc\x00def\n")
	write(t, e.path("latin1.txt"), strings.Repeat("caf\xe9 cr\xe8me \xe0 la \xff\xfe\n", 20))
	write(t, e.path("utf8.txt"), strings.Repeat("héllo wörld ✓\n", 10))
	write(t, e.path("long.txt"), strings.Repeat("x", MaxLineChars+50)+"\nshort\n")
	write(t, e.path("huge-line.txt"), "first\n"+strings.Repeat("é", 150_000)+"\nlast")
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	write(t, e.path("many.txt"), many.String())
	write(t, e.path("wide.txt"), strings.Repeat(strings.Repeat("w", 1000)+"\n", 400))
	mkdir(t, e.path("dir"))

	tests := []struct {
		name      string
		args      map[string]any
		want      []string // substrings
		wantNot   []string
		wantError string // error type
	}{
		{name: "whole", args: map[string]any{"path": "three.txt"},
			want: []string{"     1\tone\n", "     2\ttwo\n", "     3\tthree\n"}, wantNot: []string{"\r", "showing"}},
		{name: "range", args: map[string]any{"path": "three.txt", "start_line": 2, "end_line": 2},
			want: []string{"     2\ttwo\n", "[showing lines 2-2 of 3; call read_file with start_line=3"}, wantNot: []string{"one", "three"}},
		{name: "absolute", args: map[string]any{"path": e.path("three.txt")}, want: []string{"1\tone"}},
		{name: "dot path", args: map[string]any{"path": "./dir/../three.txt"}, want: []string{"1\tone"}},
		{name: "empty", args: map[string]any{"path": "empty.txt"}, want: []string{"empty.txt is empty"}},
		{name: "utf8", args: map[string]any{"path": "utf8.txt"}, want: []string{"héllo wörld ✓"}},
		{name: "line cap", args: map[string]any{"path": "many.txt"},
			want:    []string{"  2000\tline 2000\n", "[showing lines 1-2000 of 2500; call read_file with start_line=2001"},
			wantNot: []string{"line 2001"}},
		{name: "continue", args: map[string]any{"path": "many.txt", "start_line": 2001},
			want: []string{"  2001\tline 2001\n", "  2500\tline 2500\n"}, wantNot: []string{"showing", "line 2000\n"}},
		{name: "byte cap", args: map[string]any{"path": "wide.txt"},
			want: []string{"output capped at 256 KB", "of 400"}},
		{name: "long line cut", args: map[string]any{"path": "long.txt"},
			want: []string{"… [line cut]", "     2\tshort", "lines longer than 2000 characters were cut"}},
		{name: "line longer than the read buffer", args: map[string]any{"path": "huge-line.txt"},
			want: []string{"     1\tfirst\n", "     2\t" + strings.Repeat("é", MaxLineChars/2) + " … [line cut]", "     3\tlast\n"}},
		{name: "binary nul", args: map[string]any{"path": "nul.bin"}, wantError: TypeBinary},
		{name: "binary latin1", args: map[string]any{"path": "latin1.txt"}, wantError: TypeBinary},
		{name: "directory", args: map[string]any{"path": "dir"}, wantError: TypeIsDir},
		{name: "missing", args: map[string]any{"path": "nope.txt"}, wantError: "not_found"},
		{name: "no path", args: map[string]any{}, wantError: "invalid_arguments"},
		{name: "past end", args: map[string]any{"path": "three.txt", "start_line": 9}, wantError: "invalid_arguments"},
		{name: "end before start", args: map[string]any{"path": "three.txt", "start_line": 3, "end_line": 2}, wantError: "invalid_arguments"},
		{name: "bad type", args: map[string]any{"path": "three.txt", "start_line": "two"}, wantError: "invalid_arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.call(t, "read_file", tt.args)
			if tt.wantError != "" {
				requireType(t, err, tt.wantError)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := out.(string)
			for _, w := range tt.want {
				if !strings.Contains(s, w) {
					t.Errorf("output lacks %q:\n%s", w, clip(s))
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(s, w) {
					t.Errorf("output has %q:\n%s", w, clip(s))
				}
			}
		})
	}
	if _, err := e.call(t, "read_file", map[string]any{"path": "dir"}); err == nil || !strings.Contains(err.Error(), "list_files") {
		t.Fatalf("directory error should point at list_files: %v", err)
	}
}

func TestReadFileRecordsGuard(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("g.txt"), "v1\n")
	e.mustCall(t, "read_file", map[string]any{"path": "g.txt", "start_line": 1, "end_line": 1})
	if !e.guard.Known(e.path("g.txt")) {
		t.Fatal("read not recorded")
	}
	write(t, e.path("g.txt"), "v2 by someone else\n")
	_, err := e.call(t, "write_file", map[string]any{"path": "g.txt", "content": "mine\n"})
	requireType(t, err, "conflict")
	if !strings.Contains(err.Error(), "read_file") {
		t.Fatalf("conflict should tell to read again: %v", err)
	}
	_, err = e.call(t, "replace_in_file", map[string]any{"path": "g.txt", "old_string": "v2", "new_string": "v3"})
	requireType(t, err, "conflict")
	if read(t, e.path("g.txt")) != "v2 by someone else\n" {
		t.Fatal("conflicting write landed")
	}
	e.mustCall(t, "read_file", map[string]any{"path": "g.txt"})
	e.mustCall(t, "replace_in_file", map[string]any{"path": "g.txt", "old_string": "v2", "new_string": "v3"})
	// Own writes do not conflict.
	e.mustCall(t, "write_file", map[string]any{"path": "g.txt", "content": "v4\n"})
	e.mustCall(t, "replace_in_file", map[string]any{"path": "g.txt", "old_string": "v4", "new_string": "v5"})
	if read(t, e.path("g.txt")) != "v5\n" {
		t.Fatal("own writes")
	}
}

func TestReadFileCancelled(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("a.txt"), "a\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadFile(ctx, e.w, nil, "a.txt", 0, 0); err == nil {
		t.Fatal("cancelled read should fail")
	}
}

func BenchmarkReadFile(b *testing.B) {
	e := newEnv(b)
	var sb strings.Builder
	for i := range 200_000 {
		fmt.Fprintf(&sb, "func example%d(x int) int { return x * %d } // some typical source text\n", i, i)
	}
	p := e.path("big.go")
	write(b, p, sb.String())
	fi, _ := os.Stat(p)
	b.SetBytes(fi.Size())
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		out, err := ReadFile(ctx, e.w, e.guard, "big.go", 100_000, 0)
		if err != nil || !strings.Contains(out, "example99999") {
			b.Fatal(err)
		}
	}
	_ = filepath.Base(p)
}
