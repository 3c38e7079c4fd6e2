package git

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

//go:embed git_status.md
var gitStatusDescription string

const maxStatusEntries = 500

func (r *runner) gitStatusSpec() tools.Spec {
	return tools.Spec{
		Name: "git_status",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Description: strings.TrimSpace(gitStatusDescription),
			Parameters:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		}},
		Meta:    readMeta(),
		Handler: r.gitStatus,
	}
}

func (r *runner) gitStatus(ctx context.Context, call tools.Call) (any, error) {
	var a struct{}
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	out, err := r.git(ctx, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignore-submodules=all")
	if err != nil {
		return nil, fmt.Errorf("git_status: %w", err)
	}
	st := ParseStatus(out.stdout)
	if out.capped || len(st.Entries) > maxStatusEntries {
		st.Entries = st.Entries[:min(len(st.Entries), maxStatusEntries)]
		st.Truncated = true
	}
	return st, nil
}
