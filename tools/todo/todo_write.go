package todo

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

//go:embed todo_write.md
var todoWriteDescription string

type todoArgs struct {
	Todos *[]Item `json:"todos" jsonschema:"required" jsonschema_description:"The complete, updated task list."`
}

// RegisterTodoTool registers todo_write, which replaces list's items.
func RegisterTodoTool(reg *tools.Registry, list *TodoList) {
	reg.MustRegister(tools.Spec{
		Name: "todo_write",
		Schema: llm.ToolSchema{Type: "function", Function: llm.FunctionSchema{
			Name:        "todo_write",
			Description: strings.TrimSpace(todoWriteDescription),
			Parameters:  tools.ParamsOf[todoArgs](),
		}},
		Meta: tools.Metadata{
			Category:     "task",
			RiskLevel:    tools.RiskLow,
			Class:        tools.ClassRead,
			Capabilities: []string{"state"},
		},
		Handler: func(_ context.Context, call tools.Call) (any, error) {
			var a todoArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			if a.Todos == nil {
				return nil, fmt.Errorf("%w: todos is required (send an empty array to clear the list)", tools.ErrInvalidArgs)
			}
			items := *a.Todos
			if err := Validate(items); err != nil {
				return nil, fmt.Errorf("%w: %w", tools.ErrInvalidArgs, err)
			}
			list.Set(items)
			return Render(items), nil
		},
	})
}
