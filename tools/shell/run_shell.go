package shell

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

//go:embed run_shell.md
var runShellDescription string

type runShellArgs struct {
	Command    string `json:"command" jsonschema:"required" jsonschema_description:"The shell command line to run."`
	Cwd        string `json:"cwd" jsonschema_description:"Working directory relative to the workspace root (default: the root)."`
	TimeoutMS  int64  `json:"timeout_ms" jsonschema:"minimum=1" jsonschema_description:"Time limit in milliseconds (default 120000)."`
	Background bool   `json:"background" jsonschema_description:"Start as a background task and return its task_id at once."`
}

// RunResult is the result of a foreground run_shell.
type RunResult struct {
	ExitCode   int    `json:"exit_code"` // -1 when a signal ended the command
	Output     string `json:"output"`
	Truncated  bool   `json:"truncated,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	TimedOut   bool   `json:"timed_out"`
	Error      string `json:"error,omitempty"` // why the command could not run normally
}

// StartResult is the result of a background run_shell.
type StartResult struct {
	TaskID  string `json:"task_id"`
	Message string `json:"message"`
}

func (m *Manager) runShellSpec() tools.Spec {
	return tools.Spec{
		Name: "run_shell",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Description: strings.TrimSpace(runShellDescription),
			Parameters:  tools.ParamsOf[runShellArgs](),
		}},
		Meta: tools.Metadata{
			Category:         "shell",
			RiskLevel:        tools.RiskHigh,
			Class:            tools.ClassExec,
			Capabilities:     []string{"exec", "background"},
			RequiresApproval: true,
			PathArgs:         []string{"cwd"},
		},
		Handler: m.runShell,
	}
}

func (m *Manager) runShell(ctx context.Context, call tools.Call) (any, error) {
	var a runShellArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return nil, fmt.Errorf("%w: %w", tools.ErrInvalidArgs, ErrNoCommand)
	}
	if a.TimeoutMS < 0 {
		return nil, fmt.Errorf("%w: timeout_ms must be positive", tools.ErrInvalidArgs)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	inert := !tools.UserApproved(ctx)
	if a.Background {
		t, err := m.spawn(ctx, a.Command, a.Cwd, m.timeoutFor(a.TimeoutMS, 0), true, inert)
		if err != nil {
			return nil, fmt.Errorf("run_shell: %w", err)
		}
		msg := "started; read output with shell_task_output, stop with shell_task_kill"
		if t.gitRefused != nil {
			msg += "; " + gitRefusedNote(t.gitRefused)
		}
		return StartResult{TaskID: t.id, Message: msg}, nil
	}
	t, err := m.spawn(ctx, a.Command, a.Cwd, m.timeoutFor(a.TimeoutMS, m.opts.DefaultTimeout), false, inert)
	if err != nil {
		return nil, fmt.Errorf("run_shell: %w", err)
	}
	defer m.forget(t)
	if err := m.waitTask(ctx, t); err != nil {
		return nil, fmt.Errorf("run_shell: command killed: %w", err)
	}
	st := t.status()
	text, truncated := t.out.Summary()
	res := RunResult{
		ExitCode:   *st.ExitCode,
		Output:     text,
		Truncated:  truncated,
		DurationMS: st.Duration.Milliseconds(),
		TimedOut:   st.Reason == endTimeout,
	}
	switch {
	case st.Reason == endTimeout:
		res.Error = fmt.Sprintf("timed out after %s; the command and its children were killed", st.Duration.Round(time.Millisecond))
	case st.Reason != endNone:
		res.Error = "command ended: " + st.Reason.String()
	case st.Err != nil:
		res.Error = st.Err.Error()
	case t.gitRefused != nil && res.ExitCode != 0 && strings.Contains(text, "not a git repository"):
		res.Error = gitRefusedNote(t.gitRefused)
	}
	return res, nil
}

// gitRefusedNote tells the model why git found no repository in an
// unapproved command: the workspace's was refused (GIT_DIR is os.DevNull).
func gitRefusedNote(err error) string {
	return "git was not run on the workspace's repository: " + err.Error()
}
