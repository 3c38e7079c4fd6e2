package terminaltools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/zqagent/sidecar/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func run(t *testing.T, reg *tools.Registry, name string, args any) (any, error) {
	t.Helper()
	spec, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	raw, _ := json.Marshal(args)
	return spec.Handler(context.Background(), tools.Call{ID: "c1", Name: name, Args: raw})
}

func twoProjects(t *testing.T) *MemorySource {
	t.Helper()
	src := NewMemorySource(0)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(src.Add("A", tools.TerminalInfo{ID: "a1", Name: "dev server", Cwd: "/ws/a", Command: "npm run dev"}))
	must(src.Add("A", tools.TerminalInfo{ID: "a2", Name: "shell", Cwd: "/ws/a"}))
	must(src.Add("B", tools.TerminalInfo{ID: "b1", Name: "secret", Cwd: "/ws/b"}))
	must(src.Write("a1", []byte("\x1b[32mready\x1b[0m on http://localhost:3000\r\n\x1b[31merror\x1b[0m: boom\r\n")))
	must(src.Write("b1", []byte("B's private output\n")))
	must(src.Exit("a2", 3))
	return src
}

func TestTerminalListIsolation(t *testing.T) {
	src := twoProjects(t)
	reg := tools.NewRegistry()
	RegisterTerminalTools(reg, src, "A")
	out, err := run(t, reg, "terminal_list", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	list := out.(ListResult).Terminals
	if len(list) != 2 || list[0].ID != "a1" || list[1].ID != "a2" {
		t.Fatalf("list = %+v", list)
	}
	if !list[0].Alive || list[0].Command != "npm run dev" || list[1].Alive || list[1].ExitCode == nil || *list[1].ExitCode != 3 {
		t.Errorf("list = %+v", list)
	}
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), "b1") || strings.Contains(string(b), "secret") {
		t.Errorf("project B leaked: %s", b)
	}

	empty := tools.NewRegistry()
	RegisterTerminalTools(empty, src, "C")
	out, err = run(t, empty, "terminal_list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(out); string(b) != `{"terminals":[]}` {
		t.Errorf("empty project: %s", b)
	}
}

func TestTerminalReadIsolation(t *testing.T) {
	src := twoProjects(t)
	reg := tools.NewRegistry()
	RegisterTerminalTools(reg, src, "A")
	out, err := run(t, reg, "terminal_read", map[string]any{"terminal_id": "a1"})
	if err != nil {
		t.Fatal(err)
	}
	if out != "ready on http://localhost:3000\nerror: boom" {
		t.Errorf("read = %q", out)
	}
	_, err = run(t, reg, "terminal_read", map[string]any{"terminal_id": "b1"})
	if !errors.Is(err, tools.ErrNotFound) {
		t.Fatalf("reading project B's terminal: err = %v", err)
	}
	if strings.Contains(err.Error(), "private output") {
		t.Error("the error leaks B's output")
	}
	_, err = run(t, reg, "terminal_read", map[string]any{"terminal_id": "nope"})
	if !errors.Is(err, tools.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	_, err = run(t, reg, "terminal_read", map[string]any{})
	if !errors.Is(err, tools.ErrInvalidArgs) {
		t.Errorf("no id: %v", err)
	}
	out, err = run(t, reg, "terminal_read", map[string]any{"terminal_id": "a2"})
	if err != nil || out != "(terminal a2 has no output yet)" {
		t.Errorf("empty terminal: %q %v", out, err)
	}
}

// recordingSource checks the project id and limits the tools pass.
type recordingSource struct {
	mu    sync.Mutex
	calls []string
	text  string
}

func (r *recordingSource) ListTerminals(_ context.Context, projectID string) ([]tools.TerminalInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, "list "+projectID)
	return nil, nil
}

func (r *recordingSource) ReadTerminal(_ context.Context, projectID, id string, maxLines, maxBytes int) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf("read %s %s %d %d", projectID, id, maxLines, maxBytes))
	return r.text, nil
}

func TestTerminalReadLimits(t *testing.T) {
	src := &recordingSource{text: strings.Repeat("x", 3*MaxBytes)}
	reg := tools.NewRegistry()
	RegisterTerminalTools(reg, src, "proj")
	for _, lines := range []any{nil, 50, 99999, -4} {
		args := map[string]any{"terminal_id": "t1"}
		if lines != nil {
			args["lines"] = lines
		}
		out, err := run(t, reg, "terminal_read", args)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(out.(string)); n > MaxBytes {
			t.Errorf("output %d bytes, cap %d", n, MaxBytes)
		}
	}
	if _, err := run(t, reg, "terminal_list", nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"read proj t1 200 65536", "read proj t1 50 65536", "read proj t1 2000 65536", "read proj t1 200 65536", "list proj",
	}
	if strings.Join(src.calls, "|") != strings.Join(want, "|") {
		t.Errorf("calls = %q, want %q", src.calls, want)
	}
}

func TestMemorySourceTailAndScrollback(t *testing.T) {
	src := NewMemorySource(64)
	if err := src.Add("p", tools.TerminalInfo{ID: "t"}); err != nil {
		t.Fatal(err)
	}
	if err := src.Add("p", tools.TerminalInfo{ID: "t"}); !errors.Is(err, ErrDuplicateTerminal) {
		t.Errorf("duplicate: %v", err)
	}
	for i := range 20 {
		if err := src.Write("t", fmt.Appendf(nil, "line %02d\n", i)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := src.ReadTerminal(context.Background(), "p", "t", 3, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if got != "line 17\nline 18\nline 19" {
		t.Errorf("last 3 lines = %q", got)
	}
	all, _ := src.ReadTerminal(context.Background(), "p", "t", 0, 0)
	if len(all) > 64 || !strings.HasSuffix(all, "line 19") {
		t.Errorf("scrollback not capped: %q", all)
	}
	if err := src.Write("zzz", []byte("x")); !errors.Is(err, tools.ErrNotFound) {
		t.Errorf("write to unknown: %v", err)
	}
	if !src.Remove("t") || src.Remove("t") {
		t.Error("Remove")
	}
}

func TestTerminalMetadata(t *testing.T) {
	reg := tools.NewRegistry()
	RegisterTerminalTools(reg, NewMemorySource(0), "p")
	for _, s := range reg.Specs() {
		if s.Meta.Class != tools.ClassRead || s.Meta.RiskLevel != tools.RiskLow || s.Meta.RequiresApproval {
			t.Errorf("%s meta = %+v", s.Name, s.Meta)
		}
		if !json.Valid(s.Schema.Function.Parameters) || s.Schema.Function.Description == "" {
			t.Errorf("%s schema incomplete", s.Name)
		}
	}
}
