package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
	"github.com/zqagent/sidecar/tools/diff"
	"github.com/zqagent/sidecar/tools/fs"
	"github.com/zqagent/sidecar/tools/git"
	"github.com/zqagent/sidecar/tools/interact"
	"github.com/zqagent/sidecar/tools/media"
	"github.com/zqagent/sidecar/tools/search"
	"github.com/zqagent/sidecar/tools/shell"
	"github.com/zqagent/sidecar/tools/terminaltools"
	"github.com/zqagent/sidecar/tools/todo"
	"github.com/zqagent/sidecar/tools/web"
)

var update = flag.Bool("update", false, "rewrite the golden schemas in testdata/params")

// noInteractor answers nothing; the schemas do not call it.
type noInteractor struct{}

func (noInteractor) AskUser(context.Context, string, tools.Question) (string, error) {
	return "", nil
}
func (noInteractor) ProposePlan(context.Context, string, tools.Plan) (tools.PlanAnswer, error) {
	return tools.PlanAnswer{}, nil
}
func (noInteractor) RequestDirectory(context.Context, string, tools.DirRequest) (tools.DirAnswer, error) {
	return tools.DirAnswer{}, nil
}

// builtinRegistry registers every builtin tool, as backend.NewEngine does.
func builtinRegistry(t *testing.T) *tools.Registry {
	t.Helper()
	ws, err := confine.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	guard := conflict.NewGuard(nil)
	fs.RegisterFileTools(reg, ws, guard)
	m := shell.RegisterShellTool(reg, shell.Options{Workspace: ws})
	t.Cleanup(func() { _ = m.Close() })
	search.RegisterSearchTool(reg, ws)
	web.RegisterWebTools(reg, web.Options{})
	git.RegisterGitTools(reg, ws)
	diff.RegisterDiffTools(reg, ws, guard)
	interact.RegisterAskTool(reg, noInteractor{})
	interact.RegisterPlanTool(reg, noInteractor{})
	interact.RegisterDirectoryTool(reg, noInteractor{}, ws)
	todo.RegisterTodoTool(reg, &todo.TodoList{})
	media.RegisterMediaTool(reg, ws, media.Options{})
	terminaltools.RegisterTerminalTools(reg, terminaltools.NewMemorySource(1<<10), "p")
	return reg
}

// TestBuiltinParams pins what the model is told about every builtin tool's
// arguments: the schema reflected from the tool's args struct
// (tools.ParamsOf) must mean the same as testdata/params/<tool>.json (equal
// as JSON values: key order aside). Run with -update after changing an
// args struct on purpose, and read the diff.
func TestBuiltinParams(t *testing.T) {
	dir := filepath.Join("testdata", "params")
	var names []string
	for _, spec := range builtinRegistry(t).Specs() {
		name := spec.Name
		names = append(names, name)
		got := spec.Schema.Function.Parameters
		path := filepath.Join(dir, name+".json")
		if *update {
			var out bytes.Buffer
			if err := json.Indent(&out, got, "", "  "); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out.WriteByte('\n')
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run go test -run TestBuiltinParams -update)", name, err)
			continue
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: reflected schema: %v", name, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !reflect.DeepEqual(g, w) {
			var compact bytes.Buffer
			_ = json.Compact(&compact, want)
			t.Errorf("%s: the reflected schema differs from %s:\n got %s\nwant %s", name, path, got, compact.Bytes())
		}
	}
	// A golden file of a tool that is gone is stale.
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".json"); !slices.Contains(names, name) {
			t.Errorf("%s: no builtin tool %s", f, name)
		}
	}
	if len(names) < 20 {
		t.Errorf("only %d builtin tools registered: %v", len(names), names)
	}
}

// TestParamsOf: the struct's tags are what the schema says, and nothing
// else is invented (no $schema, $id or $defs; only tagged requirements).
func TestParamsOf(t *testing.T) {
	type item struct {
		Status string `json:"status" jsonschema:"required,enum=a,enum=b"`
	}
	type args struct {
		Path  string  `json:"path" jsonschema:"required" jsonschema_description:"Where, relative, \"quoted\"."`
		N     int     `json:"n" jsonschema:"minimum=0,maximum=9"`
		Flag  *bool   `json:"flag"`
		Alias string  `json:"alias" jsonschema:"-"`
		Items *[]item `json:"items"`
	}
	want := `{"type":"object","additionalProperties":false,"required":["path"],"properties":{
		"path":{"type":"string","description":"Where, relative, \"quoted\"."},
		"n":{"type":"integer","minimum":0,"maximum":9},
		"flag":{"type":"boolean"},
		"items":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["status"],
			"properties":{"status":{"type":"string","enum":["a","b"]}}}}}}`
	var g, w any
	if err := json.Unmarshal(tools.ParamsOf[args](), &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("ParamsOf = %s", tools.ParamsOf[args]())
	}
	if got := string(tools.ParamsOf[struct{}]()); got != `{"properties":{},"additionalProperties":false,"type":"object"}` {
		t.Errorf("ParamsOf[struct{}] = %s", got)
	}
}
