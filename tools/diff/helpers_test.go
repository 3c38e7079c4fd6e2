package diff

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type env struct {
	parent, ws, evil, outside string
	w                         *confine.Workspace
	guard                     *conflict.Guard
	reg                       *tools.Registry
}

const secret = "TOP SECRET\n"

func newEnv(t testing.TB) *env {
	t.Helper()
	parent, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{parent: parent, ws: filepath.Join(parent, "ws"), evil: filepath.Join(parent, "ws-evil"), outside: filepath.Join(parent, "outside")}
	for _, d := range []string{e.ws, e.evil, e.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(e.evil, "secret.txt"), secret)
	write(t, filepath.Join(e.outside, "secret.txt"), secret)
	if e.w, err = confine.New(e.ws); err != nil {
		t.Fatal(err)
	}
	e.guard = conflict.NewGuard(nil)
	e.reg = tools.NewRegistry()
	RegisterDiffTools(e.reg, e.w, e.guard)
	return e
}

func (e *env) path(rel string) string { return filepath.Join(e.ws, rel) }

func (e *env) call(t testing.TB, name string, args map[string]any) (any, error) {
	t.Helper()
	spec, ok := e.reg.Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	raw, _ := json.Marshal(args)
	return spec.Handler(context.Background(), tools.Call{ID: "c", Name: name, Args: raw})
}

func (e *env) patch(t testing.TB, text string) (*Result, error) {
	t.Helper()
	out, err := e.call(t, "apply_patch", map[string]any{"patch": text})
	if err != nil {
		return nil, err
	}
	return out.(*Result), nil
}

func (e *env) unified(t testing.TB, text string) (*Result, error) {
	t.Helper()
	out, err := e.call(t, "apply_unified_diff", map[string]any{"diff": text})
	if err != nil {
		return nil, err
	}
	return out.(*Result), nil
}

// snapshot maps every regular file under dir to its content.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func write(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func requireType(t testing.TB, err error, typ string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s error, got nil", typ)
	}
	if got := tools.ErrorType(err); got != typ {
		t.Fatalf("ErrorType = %q, want %q (err: %v)", got, typ, err)
	}
}
