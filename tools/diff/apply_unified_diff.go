package diff

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
)

//go:embed apply_unified_diff.md
var applyUnifiedDescription string

type unifiedArgs struct {
	Diff  string `json:"diff" jsonschema:"required" jsonschema_description:"A unified diff (git diff or diff -u output) for one or more files."`
	Patch string `json:"patch" jsonschema:"-"` // accepted as an alias
}

func applyUnifiedSpec(ws *confine.Workspace, guard *conflict.Guard) tools.Spec {
	return tools.Spec{
		Name: "apply_unified_diff",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Name:        "apply_unified_diff",
			Description: applyUnifiedDescription,
			Parameters:  tools.ParamsOf[unifiedArgs](),
		}},
		Meta: writeMeta("apply_unified_diff"),
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var a unifiedArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			text, err := a.text()
			if err != nil {
				return nil, err
			}
			return ApplyUnified(ctx, ws, guard, text)
		},
		Preview: func(ctx context.Context, args tools.Args) (string, error) {
			var a unifiedArgs
			if err := tools.DecodeArgs(args.Canonical, &a); err != nil {
				return "", err
			}
			text, err := a.text()
			if err != nil {
				return "", err
			}
			return PreviewUnified(ctx, ws, text)
		},
	}
}

func (a unifiedArgs) text() (string, error) {
	t := a.Diff
	if t == "" {
		t = a.Patch
	}
	if strings.TrimSpace(t) == "" {
		return "", fmt.Errorf("%w: diff is required", tools.ErrInvalidArgs)
	}
	return t, nil
}

// UnifiedPaths returns every path a unified diff names, for permission
// checks and approval cards; nil if the text does not parse.
func UnifiedPaths(text string) []string {
	files, err := ParseUnified(text)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range files {
		if f.OldName != "" {
			out = append(out, f.OldName)
		}
		if f.NewName != "" && f.NewName != f.OldName {
			out = append(out, f.NewName)
		}
	}
	return out
}
