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

//go:embed apply_patch.md
var applyPatchDescription string

type patchArgs struct {
	Patch string `json:"patch" jsonschema:"required" jsonschema_description:"The whole patch, from \"*** Begin Patch\" to \"*** End Patch\"."`
	Input string `json:"input" jsonschema:"-"` // Codex's name for the same argument
}

func (a patchArgs) text() (string, error) {
	t := a.Patch
	if t == "" {
		t = a.Input
	}
	if strings.TrimSpace(t) == "" {
		return "", fmt.Errorf("%w: patch is required", tools.ErrInvalidArgs)
	}
	return t, nil
}

func writeMeta(name string) tools.Metadata {
	return tools.Metadata{
		Category:         "patch",
		RiskLevel:        tools.RiskMedium,
		Class:            tools.ClassWrite,
		Capabilities:     []string{name},
		RequiresApproval: true,
	}
}

func applyPatchSpec(ws *confine.Workspace, guard *conflict.Guard) tools.Spec {
	return tools.Spec{
		Name: "apply_patch",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Name:        "apply_patch",
			Description: applyPatchDescription,
			Parameters:  tools.ParamsOf[patchArgs](),
		}},
		// No PathArgs: the paths live inside the patch text (PatchPaths
		// lists them); the tool confines each one itself.
		Meta: writeMeta("apply_patch"),
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var a patchArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			text, err := a.text()
			if err != nil {
				return nil, err
			}
			return ApplyPatch(ctx, ws, guard, text)
		},
		Preview: func(ctx context.Context, args tools.Args) (string, error) {
			var a patchArgs
			if err := tools.DecodeArgs(args.Canonical, &a); err != nil {
				return "", err
			}
			text, err := a.text()
			if err != nil {
				return "", err
			}
			return PreviewPatch(ctx, ws, text)
		},
	}
}

// PatchPaths returns every path an apply_patch text names (sources and
// Move to targets), for permission checks and approval cards; nil if the
// text does not parse.
func PatchPaths(text string) []string {
	p, err := ParsePatch(text)
	if err != nil {
		return nil
	}
	var out []string
	for _, op := range p.Ops {
		out = append(out, op.Path)
		if op.MoveTo != "" {
			out = append(out, op.MoveTo)
		}
	}
	return out
}
