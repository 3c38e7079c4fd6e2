package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fixtureWS(t *testing.T) (*confine.Workspace, *tools.Registry) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.go":              "package a\nfunc main() {}\n// TODO fix\n",
		"b.txt":             "hello world\r\nHELLO again\nbye\n",
		"sub/c.go":          "func helper() {}\nfunc main() {}\n",
		"sub/gen.go":        "func main() {} // generated\n",
		"sub/.gitignore":    "gen.go\n",
		".gitignore":        "ignored/\n*.log\n",
		"ignored/x.go":      "func main() {}\n",
		"debug.log":         "func main\n",
		"bin.dat":           "func main\x00\x01\x02",
		"node_modules/m.js": "func main\n",
		".git/HEAD":         "func main\n",
		".git/info/exclude": "*.local\n",
		"dev.local":         "func main\n",
		"deep/er/d.md":      "func main in docs\n",
	})
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.go": "func main() {}\n"})
	if err := os.Symlink(outside, filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	ws, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	RegisterSearchTool(reg, ws)
	return ws, reg
}

func grepTool(t *testing.T, reg *tools.Registry, args map[string]any) (string, error) {
	t.Helper()
	spec, ok := reg.Lookup("grep")
	if !ok {
		t.Fatal("grep not registered")
	}
	raw, _ := json.Marshal(args)
	out, err := spec.Handler(context.Background(), tools.Call{Name: "grep", Args: raw})
	if err != nil {
		return "", err
	}
	return out.(string), nil
}

// matchLines drops the summary line.
func matchLines(out string) []string {
	i := strings.LastIndex(out, "\n\n")
	if i < 0 {
		return nil
	}
	return strings.Split(out[:i], "\n")
}

