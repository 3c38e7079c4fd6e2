package shell

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

//go:embed shell_task_kill.md
var taskKillDescription string

type taskKillArgs struct {
	TaskID string `json:"task_id" jsonschema:"required" jsonschema_description:"The id run_shell returned."`
}

// KillResult is the result of shell_task_kill.
type KillResult struct {
	TaskID     string `json:"task_id"`
	WasRunning bool   `json:"was_running"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	Ended      string `json:"ended,omitempty"`
	Tail       string `json:"tail"`        // the last output (up to a quarter of MaxOutput)
	NextOffset int64  `json:"next_offset"` // total output bytes
}

func (m *Manager) taskKillSpec() tools.Spec {
	return tools.Spec{
		Name: "shell_task_kill",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Description: strings.TrimSpace(taskKillDescription),
			Parameters:  tools.ParamsOf[taskKillArgs](),
		}},
		Meta: tools.Metadata{
			Category:         "shell",
			RiskLevel:        tools.RiskHigh,
			Class:            tools.ClassExec,
			Capabilities:     []string{"exec", "kill"},
			RequiresApproval: true,
		},
		Handler: m.taskKill,
	}
}

func (m *Manager) taskKill(ctx context.Context, call tools.Call) (any, error) {
	var a taskKillArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	if a.TaskID == "" {
		return nil, fmt.Errorf("%w: task_id is required", tools.ErrInvalidArgs)
	}
	t, err := m.lookup(a.TaskID)
	if err != nil {
		return nil, fmt.Errorf("shell_task_kill: %w", err)
	}
	was := t.running()
	t.kill(endKilled)
	if err := t.wait(ctx); err != nil {
		return nil, fmt.Errorf("shell_task_kill: %w", err)
	}
	st := t.status()
	total := t.out.Total()
	keep := int64(m.opts.MaxOutput / 4)
	c := t.out.ReadAt(max(0, total-keep), int(keep), true)
	return KillResult{
		TaskID:     t.id,
		WasRunning: was,
		ExitCode:   st.ExitCode,
		Ended:      st.Reason.String(),
		Tail:       c.Data,
		NextOffset: total,
	}, nil
}
