package diff

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const goSrc = `package main

import "fmt"

func a() {
	fmt.Println("a")
}

func b() {
	fmt.Println("a")
}
`

func TestApplyPatch(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		patch   string
		want    map[string]string // the whole workspace after
		wantErr string            // error type
		errHas  []string
	}{
		{
			name:  "update with anchor picks the second function",
			files: map[string]string{"m.go": goSrc},
			patch: "*** Begin Patch\n*** Update File: m.go\n@@ func b() {\n-\tfmt.Println(\"a\")\n+\tfmt.Println(\"b\")\n*** End Patch",
			want:  map[string]string{"m.go": goSrc[:strings.LastIndex(goSrc, `"a"`)] + "\"b\")\n}\n"},
		},
		{
			name:  "trailing whitespace tolerated",
			files: map[string]string{"t.txt": "alpha   \nbeta\t\ngamma\n"},
			patch: "*** Begin Patch\n*** Update File: t.txt\n alpha\n-beta\n+BETA\n gamma\n*** End Patch",
			want:  map[string]string{"t.txt": "alpha   \nBETA\ngamma\n"},
		},
		{
			name:  "surrounding whitespace tolerated",
			files: map[string]string{"t.txt": "  if x {\n    y()\n  }\n"},
			patch: "*** Begin Patch\n*** Update File: t.txt\n@@\n if x {\n-y()\n+    z()\n }\n*** End Patch",
			want:  map[string]string{"t.txt": "  if x {\n    z()\n  }\n"},
		},
		{
			name:  "end of file anchor",
			files: map[string]string{"e.txt": "x\nend\nx\nend\n"},
			patch: "*** Begin Patch\n*** Update File: e.txt\n@@\n x\n-end\n+END\n*** End of File\n*** End Patch",
			want:  map[string]string{"e.txt": "x\nend\nx\nEND\n"},
		},
		{
			name:  "two hunks, add, delete, move in one patch",
			files: map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\n7\n8\n", "gone.txt": "bye\n", "old/name.txt": "keep\nme\n"},
			patch: "*** Begin Patch\n*** Update File: a.txt\n@@\n 1\n-2\n+two\n 3\n@@\n 7\n-8\n+eight\n*** Add File: new/dir/n.txt\n+hello\n+world\n*** Delete File: gone.txt\n*** Update File: old/name.txt\n*** Move to: moved/name.txt\n@@\n keep\n-me\n+you\n*** End Patch",
			want:  map[string]string{"a.txt": "1\ntwo\n3\n4\n5\n6\n7\neight\n", "new/dir/n.txt": "hello\nworld\n", "moved/name.txt": "keep\nyou\n"},
		},
		{
			name:  "pure addition after context line",
			files: map[string]string{"p.txt": "head\nbody\n"},
			patch: "*** Begin Patch\n*** Update File: p.txt\n@@ head\n+inserted\n*** End Patch",
			want:  map[string]string{"p.txt": "head\ninserted\nbody\n"},
		},
		{
			name:    "second hunk fails: nothing changes",
			files:   map[string]string{"a.txt": "1\n2\n3\n", "b.txt": "x\n"},
			patch:   "*** Begin Patch\n*** Update File: b.txt\n-x\n+y\n*** Update File: a.txt\n@@\n-1\n+one\n@@\n 2\n-nope\n+3\n*** End Patch",
			wantErr: TypeHunk, errHas: []string{"a.txt: hunk 2", `first line "2"`, "no file was changed"},
		},
		{
			name:    "context line not found",
			files:   map[string]string{"a.txt": "1\n"},
			patch:   "*** Begin Patch\n*** Update File: a.txt\n@@ func missing()\n-1\n+2\n*** End Patch",
			wantErr: TypeHunk, errHas: []string{"hunk 1", "func missing()", "context line was not found"},
		},
		{
			name:    "add existing",
			files:   map[string]string{"a.txt": "1\n"},
			patch:   "*** Begin Patch\n*** Add File: a.txt\n+2\n*** End Patch",
			wantErr: TypeExists,
		},
		{
			name:    "update missing",
			patch:   "*** Begin Patch\n*** Update File: nope.txt\n-1\n+2\n*** End Patch",
			wantErr: TypeHunk, errHas: []string{"does not exist"},
		},
		{
			name:    "delete missing",
			patch:   "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch",
			wantErr: TypeHunk,
		},
		{
			name:    "move onto existing",
			files:   map[string]string{"a.txt": "1\n", "b.txt": "2\n"},
			patch:   "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n*** End Patch",
			wantErr: TypeExists,
		},
		{
			name:    "malformed",
			files:   map[string]string{"a.txt": "1\n"},
			patch:   "*** Begin Patch\n*** Update File: a.txt\n-1\n+2\n",
			wantErr: TypeParse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for p, c := range tt.files {
				write(t, e.path(p), c)
			}
			res, err := e.patch(t, tt.patch)
			if tt.wantErr != "" {
				requireType(t, err, tt.wantErr)
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				if got := snapshot(t, e.ws); !maps.Equal(got, tt.files) && !(len(got) == 0 && len(tt.files) == 0) {
					t.Fatalf("workspace changed on error: %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := snapshot(t, e.ws); !maps.Equal(got, tt.want) {
				t.Fatalf("workspace:\n%v\nwant\n%v", got, tt.want)
			}
			if len(res.Files) == 0 || !strings.HasPrefix(res.Summary, "applied to") {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

func TestApplyPatchResult(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("a.txt"), "1\n2\n")
	res, err := e.patch(t, "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n-2\n+two\n+three\n*** Add File: c.txt\n+c\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{
		{Path: "b.txt", Action: "moved", MovedFrom: "a.txt", Added: 2, Removed: 1},
		{Path: "c.txt", Action: "added", Added: 1},
	}
	if fmt.Sprint(res.Files) != fmt.Sprint(want) {
		t.Fatalf("%+v", res.Files)
	}
	// The Codex argument name works too.
	out, err := e.call(t, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Delete File: c.txt\n*** End Patch"})
	if err != nil || out.(*Result).Files[0].Action != "deleted" {
		t.Fatal(out, err)
	}
	_, err = e.call(t, "apply_patch", map[string]any{})
	requireType(t, err, "invalid_arguments")
}

func TestPatchEscapes(t *testing.T) {
	escapes := []struct {
		name  string
		patch func(e *env) string
	}{
		{"dotdot update", func(e *env) string { return upd("../outside/secret.txt") }},
		{"absolute outside", func(e *env) string { return upd(filepath.Join(e.outside, "secret.txt")) }},
		{"sibling prefix", func(e *env) string { return upd(filepath.Join(e.evil, "secret.txt")) }},
		{"symlink out", func(e *env) string { return upd("link_out.txt") }},
		{"delete through link dir", func(e *env) string { return "*** Begin Patch\n*** Delete File: linkdir/secret.txt\n*** End Patch" }},
		{"add under linked folder", func(e *env) string { return "*** Begin Patch\n*** Add File: linkdir/new.txt\n+x\n*** End Patch" }},
		{"add dotdot", func(e *env) string { return "*** Begin Patch\n*** Add File: ../outside/new.txt\n+x\n*** End Patch" }},
		{"move to outside", func(e *env) string {
			return "*** Begin Patch\n*** Update File: in.txt\n*** Move to: ../outside/moved.txt\n*** End Patch"
		}},
		{"move to linked folder", func(e *env) string {
			return "*** Begin Patch\n*** Update File: in.txt\n*** Move to: linkdir/moved.txt\n*** End Patch"
		}},
	}
	for _, tc := range escapes {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			write(t, e.path("in.txt"), "TOP SECRET\n")
			if err := os.Symlink(filepath.Join(e.outside, "secret.txt"), e.path("link_out.txt")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(e.outside, e.path("linkdir")); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, e.parent)
			_, err := e.patch(t, tc.patch(e))
			requireType(t, err, "outside_workspace")
			if after := snapshot(t, e.parent); !maps.Equal(before, after) {
				t.Fatalf("files changed: %v", keys(after))
			}
		})
	}
}

func upd(p string) string {
	return "*** Begin Patch\n*** Update File: " + p + "\n-TOP SECRET\n+pwned\n*** End Patch"
}

// TestLinkSwappedBeforeWrite swaps a checked directory for a link to outside
// after the plan is made and before the files are written: the os.Root
// refuses, and the file already written is rolled back.
func TestLinkSwappedBeforeWrite(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("first.txt"), "one\n")
	write(t, e.path("sub/f.txt"), "TOP SECRET\n")
	write(t, filepath.Join(e.outside, "f.txt"), secret)
	commitHook = func(display string) error {
		if display == "sub/f.txt" {
			if err := os.Rename(e.path("sub"), e.path("sub.orig")); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(e.outside, e.path("sub")); err != nil {
				t.Error(err)
			}
		}
		return nil
	}
	t.Cleanup(func() { commitHook = nil })
	_, err := e.patch(t, "*** Begin Patch\n*** Update File: first.txt\n-one\n+ONE\n*** Update File: sub/f.txt\n-TOP SECRET\n+pwned\n*** End Patch")
	requireType(t, err, "outside_workspace")
	if got := read(t, filepath.Join(e.outside, "f.txt")); got != secret {
		t.Fatalf("outside written: %q", got)
	}
	if got := read(t, e.path("first.txt")); got != "one\n" {
		t.Fatalf("first.txt not rolled back: %q", got)
	}
	if got := keys(snapshot(t, e.outside)); fmt.Sprint(got) != "[f.txt secret.txt]" {
		t.Fatalf("outside gained files: %v", got)
	}
}

// TestRollbackOnWriteFailure: a real failure at write time ("d" cannot be
// written as a file once "d/x.txt" made it a directory) puts back the files
// already written.
func TestRollbackOnWriteFailure(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("a.txt"), "a\n")
	write(t, e.path("del.txt"), "delete me\n")
	before := snapshot(t, e.ws)
	_, err := e.patch(t, "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Delete File: del.txt\n*** Add File: d/x.txt\n+x\n*** Add File: d\n+file\n*** End Patch")
	if err == nil || !strings.Contains(err.Error(), "write d:") || !strings.Contains(err.Error(), "restored") {
		t.Fatalf("err = %v", err)
	}
	if after := snapshot(t, e.ws); !maps.Equal(before, after) {
		t.Fatalf("not rolled back: %v", after)
	}
}

// TestRollbackOnHookFailure fails the third write and checks that an
// update, a creation and a deletion are all undone.
func TestRollbackOnHookFailure(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("a.txt"), "a\n")
	write(t, e.path("del.txt"), "delete me\n")
	write(t, e.path("z.txt"), "z\n")
	n := 0
	commitHook = func(string) error {
		if n++; n == 4 {
			return errors.New("disk full")
		}
		return nil
	}
	t.Cleanup(func() { commitHook = nil })
	before := snapshot(t, e.ws)
	_, err := e.patch(t, "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: new/deeper/n.txt\n+n\n*** Delete File: del.txt\n*** Update File: z.txt\n-z\n+Z\n*** End Patch")
	if err == nil || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), "z.txt") {
		t.Fatalf("err = %v", err)
	}
	if after := snapshot(t, e.ws); !maps.Equal(before, after) {
		t.Fatalf("not rolled back: %v", after)
	}
	if _, err := os.Stat(e.path("new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("directory created for new/n.txt not removed: %v", err)
	}
}

