package shell

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

//go:embed shell_task_output.md
var taskOutputDescription string

type taskOutputArgs struct {
	TaskID string `json:"task_id" jsonschema:"required" jsonschema_description:"The id run_shell returned."`
	Offset int64  `json:"offset" jsonschema:"minimum=0" jsonschema_description:"Byte offset to read from; pass the previous next_offset."`
}

// TaskOutput is the result of shell_task_output.
type TaskOutput struct {
	TaskID     string `json:"task_id"`
	Output     string `json:"output"`
	Offset     int64  `json:"offset"` // where output starts
	NextOffset int64  `json:"next_offset"`
	Dropped    int64  `json:"dropped,omitempty"`
	More       bool   `json:"more"` // more output is already buffered
	Running    bool   `json:"running"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	Ended      string `json:"ended,omitempty"` // timeout, killed, interrupted, session_closed
	DurationMS int64  `json:"duration_ms"`
}

func (m *Manager) taskOutputSpec() tools.Spec {
	return tools.Spec{
		Name: "shell_task_output",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Description: strings.TrimSpace(taskOutputDescription),
			Parameters:  tools.ParamsOf[taskOutputArgs](),
		}},
		Meta: tools.Metadata{
			Category:     "shell",
			RiskLevel:    tools.RiskLow,
			Class:        tools.ClassRead,
			Capabilities: []string{"read"},
		},
		Handler: m.taskOutput,
	}
}

func (m *Manager) taskOutput(_ context.Context, call tools.Call) (any, error) {
	var a taskOutputArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	if a.TaskID == "" {
		return nil, fmt.Errorf("%w: task_id is required", tools.ErrInvalidArgs)
	}
	if a.Offset < 0 {
		return nil, fmt.Errorf("%w: offset must not be negative", tools.ErrInvalidArgs)
	}
	t, err := m.lookup(a.TaskID)
	if err != nil {
		return nil, fmt.Errorf("shell_task_output: %w", err)
	}
	st := t.status() // before reading: a finished task's output is complete
	c := t.out.ReadAt(a.Offset, m.opts.MaxOutput, !st.Running)
	return TaskOutput{
		TaskID:     t.id,
		Output:     c.Data,
		Offset:     c.Start,
		NextOffset: c.Next,
		Dropped:    c.Dropped,
		More:       c.Next < t.out.Total(),
		Running:    st.Running,
		ExitCode:   st.ExitCode,
		Ended:      st.Reason.String(),
		DurationMS: st.Duration.Milliseconds(),
	}, nil
}
