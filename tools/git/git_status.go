package git

import (
	"context"
	_ "embed"
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
			Parameters:  tools.ParamsOf[struct{}](),
		}},
		Meta:    readMeta(),
		Handler: r.gitStatus,
	}
}

// relativeStatus makes porcelain paths (relative to the repository's top
// level) relative to the folder prefix, drops entries outside it, and a
// rename's origin outside it.
func relativeStatus(st Status, prefix string) Status {
	entries := st.Entries[:0]
	for _, e := range st.Entries {
		p, ok := strings.CutPrefix(e.Path, prefix)
		if !ok {
			continue
		}
		e.Path = p
		if o, ok := strings.CutPrefix(e.OrigPath, prefix); ok {
			e.OrigPath = o
		} else {
			e.OrigPath = "" // came from outside the folder: not shown
		}
		entries = append(entries, e)
	}
	st.Entries = entries
	st.Clean = len(entries) == 0
	return st
}

func (r *runner) gitStatus(ctx context.Context, call tools.Call) (any, error) {
	var a struct{}
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	args := []string{"status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignore-submodules=all", "--"}
	out, err := r.git(ctx, append(args, r.scope()...)...)
	if err != nil {
		return nil, fmt.Errorf("git_status: %w", err)
	}
	st := ParseStatus(out.stdout)
	if r.scoped() {
		st = relativeStatus(st, r.confirmed.Prefix())
	}
	if out.capped || len(st.Entries) > maxStatusEntries {
		st.Entries = st.Entries[:min(len(st.Entries), maxStatusEntries)]
		st.Truncated = true
	}
	return st, nil
}
