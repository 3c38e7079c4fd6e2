package diff

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/tools"
)

func TestParsePatch(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    []FileOp
		wantErr string // substring; "" for success
	}{
		{
			name: "all sections",
			text: "*** Begin Patch\n*** Add File: a.txt\n+one\n+\n+two\n*** Delete File: b.txt\n*** Update File: c.go\n*** Move to: d.go\n@@ func main() {\n ctx\n-old\n+new\n@@\n-x\n+y\n*** End of File\n*** End Patch\n",
			want: []FileOp{
				{Kind: OpAdd, Path: "a.txt", Content: "one\n\ntwo\n", Line: 2},
				{Kind: OpDelete, Path: "b.txt", Line: 6},
				{Kind: OpUpdate, Path: "c.go", MoveTo: "d.go", Line: 7, Chunks: []Chunk{
					{Context: "func main() {", Old: []string{"ctx", "old"}, New: []string{"ctx", "new"}, Line: 9},
					{Old: []string{"x"}, New: []string{"y"}, EOF: true, Line: 13},
				}},
			},
		},
		{
			name: "heredoc wrapper, CRLF, first hunk without @@, blank context",
			text: "apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Update File: x\r\n a\r\n\r\n-b\r\n+c\r\n*** End Patch\r\nEOF\r\n",
			want: []FileOp{{Kind: OpUpdate, Path: "x", Line: 3, Chunks: []Chunk{
				{Old: []string{"a", "", "b"}, New: []string{"a", "", "c"}, Line: 4},
			}}},
		},
		{
			name: "unified-style hunk header is not a context line",
			text: "*** Begin Patch\n*** Update File: x\n@@ -1,2 +1,2 @@\n-a\n+b\n*** End Patch",
			want: []FileOp{{Kind: OpUpdate, Path: "x", Line: 2, Chunks: []Chunk{{Old: []string{"a"}, New: []string{"b"}, Line: 3}}}},
		},
		{
			name: "move only",
			text: "*** Begin Patch\n*** Update File: x\n*** Move to: y\n*** End Patch",
			want: []FileOp{{Kind: OpUpdate, Path: "x", MoveTo: "y", Line: 2}},
		},
		{name: "no begin", text: "*** Update File: x\n-a\n+b\n*** End Patch", wantErr: "must start with"},
		{name: "no end", text: "*** Begin Patch\n*** Update File: x\n-a\n+b\n", wantErr: "must end with"},
		{name: "empty", text: "*** Begin Patch\n*** End Patch", wantErr: "changes no file"},
		{name: "empty text", text: "", wantErr: "must start with"},
		{name: "garbage section", text: "*** Begin Patch\n*** Rename File: x\n*** End Patch", wantErr: "line 2: expected"},
		{name: "add without plus", text: "*** Begin Patch\n*** Add File: x\nplain\n*** End Patch", wantErr: "must start with \"+\""},
		{name: "update without hunks", text: "*** Begin Patch\n*** Update File: x\n*** End Patch", wantErr: "has no hunks"},
		{name: "bad hunk line", text: "*** Begin Patch\n*** Update File: x\n@@\n-a\n*b\n*** End Patch", wantErr: "line 5"},
		{name: "empty path", text: "*** Begin Patch\n*** Delete File:   \n*** End Patch", wantErr: "needs a path"},
		{name: "eof outside hunk", text: "*** Begin Patch\n*** Update File: x\n*** End of File\n*** End Patch", wantErr: "outside a hunk"},
		{name: "lines after eof", text: "*** Begin Patch\n*** Update File: x\n@@\n-a\n*** End of File\n+b\n*** End Patch", wantErr: "new \"@@\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePatch(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrParse) || tools.ErrorType(err) != TypeParse {
					t.Fatalf("err %v is not a parse error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range p.Ops {
				for j := range p.Ops[i].Chunks {
					c := &p.Ops[i].Chunks[j]
					if len(c.Kinds) != len(c.Old)+len(c.New)-strings.Count(c.Kinds, " ") {
						t.Fatalf("Kinds %q does not fit Old/New", c.Kinds)
					}
					c.Kinds = ""
				}
			}
			if !reflect.DeepEqual(p.Ops, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", p.Ops, tt.want)
			}
		})
	}
}

