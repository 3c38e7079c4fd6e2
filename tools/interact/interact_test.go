package interact

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeHandlers records the requests and answers from scripted values.
type fakeHandlers struct {
	mu        sync.Mutex
	calls     []string // "kind:callID"
	questions []tools.Question
	plans     []tools.Plan
	dirs      []tools.DirRequest

	answer     string
	plan       tools.PlanAnswer
	dir        tools.DirAnswer
	err        error
	waitForCtx bool
}

// record notes a call and runs add under the lock.
func (f *fakeHandlers) record(kind, id string, add func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, kind+":"+id)
	add()
}

func (f *fakeHandlers) AskUser(ctx context.Context, callID string, q tools.Question) (string, error) {
	f.record("ask", callID, func() { f.questions = append(f.questions, q) })
	if f.waitForCtx {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return f.answer, f.err
}

func (f *fakeHandlers) ProposePlan(_ context.Context, callID string, p tools.Plan) (tools.PlanAnswer, error) {
	f.record("plan", callID, func() { f.plans = append(f.plans, p) })
	return f.plan, f.err
}

func (f *fakeHandlers) RequestDirectory(_ context.Context, callID string, d tools.DirRequest) (tools.DirAnswer, error) {
	f.record("dir", callID, func() { f.dirs = append(f.dirs, d) })
	return f.dir, f.err
}

var _ tools.Interactor = (*fakeHandlers)(nil)

func run(t *testing.T, reg *tools.Registry, name, id string, args any) (any, error) {
	t.Helper()
	return runCtx(context.Background(), t, reg, name, id, args)
}

func runCtx(ctx context.Context, t *testing.T, reg *tools.Registry, name, id string, args any) (any, error) {
	t.Helper()
	spec, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return spec.Handler(ctx, tools.Call{ID: id, Name: name, Args: raw})
}

func TestAskUser(t *testing.T) {
	h := &fakeHandlers{answer: "Postgres"}
	reg := tools.NewRegistry()
	RegisterAskTool(reg, h)
	out, err := run(t, reg, "ask_user", "call-7", map[string]any{
		"question": "  Which database?  ", "options": []string{"Postgres", " SQLite ", "", "Postgres"}, "allow_text": false, "multi": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out != (AskResult{Question: "Which database?", Answer: "Postgres"}) {
		t.Errorf("result = %+v", out)
	}
	want := tools.Question{Question: "Which database?", Options: []string{"Postgres", "SQLite"}, AllowText: false, Multi: true}
	if !reflect.DeepEqual(h.questions[0], want) || h.calls[0] != "ask:call-7" {
		t.Errorf("handler got %+v (%v), want %+v", h.questions[0], h.calls, want)
	}

	// No options: free text is always allowed, multi is meaningless.
	if _, err := run(t, reg, "ask_user", "c2", map[string]any{"question": "Name?", "allow_text": false, "multi": true}); err != nil {
		t.Fatal(err)
	}
	if q := h.questions[1]; !q.AllowText || q.Multi || q.Options == nil {
		t.Errorf("question = %+v", q)
	}
	// Default allow_text is true.
	if _, err := run(t, reg, "ask_user", "c3", map[string]any{"question": "Pick", "options": []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if !h.questions[2].AllowText {
		t.Error("allow_text must default to true")
	}

	_, err = run(t, reg, "ask_user", "c4", map[string]any{"question": " "})
	if !errors.Is(err, tools.ErrInvalidArgs) {
		t.Errorf("empty question: %v", err)
	}
	if len(h.questions) != 3 {
		t.Errorf("the handler was called for an invalid question")
	}
}

func TestAskUserErrorsAndCancel(t *testing.T) {
	h := &fakeHandlers{err: errors.New("request timed out: denied")}
	reg := tools.NewRegistry()
	RegisterAskTool(reg, h)
	_, err := run(t, reg, "ask_user", "c1", map[string]any{"question": "q?"})
	if err == nil || !errors.Is(err, h.err) {
		t.Errorf("err = %v", err)
	}

	h = &fakeHandlers{waitForCtx: true}
	reg = tools.NewRegistry()
	RegisterAskTool(reg, h)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = runCtx(ctx, t, reg, "ask_user", "c1", map[string]any{"question": "q?"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted: err = %v", err)
	}
}

func TestNilHandlers(t *testing.T) {
	reg := tools.NewRegistry()
	ws, err := confine.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	RegisterAskTool(reg, nil)
	RegisterPlanTool(reg, nil)
	RegisterDirectoryTool(reg, nil, ws)
	for name, args := range map[string]any{
		"ask_user":          map[string]any{"question": "q?"},
		"propose_plan":      map[string]any{"plan": "1. do it"},
		"request_directory": map[string]any{"path": t.TempDir(), "reason": "r"},
	} {
		_, err := run(t, reg, name, "c1", args)
		if !errors.Is(err, ErrNoHandler) || tools.ErrorType(err) != "unavailable" {
			t.Errorf("%s: err = %v (%s)", name, err, tools.ErrorType(err))
		}
	}
}

func TestProposePlan(t *testing.T) {
	h := &fakeHandlers{plan: tools.PlanAnswer{Approved: false, Feedback: " split step 2 "}}
	reg := tools.NewRegistry()
	RegisterPlanTool(reg, h)
	out, err := run(t, reg, "propose_plan", "p1", map[string]any{"plan": "## Plan\n1. a\n2. b"})
	if err != nil {
		t.Fatal(err)
	}
	res := out.(PlanResult)
	if res.Approved || res.Feedback != "split step 2" || res.Next != nextRejected {
		t.Errorf("rejected result = %+v", res)
	}
	if h.plans[0].Plan != "## Plan\n1. a\n2. b" || h.calls[0] != "plan:p1" {
		t.Errorf("handler got %+v %v", h.plans, h.calls)
	}
	h.plan = tools.PlanAnswer{Approved: true}
	out, err = run(t, reg, "propose_plan", "p2", map[string]any{"plan": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.(PlanResult); !res.Approved || res.Next != nextApproved {
		t.Errorf("approved result = %+v", res)
	}
	if _, err := run(t, reg, "propose_plan", "p3", map[string]any{"plan": ""}); !errors.Is(err, tools.ErrInvalidArgs) {
		t.Errorf("empty plan: %v", err)
	}
}

func TestInteractiveMetadata(t *testing.T) {
	reg := tools.NewRegistry()
	ws, _ := confine.New(t.TempDir())
	RegisterAskTool(reg, nil)
	RegisterPlanTool(reg, nil)
	RegisterDirectoryTool(reg, nil, ws)
	for _, s := range reg.Specs() {
		if s.Meta.Class != tools.ClassInteractive || s.Meta.RiskLevel != tools.RiskLow || s.Meta.RequiresApproval || !s.Meta.Interactive() {
			t.Errorf("%s meta = %+v", s.Name, s.Meta)
		}
		if !json.Valid(s.Schema.Function.Parameters) || s.Schema.Function.Description == "" {
			t.Errorf("%s schema incomplete", s.Name)
		}
	}
	if reg.Len() != 3 {
		t.Errorf("registered %d tools", reg.Len())
	}
}

// dirFixture: a workspace and an outside directory holding a file.
type dirFixture struct {
	ws      *confine.Workspace
	outside string
	file    string
}

func newDirFixture(t *testing.T) dirFixture {
	t.Helper()
	ws, err := confine.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(outside, "notes.txt")
	if err := os.WriteFile(file, []byte("outside data"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dirFixture{ws: ws, outside: outside, file: file}
}

func readVia(ws *confine.Workspace, p string) (string, error) {
	root, rel, err := ws.Open(p, false)
	if err != nil {
		return "", err
	}
	defer root.Close()
	b, err := root.ReadFile(rel)
	return string(b), err
}

func writeVia(ws *confine.Workspace, p, data string) error {
	root, rel, err := ws.Open(p, true)
	if err != nil {
		return err
	}
	defer root.Close()
	return root.WriteFile(rel, []byte(data), 0o644)
}

func TestRequestDirectoryGrantsReadOnly(t *testing.T) {
	f := newDirFixture(t)
	h := &fakeHandlers{dir: tools.DirAnswer{Granted: true}}
	reg := tools.NewRegistry()
	RegisterDirectoryTool(reg, h, f.ws)

	if _, err := readVia(f.ws, f.file); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Fatalf("before the grant: err = %v, want outside workspace", err)
	}
	out, err := run(t, reg, "request_directory", "d1", map[string]any{"path": f.outside, "reason": "read the notes"})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.(DirResult); !res.Granted || res.Path != f.outside || res.Writable {
		t.Errorf("result = %+v", res)
	}
	if want := (tools.DirRequest{Reason: "read the notes", Path: f.outside, OutsideProject: true}); h.dirs[0] != want || h.calls[0] != "dir:d1" {
		t.Errorf("handler got %+v %v", h.dirs, h.calls)
	}
	got, err := readVia(f.ws, f.file)
	if err != nil || got != "outside data" {
		t.Fatalf("after the grant: %q, %v", got, err)
	}
	if err := writeVia(f.ws, filepath.Join(f.outside, "new.txt"), "x"); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Errorf("write to a read-only grant: err = %v", err)
	}
	// Another session's workspace is not affected.
	other, err := confine.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readVia(other, f.file); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Errorf("another session can read the grant: %v", err)
	}
	// Asking again is answered without the user.
	if _, err := run(t, reg, "request_directory", "d2", map[string]any{"path": f.outside, "reason": "again"}); err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 1 {
		t.Errorf("the user was asked again for an accessible directory: %v", h.calls)
	}
}

func TestRequestDirectoryGrantsWritableAndOtherPath(t *testing.T) {
	f := newDirFixture(t)
	picked, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHandlers{dir: tools.DirAnswer{Granted: true, Path: picked, Writable: true}}
	reg := tools.NewRegistry()
	RegisterDirectoryTool(reg, h, f.ws)
	out, err := run(t, reg, "request_directory", "d1", map[string]any{"path": f.outside, "reason": "write output", "writable": true})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.(DirResult); !res.Granted || res.Path != picked || !res.Writable {
		t.Errorf("result = %+v", res)
	}
	if err := writeVia(f.ws, filepath.Join(picked, "out.txt"), "written"); err != nil {
		t.Fatalf("write to the writable grant: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(picked, "out.txt")); err != nil || string(b) != "written" {
		t.Errorf("file = %q, %v", b, err)
	}
	// The requested directory itself was not granted.
	if _, err := readVia(f.ws, f.file); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Errorf("the requested directory became readable: %v", err)
	}
}

func TestRequestDirectoryDenied(t *testing.T) {
	f := newDirFixture(t)
	h := &fakeHandlers{dir: tools.DirAnswer{Granted: false, Path: f.outside, Writable: true}}
	reg := tools.NewRegistry()
	RegisterDirectoryTool(reg, h, f.ws)
	out, err := run(t, reg, "request_directory", "d1", map[string]any{"path": f.outside, "reason": "r"})
	if err != nil {
		t.Fatal(err)
	}
	if res := out.(DirResult); res.Granted {
		t.Errorf("result = %+v", res)
	}
	if len(f.ws.Grants()) != 0 {
		t.Errorf("grants after a denial: %v", f.ws.Grants())
	}
	if _, err := readVia(f.ws, f.file); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Errorf("readable after a denial: %v", err)
	}
}

func TestRequestDirectoryRefusals(t *testing.T) {
	f := newDirFixture(t)
	home, _ := os.UserHomeDir()
	h := &fakeHandlers{dir: tools.DirAnswer{Granted: true, Path: "/"}}
	reg := tools.NewRegistry()
	RegisterDirectoryTool(reg, h, f.ws)
	cases := map[string]struct {
		args map[string]any
		typ  string
	}{
		"root":      {map[string]any{"path": "/", "reason": "r"}, "forbidden"},
		"missing":   {map[string]any{"path": filepath.Join(f.outside, "nope"), "reason": "r"}, "not_found"},
		"no reason": {map[string]any{"path": f.outside}, "invalid_arguments"},
		"answer /":  {map[string]any{"path": f.outside, "reason": "r"}, "forbidden"},
	}
	if home != "" {
		cases["home"] = struct {
			args map[string]any
			typ  string
		}{map[string]any{"path": home, "reason": "r"}, "forbidden"}
	}
	for name, c := range cases {
		_, err := run(t, reg, "request_directory", "d", c.args)
		if got := tools.ErrorType(err); got != c.typ {
			t.Errorf("%s: error type %q (%v), want %q", name, got, err, c.typ)
		}
	}
	if len(f.ws.Grants()) != 0 {
		t.Errorf("grants: %v", f.ws.Grants())
	}
}
