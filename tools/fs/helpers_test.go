package fs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a workspace "ws" with siblings "ws-evil" and "outside" under one
// temp parent, each holding a secret.
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
	e := &env{
		parent:  parent,
		ws:      filepath.Join(parent, "ws"),
		evil:    filepath.Join(parent, "ws-evil"),
		outside: filepath.Join(parent, "outside"),
	}
	for _, d := range []string{e.ws, e.evil, e.outside} {
		mkdir(t, d)
	}
	write(t, filepath.Join(e.evil, "secret.txt"), secret)
	write(t, filepath.Join(e.outside, "secret.txt"), secret)
	e.w, err = confine.New(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	e.guard = conflict.NewGuard(nil)
	e.reg = tools.NewRegistry()
	RegisterFileTools(e.reg, e.w, e.guard)
	return e
}

func (e *env) path(rel string) string { return filepath.Join(e.ws, rel) }

func (e *env) call(t testing.TB, name string, args map[string]any) (any, error) {
	t.Helper()
	spec, ok := e.reg.Lookup(name)
	if !ok {
		t.Fatalf("tool %s not registered", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return spec.Handler(context.Background(), tools.Call{ID: "c1", Name: name, Args: raw})
}

func (e *env) mustCall(t testing.TB, name string, args map[string]any) any {
	t.Helper()
	out, err := e.call(t, name, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return out
}

func mkdir(t testing.TB, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, p, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(p))
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

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
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

// entries lists a directory's names.
func entries(t testing.TB, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range des {
		out = append(out, d.Name())
	}
	return out
}

func toolsRegistryReadOnly(t testing.TB, e *env) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	RegisterReadOnlyFileTools(reg, e.w, nil)
	if _, ok := reg.Lookup("write_file"); ok {
		t.Fatal("read-only set has write_file")
	}
	return reg
}