func TestPatchGrants(t *testing.T) {
	e := newEnv(t)
	ro, rw := filepath.Join(e.parent, "ro"), filepath.Join(e.parent, "rw")
	write(t, filepath.Join(ro, "f.txt"), "x\n")
	write(t, filepath.Join(rw, "f.txt"), "x\n")
	if err := e.w.Grant(ro, false); err != nil {
		t.Fatal(err)
	}
	if err := e.w.Grant(rw, true); err != nil {
		t.Fatal(err)
	}
	p := func(dir string) string {
		return "*** Begin Patch\n*** Update File: " + filepath.Join(dir, "f.txt") + "\n-x\n+y\n*** End Patch"
	}
	_, err := e.patch(t, p(ro))
	requireType(t, err, "outside_workspace")
	if _, err := e.patch(t, p(rw)); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(ro, "f.txt")) != "x\n" || read(t, filepath.Join(rw, "f.txt")) != "y\n" {
		t.Fatal("grant handling")
	}
}

func TestPatchConflict(t *testing.T) {
	e := newEnv(t)
	write(t, e.path("c.txt"), "v1\n")
	e.guard.RecordRead(e.path("c.txt"), []byte("v1\n"), time.Time{})
	write(t, e.path("c.txt"), "v1 edited elsewhere\n")
	_, err := e.patch(t, "*** Begin Patch\n*** Update File: c.txt\n-v1 edited elsewhere\n+v2\n*** End Patch")
	requireType(t, err, "conflict")
	// After a fresh read the patch applies, and the session's own write
	// does not block its next patch.
	e.guard.RecordRead(e.path("c.txt"), []byte("v1 edited elsewhere\n"), time.Time{})
	if _, err := e.patch(t, "*** Begin Patch\n*** Update File: c.txt\n-v1 edited elsewhere\n+v2\n*** End Patch"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.patch(t, "*** Begin Patch\n*** Update File: c.txt\n-v2\n+v3\n*** End Patch"); err != nil {
		t.Fatal(err)
	}
	if read(t, e.path("c.txt")) != "v3\n" {
		t.Fatal("content")
	}
}

func TestPatchPaths(t *testing.T) {
	got := PatchPaths("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** Add File: c\n+x\n*** End Patch")
	if fmt.Sprint(got) != "[a b c]" {
		t.Fatal(got)
	}
	if PatchPaths("junk") != nil {
		t.Fatal("junk")
	}
	if got := UnifiedPaths("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"); fmt.Sprint(got) != "[x]" {
		t.Fatal(got)
	}
}

func BenchmarkApplyPatch100Hunks(b *testing.B) {
	e := newEnv(b)
	var src, patch strings.Builder
	patch.WriteString("*** Begin Patch\n*** Update File: big.go\n")
	for i := range 1000 {
		fmt.Fprintf(&src, "func f%d() int { return %d }\n", i, i)
	}
	for h := range 100 {
		i := h*10 + 5
		fmt.Fprintf(&patch, "@@\n func f%d() int { return %d }\n-func f%d() int { return %d }\n+func f%d() int { return -%d }\n func f%d() int { return %d }\n",
			i-1, i-1, i, i, i, i, i+1, i+1)
	}
	patch.WriteString("*** End Patch\n")
	text := patch.String()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		write(b, e.path("big.go"), src.String())
		e.guard.Forget(e.path("big.go"))
		b.StartTimer()
		res, err := ApplyPatch(b.Context(), e.w, e.guard, text)
		if err != nil || res.Files[0].Added != 100 {
			b.Fatal(err)
		}
	}
}