func TestGrepFixture(t *testing.T) {
	_, reg := fixtureWS(t)
	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"literal respects ignores", map[string]any{"pattern": "func main"},
			[]string{"a.go:2:func main() {}", "deep/er/d.md:1:func main in docs", "sub/c.go:2:func main() {}"}},
		{"ignore case and CRLF", map[string]any{"pattern": "hello", "ignore_case": true},
			[]string{"b.txt:1:hello world", "b.txt:2:HELLO again"}},
		{"inline flag", map[string]any{"pattern": "(?i)HELLO \\w+"},
			[]string{"b.txt:1:hello world", "b.txt:2:HELLO again"}},
		{"regex without literal", map[string]any{"pattern": `^\w+$`},
			[]string{"b.txt:3:bye"}},
		{"text anchor is per line", map[string]any{"pattern": `\Afunc h`},
			[]string{"sub/c.go:1:func helper() {}"}},
		{"glob string", map[string]any{"pattern": "func", "glob": "*.md"},
			[]string{"deep/er/d.md:1:func main in docs"}},
		{"glob list", map[string]any{"pattern": "main", "glob": []string{"*.md", "a.*"}},
			[]string{"a.go:2:func main() {}", "deep/er/d.md:1:func main in docs"}},
		{"glob exclude", map[string]any{"pattern": "func main", "glob": []string{"!sub/**", "!*.md"}},
			[]string{"a.go:2:func main() {}"}},
		{"glob path", map[string]any{"pattern": "func", "glob": "sub/*.go"},
			[]string{"sub/c.go:1:func helper() {}", "sub/c.go:2:func main() {}"}},
		{"glob braces", map[string]any{"pattern": "main", "glob": "*.{md,txt}"},
			[]string{"deep/er/d.md:1:func main in docs"}},
		{"path dir", map[string]any{"pattern": "func", "path": "sub"},
			[]string{"sub/c.go:1:func helper() {}", "sub/c.go:2:func main() {}"}},
		{"path file ignored is still searched when named", map[string]any{"pattern": "main", "path": "sub/gen.go"},
			[]string{"sub/gen.go:1:func main() {} // generated"}},
		{"ignored dir named explicitly", map[string]any{"pattern": "main", "path": "ignored"},
			[]string{"ignored/x.go:1:func main() {}"}},
		{"context", map[string]any{"pattern": "main", "path": "a.go", "context": 1},
			[]string{"a.go-1-package a", "a.go:2:func main() {}", "a.go-3-// TODO fix"}},
		{"context groups", map[string]any{"pattern": "^(package|// TODO)", "path": "a.go", "context": 0},
			[]string{"a.go:1:package a", "a.go:3:// TODO fix"}},
		{"context merge", map[string]any{"pattern": "^(package|// TODO)", "path": "a.go", "context": 1},
			[]string{"a.go:1:package a", "a.go-2-func main() {}", "a.go:3:// TODO fix"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := grepTool(t, reg, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := matchLines(out); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestGrepNoMatchAndErrors(t *testing.T) {
	ws, reg := fixtureWS(t)
	out, err := grepTool(t, reg, map[string]any{"pattern": "zzz_nothing"})
	if err != nil || !strings.HasPrefix(out, "No matches") {
		t.Fatalf("no match: %q %v", out, err)
	}
	for _, p := range []string{"..", "/etc", "linkdir", "link.go", ws.Root() + "-evil", "sub/../../x"} {
		_, err := grepTool(t, reg, map[string]any{"pattern": "main", "path": p})
		if !errors.Is(err, tools.ErrOutsideWorkspace) {
			t.Errorf("path %q: err = %v, want ErrOutsideWorkspace", p, err)
		}
	}
	if _, err := grepTool(t, reg, map[string]any{"pattern": "a", "path": "missing"}); !errors.Is(err, tools.ErrNotFound) {
		t.Errorf("missing path: err = %v, want ErrNotFound", err)
	}
	for _, args := range []map[string]any{
		{"pattern": "("},
		{"pattern": ""},
		{"pattern": "a", "glob": "{a,b"},
		{"pattern": "a", "context": -1},
	} {
		_, err := grepTool(t, reg, args)
		if !errors.Is(err, tools.ErrInvalidArgs) {
			t.Errorf("%v: err = %v, want ErrInvalidArgs", args, err)
		}
	}
}

func TestGrepCaps(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		var b strings.Builder
		for j := range 60 {
			fmt.Fprintf(&b, "line %d hit %d\n", j, i)
		}
		files[fmt.Sprintf("f%02d.txt", i)] = b.String()
	}
	files["long.txt"] = "hit " + strings.Repeat("x", 5000) + "\n"
	writeTree(t, dir, files)
	ws, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Per-file cap: max(200/4, 25) = 50 of each file's 60.
	res, err := Grep(context.Background(), ws, Query{Pattern: "hit", Path: "f00.txt"})
	if err != nil || res.Matches != 60 || res.Truncated {
		t.Fatalf("single file: %d matches, truncated %v, err %v", res.Matches, res.Truncated, err)
	}
	res, err = Grep(context.Background(), ws, Query{Pattern: "hit", Globs: nil})
	if err != nil {
		t.Fatal(err)
	}
	if res.Matches != 200 || !res.Truncated || res.Files != 4 {
		t.Fatalf("tree: %d matches in %d files, truncated %v", res.Matches, res.Files, res.Truncated)
	}
	if res.Lines[0].Path != "f00.txt" || res.Lines[49].Line != 50 || res.Lines[50].Path != "f01.txt" {
		t.Fatalf("order: %+v %+v %+v", res.Lines[0], res.Lines[49], res.Lines[50])
	}
	// Deterministic whatever the number of workers.
	for _, w := range []int{1, 3, 8} {
		r2, err := Grep(context.Background(), ws, Query{Pattern: `hit (1|3)\b`, MaxResults: 30, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r2.Lines, mustGrep(t, ws, Query{Pattern: `hit (1|3)\b`, MaxResults: 30, Workers: 2}).Lines) {
			t.Fatalf("workers=%d gives different lines", w)
		}
		// per-file cap max(30/4, 25) = 25: all of f01's 25, then 5 of f03.
		if r2.Matches != 30 || len(r2.Lines) != 30 || r2.Lines[0].Path != "f01.txt" || r2.Lines[25].Path != "f03.txt" || !r2.Truncated {
			t.Fatalf("workers=%d: %d matches, first %+v, 26th %+v", w, r2.Matches, r2.Lines[0], r2.Lines[25])
		}
	}
	res = mustGrep(t, ws, Query{Pattern: "hit", Path: "long.txt"})
	if len(res.Lines) != 1 || len(res.Lines[0].Text) > maxLineBytes+40 || !strings.Contains(res.Lines[0].Text, "more bytes") {
		t.Fatalf("long line not clipped: %d bytes", len(res.Lines[0].Text))
	}
	txt := mustGrep(t, ws, Query{Pattern: "hit", MaxResults: 1}).Text(false, 1<<20)
	if !strings.HasPrefix(txt, "f00.txt:1:line 0 hit 0\n") || !strings.Contains(txt, "more matches exist") {
		t.Fatalf("capped text %q", txt)
	}
	if txt := res.Text(false, 10); !strings.Contains(txt, "output cut") {
		t.Fatalf("byte cap not applied: %q", txt)
	}
}

func mustGrep(t *testing.T, ws *confine.Workspace, q Query) *Result {
	t.Helper()
	r, err := Grep(context.Background(), ws, q)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGrepCancelled(t *testing.T) {
	ws, _ := fixtureWS(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Grep(ctx, ws, Query{Pattern: "main"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestGrepGrantedDir(t *testing.T) {
	ws, reg := fixtureWS(t)
	other := t.TempDir()
	writeTree(t, other, map[string]string{"g.txt": "granted main\n"})
	if err := ws.Grant(other, false); err != nil {
		t.Fatal(err)
	}
	out, err := grepTool(t, reg, map[string]any{"pattern": "main", "path": other})
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(other)
	if got := matchLines(out); len(got) != 1 || got[0] != filepath.ToSlash(real)+"/g.txt:1:granted main" {
		t.Fatalf("granted search: %q", got)
	}
}

func TestGrepMetadata(t *testing.T) {
	_, reg := fixtureWS(t)
	s, _ := reg.Lookup("grep")
	if s.Meta.Class != tools.ClassRead || s.Meta.RiskLevel != tools.RiskLow || s.Meta.RequiresApproval || !s.Meta.Parallel() {
		t.Fatalf("meta %+v", s.Meta)
	}
	if !json.Valid(s.Schema.Function.Parameters) || s.Schema.Function.Description == "" {
		t.Fatal("bad schema")
	}
}
