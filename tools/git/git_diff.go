package git

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

//go:embed git_diff.md
var gitDiffDescription string

type gitDiffArgs struct {
	Ref    string `json:"ref" jsonschema_description:"Commit, branch or tag to compare with, or a range a..b."`
	Staged bool   `json:"staged" jsonschema_description:"Show staged changes (the index) instead of the work tree."`
	Path   string `json:"path" jsonschema_description:"Limit to this path (relative to the workspace root)."`
	Stat   bool   `json:"stat" jsonschema_description:"Only a summary of changed files."`
}

func (r *runner) gitDiffSpec() tools.Spec {
	return tools.Spec{
		Name: "git_diff",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Description: strings.TrimSpace(gitDiffDescription),
			Parameters:  tools.ParamsOf[gitDiffArgs](),
		}},
		Meta:    readMeta("path"),
		Handler: r.gitDiff,
	}
}

func (r *runner) gitDiff(ctx context.Context, call tools.Call) (any, error) {
	var a gitDiffArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	if err := checkRef("ref", a.Ref); err != nil {
		return nil, refused(err)
	}
	if err := r.checkScopedRef(a.Ref); err != nil {
		return nil, refused(err)
	}
	path, err := r.pathspec(a.Path)
	if err != nil {
		return nil, refused(err)
	}
	args := []string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all"}
	if a.Stat {
		args = append(args, "--stat=200")
	}
	if a.Staged {
		args = append(args, "--cached")
	}
	if r.scoped() {
		args = append(args, "--relative") // paths relative to the folder, and only its own
	}
	args = append(args, "--end-of-options")
	if a.Ref != "" {
		args = append(args, a.Ref)
	}
	args = append(args, "--")
	if path != "" {
		args = append(args, path)
	} else {
		args = append(args, r.scope()...)
	}
	out, err := r.git(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("git_diff: %w", err)
	}
	text := strings.ToValidUTF8(string(out.stdout), "\uFFFD")
	switch {
	case out.capped:
		text += fmt.Sprintf("\n[diff cut at %d KB: narrow it with path, or use stat first]", maxOutputBytes>>10)
	case text == "":
		text = "No differences."
	}
	return text, nil
}
