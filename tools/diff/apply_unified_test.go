package diff

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestApplyUnified(t *testing.T) {
	file20 := numbered(20)
	tests := []struct {
		name    string
		files   map[string]string
		diff    string
		want    map[string]string
		wantErr string
		errHas  []string
	}{
		{
			name:  "exact",
			files: map[string]string{"f.txt": file20},
			diff:  "--- a/f.txt\n+++ b/f.txt\n@@ -4,3 +4,3 @@\n line 4\n-line 5\n+LINE 5\n line 6\n",
			want:  map[string]string{"f.txt": strings.Replace(file20, "line 5\n", "LINE 5\n", 1)},
		},
		{
			name:  "offset: stated lines are off by 7",
			files: map[string]string{"f.txt": file20},
			diff:  "--- a/f.txt\n+++ b/f.txt\n@@ -5,3 +5,3 @@\n line 11\n-line 12\n+LINE 12\n line 13\n@@ -10,2 +10,3 @@\n line 17\n+inserted\n line 18\n",
			want:  map[string]string{"f.txt": strings.Replace(strings.Replace(file20, "line 12\n", "LINE 12\n", 1), "line 17\n", "line 17\ninserted\n", 1)},
		},
		{
			name:  "nearest of two matches",
			files: map[string]string{"f.txt": "x\ny\na\nx\ny\nb\n"},
			diff:  "--- f.txt\n+++ f.txt\n@@ -4,2 +4,2 @@\n x\n-y\n+Y\n",
			want:  map[string]string{"f.txt": "x\ny\na\nx\nY\nb\n"},
		},
		{
			name:  "miscounted header, whitespace drift",
			files: map[string]string{"f.txt": "a  \nb\nc\n"},
			diff:  "--- a/f.txt\n+++ b/f.txt\n@@ -1,9 +1,9 @@\n a\n-b\n+B\n c\n",
			want:  map[string]string{"f.txt": "a  \nB\nc\n"},
		},
		{
			name:  "new, delete and update in one diff (git)",
			files: map[string]string{"old.txt": "bye\n", "keep.txt": "k\n"},
			diff: "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n" +
				"diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n" +
				"diff --git a/keep.txt b/keep.txt\n--- a/keep.txt\n+++ b/keep.txt\n@@ -1 +1 @@\n-k\n+K\n",
			want: map[string]string{"new.txt": "hello\nworld\n", "keep.txt": "K\n"},
		},
		{
			name:  "git rename with change",
			files: map[string]string{"a.txt": "1\n2\n"},
			diff:  "diff --git a/a.txt b/sub/b.txt\nsimilarity index 50%\nrename from a.txt\nrename to sub/b.txt\n--- a/a.txt\n+++ b/sub/b.txt\n@@ -1,2 +1,2 @@\n 1\n-2\n+two\n",
			want:  map[string]string{"sub/b.txt": "1\ntwo\n"},
		},
		{
			name:  "no newline at end of file",
			files: map[string]string{"f.txt": "a\nb"},
			diff:  "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
			want:  map[string]string{"f.txt": "a\nc"},
		},
		{
			name:  "context at a last line without newline",
			files: map[string]string{"f.txt": "a\nb"},
			diff:  "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n",
			want:  map[string]string{"f.txt": "A\nb"},
		},
		{
			name:    "second file fails: nothing changes",
			files:   map[string]string{"a.txt": "a\n", "b.txt": "b\n"},
			diff:    "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n@@ -3,2 +3,2 @@\n ctx\n-zzz\n+Z\n",
			wantErr: TypeHunk, errHas: []string{"b.txt: hunk 2", `first line "ctx"`, "no file was changed"},
		},
		{
			name:    "creating an existing file",
			files:   map[string]string{"a.txt": "a\n"},
			diff:    "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n",
			wantErr: TypeExists,
		},
		{
			name:    "deleting with stale content",
			files:   map[string]string{"a.txt": "a\nmore\n"},
			diff:    "--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n",
			wantErr: TypeHunk, errHas: []string{"does not remove all"},
		},
		{
			name:    "updating a missing file",
			diff:    "--- a/none.txt\n+++ b/none.txt\n@@ -1 +1 @@\n-a\n+b\n",
			wantErr: TypeHunk,
		},
		{
			name:    "binary",
			files:   map[string]string{"a.bin": "x"},
			diff:    "diff --git a/a.bin b/a.bin\nindex 1..2 100644\nGIT binary patch\nliteral 1\nIcmZpb0000T0RR91\n\nliteral 1\nIcmZpc0000U0RR91\n\n",
			wantErr: TypeBinary,
		},
		{
			name:    "not a diff",
			diff:    "please change line 3",
			wantErr: TypeParse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			for p, c := range tt.files {
				write(t, e.path(p), c)
			}
			res, err := e.unified(t, tt.diff)
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
				t.Fatalf("workspace:\n%q\nwant\n%q", got, tt.want)
			}
			if len(res.Files) == 0 {
				t.Fatal("empty result")
			}
		})
	}
}

func TestUnifiedEscapes(t *testing.T) {
	cases := map[string]func(e *env) string{
		"dotdot": func(e *env) string {
			return "--- a/../outside/secret.txt\n+++ b/../outside/secret.txt\n@@ -1 +1 @@\n-TOP SECRET\n+x\n"
		},
		"absolute": func(e *env) string {
			p := filepath.Join(e.outside, "secret.txt")
			return "--- " + p + "\n+++ " + p + "\n@@ -1 +1 @@\n-TOP SECRET\n+x\n"
		},
		"sibling": func(e *env) string {
			p := filepath.Join(e.evil, "secret.txt")
			return "--- " + p + "\n+++ " + p + "\n@@ -1 +1 @@\n-TOP SECRET\n+x\n"
		},
		"symlink out":    func(e *env) string { return "--- a/link_out.txt\n+++ b/link_out.txt\n@@ -1 +1 @@\n-TOP SECRET\n+x\n" },
		"new under link": func(e *env) string { return "--- /dev/null\n+++ b/linkdir/new.txt\n@@ -0,0 +1 @@\n+x\n" },
		"rename to outside": func(e *env) string {
			return "diff --git a/in.txt b/../outside/in.txt\nrename from in.txt\nrename to ../outside/in.txt\n"
		},
	}
	for name, diff := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			write(t, e.path("in.txt"), "TOP SECRET\n")
			if err := os.Symlink(filepath.Join(e.outside, "secret.txt"), e.path("link_out.txt")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(e.outside, e.path("linkdir")); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, e.parent)
			_, err := e.unified(t, diff(e))
			requireType(t, err, "outside_workspace")
			if after := snapshot(t, e.parent); !maps.Equal(before, after) {
				t.Fatalf("files changed: %v", keys(after))
			}
		})
	}
}

func TestRegistered(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"apply_patch", "apply_unified_diff"} {
		spec, ok := e.reg.Lookup(name)
		if !ok {
			t.Fatal(name)
		}
		m := spec.Meta
		if m.Class != "write" || m.RiskLevel != "medium" || !m.RequiresApproval || m.Parallel() {
			t.Errorf("%s meta %+v", name, m)
		}
		if len(spec.Schema.Function.Description) < 500 {
			t.Errorf("%s description too thin", name)
		}
	}
}
