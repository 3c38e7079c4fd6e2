package todo

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/zqagent/sidecar/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func call(t *testing.T, reg *tools.Registry, args string) (any, error) {
	t.Helper()
	spec, ok := reg.Lookup("todo_write")
	if !ok {
		t.Fatal("todo_write not registered")
	}
	return spec.Handler(context.Background(), tools.Call{ID: "c1", Name: "todo_write", Args: json.RawMessage(args)})
}

func TestTodoWrite(t *testing.T) {
	var got [][]Item
	list := &TodoList{OnChange: func(items []Item) { got = append(got, items) }}
	reg := tools.NewRegistry()
	RegisterTodoTool(reg, list)

	out, err := call(t, reg, `{"todos":[
		{"content":" write tests ","status":"completed","priority":"HIGH"},
		{"id":"x","content":"implement","status":"in_progress"},
		{"content":"document","status":"pending","priority":"low"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "- [x] write tests (high) [id: 1]\n- [~] implement [id: x]\n- [ ] document (low) [id: 3]\n\n1 of 3 completed."
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	items := list.Items()
	if len(items) != 3 || items[0].Content != "write tests" || items[0].Priority != "high" || items[1].Status != StatusInProgress {
		t.Errorf("items = %+v", items)
	}
	if len(got) != 1 || len(got[0]) != 3 {
		t.Fatalf("OnChange calls = %v", got)
	}
	// The hook's copy is its own.
	got[0][0].Content = "mutated"
	if list.Items()[0].Content != "write tests" {
		t.Error("OnChange received the list's own slice")
	}

	out, err = call(t, reg, `{"todos":[]}`)
	if err != nil || out != "Todo list is empty." || len(list.Items()) != 0 {
		t.Errorf("clear: %v %v %v", out, err, list.Items())
	}
}

func TestTodoWriteRejects(t *testing.T) {
	list := &TodoList{}
	list.Set([]Item{{ID: "keep", Content: "keep me", Status: StatusPending}})
	reg := tools.NewRegistry()
	RegisterTodoTool(reg, list)
	for name, args := range map[string]string{
		"missing":     `{}`,
		"status":      `{"todos":[{"content":"a","status":"done"}]}`,
		"priority":    `{"todos":[{"content":"a","status":"pending","priority":"urgent"}]}`,
		"content":     `{"todos":[{"content":"  ","status":"pending"}]}`,
		"duplicate":   `{"todos":[{"id":"1","content":"a","status":"pending"},{"id":"1","content":"b","status":"pending"}]}`,
		"two running": `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`,
		"type":        `{"todos":"nope"}`,
		"too many":    `{"todos":[` + strings.TrimSuffix(strings.Repeat(`{"content":"a","status":"pending"},`, MaxItems+1), ",") + `]}`,
	} {
		_, err := call(t, reg, args)
		if !errors.Is(err, tools.ErrInvalidArgs) {
			t.Errorf("%s: err = %v, want invalid arguments", name, err)
		}
	}
	if items := list.Items(); len(items) != 1 || items[0].ID != "keep" {
		t.Errorf("a refused call changed the list: %+v", items)
	}
}

func TestTodoListConcurrent(t *testing.T) {
	var mu sync.Mutex
	var lens []int
	list := &TodoList{OnChange: func(items []Item) {
		mu.Lock()
		lens = append(lens, len(items))
		mu.Unlock()
	}}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			list.Set(make([]Item, i))
			_ = list.Items()
		})
	}
	wg.Wait()
	if len(lens) != 8 {
		t.Fatalf("OnChange ran %d times, want 8", len(lens))
	}
	// The last notification matches the final state.
	if lens[7] != len(list.Items()) {
		t.Errorf("last notification %d, list has %d", lens[7], len(list.Items()))
	}
}

func TestTodoMetadata(t *testing.T) {
	reg := tools.NewRegistry()
	RegisterTodoTool(reg, &TodoList{})
	spec, _ := reg.Lookup("todo_write")
	if spec.Meta.Class != tools.ClassRead || spec.Meta.RiskLevel != tools.RiskLow || spec.Meta.RequiresApproval || !spec.Meta.Parallel() {
		t.Errorf("meta = %+v", spec.Meta)
	}
	if !json.Valid(spec.Schema.Function.Parameters) {
		t.Error("invalid schema")
	}
}