func TestParseUnified(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		check   func(t *testing.T, fs []*FileDiff)
		wantErr string
	}{
		{
			name: "traditional two files",
			text: "--- a/x.go\t2024-01-01\n+++ b/x.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n--- a/y.go\n+++ b/y.go\n@@ -5 +5 @@\n-q\n+r\n",
			check: func(t *testing.T, fs []*FileDiff) {
				if len(fs) != 2 || fs[0].OldName != "x.go" || fs[0].NewName != "x.go" || fs[1].NewName != "y.go" {
					t.Fatalf("%+v %+v", fs[0], fs[1])
				}
				if f := fs[1].Fragments[0]; f.OldPosition != 5 || f.OldLines != 1 {
					t.Fatalf("fragment %+v", f)
				}
			},
		},
		{
			name: "git new, delete and rename",
			text: "diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+hi\n" +
				"diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n" +
				"diff --git a/old.txt b/new.txt\nsimilarity index 90%\nrename from old.txt\nrename to new.txt\n",
			check: func(t *testing.T, fs []*FileDiff) {
				if len(fs) != 3 || !fs[0].IsNew || fs[0].NewName != "n.txt" || fs[0].OldName != "" ||
					!fs[1].IsDelete || fs[1].OldName != "d.txt" || fs[1].NewName != "" ||
					fs[2].OldName != "old.txt" || fs[2].NewName != "new.txt" {
					t.Fatalf("%+v %+v %+v", fs[0], fs[1], fs[2])
				}
			},
		},
		{
			name: "miscounted header and blank context without space",
			text: "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n\n-b\n+c\n+d\n",
			check: func(t *testing.T, fs []*FileDiff) {
				f := fs[0].Fragments[0]
				if f.OldLines != 3 || f.NewLines != 4 || len(f.Lines) != 5 {
					t.Fatalf("recount: %+v", f)
				}
			},
		},
		{
			name: "bare @@",
			text: "--- x\n+++ x\n@@\n ctx\n-a\n+b\n",
			check: func(t *testing.T, fs []*FileDiff) {
				if f := fs[0].Fragments[0]; f.OldPosition != 1 || f.OldLines != 2 {
					t.Fatalf("%+v", f)
				}
			},
		},
		{
			name: "no newline marker",
			text: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n",
			check: func(t *testing.T, fs []*FileDiff) {
				l := fs[0].Fragments[0].Lines
				if l[0].Line != "a" || l[1].Line != "b" {
					t.Fatalf("%q", l)
				}
			},
		},
		{name: "nothing", text: "hello\nworld\n", wantErr: "no file diffs"},
		{name: "empty", text: "", wantErr: "no file diffs"},
		{name: "no changes", text: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n a\n", wantErr: "no changes"},
		{name: "bad header", text: "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -a,b +c,d @@\n-a\n+b\n", wantErr: "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, err := ParseUnified(tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || tools.ErrorType(err) != TypeParse {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, fs)
		})
	}
}

func FuzzParsePatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n")
	f.Add("*** Begin Patch\n*** Update File: c\n*** Move to: d\n@@ f\n ctx\n-old\n+new\n*** End of File\n*** Delete File: e\n*** End Patch")
	f.Add("*** Begin Patch\n*** Update File: x\n a\n\n-b\n*** End Patch")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParsePatch(text)
		if err != nil {
			if !errors.Is(err, ErrParse) {
				t.Fatalf("non-parse error %v", err)
			}
			return
		}
		for _, op := range p.Ops {
			if strings.TrimSpace(op.Path) == "" {
				t.Fatal("empty path accepted")
			}
			for _, c := range op.Chunks {
				// Applying to any content must not panic.
				_, _ = applyChunks(op.Path, strings.Join(c.Old, "\n"), op.Chunks)
			}
		}
	})
}

func FuzzParseUnified(f *testing.F) {
	f.Add("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
	f.Add("diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+hi\n")
	f.Add("--- x\n+++ x\n@@\n ctx\n\n-a\n+b\n\\ No newline at end of file\n")
	f.Fuzz(func(t *testing.T, text string) {
		files, err := ParseUnified(text)
		if err != nil {
			return
		}
		for _, d := range files {
			if d.OldName == "" && d.NewName == "" {
				t.Fatal("file without a name")
			}
			_, _ = applyFragments("x", "a\nb\nc\n", d.Fragments)
		}
	})
}
