package fs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"

	"github.com/zqagent/sidecar/atomicfile"
	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
	"github.com/zqagent/sidecar/tools/fs/textdiff"
)

//go:embed write_file.md
var writeFileDescription string

// Preview limits of the write tools' results.
const (
	previewContext = 3
	previewLines   = 60
)

type writeFileArgs struct {
	Path    string  `json:"path" jsonschema:"required" jsonschema_description:"File path, relative to the workspace root or absolute inside it (or inside a writable granted directory). Missing parent directories are created."`
	Content *string `json:"content" jsonschema:"required" jsonschema_description:"The complete new content of the file."`
}

// WriteResult is what write_file and replace_in_file return.
type WriteResult struct {
	Path         string `json:"path"`
	Bytes        int    `json:"bytes"`
	Created      bool   `json:"created,omitempty"`
	Replacements int    `json:"replacements,omitempty"`
	Added        int    `json:"linesAdded"`
	Removed      int    `json:"linesRemoved"`
	Diff         string `json:"diff,omitempty"`
}

func writeFileSpec(ws *confine.Workspace, guard *conflict.Guard) tools.Spec {
	return tools.Spec{
		Name: "write_file",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Name:        "write_file",
			Description: writeFileDescription,
			Parameters:  tools.ParamsOf[writeFileArgs](),
		}},
		Meta: writeMeta("write_file"),
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var a writeFileArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			if a.Content == nil {
				return nil, fmt.Errorf("%w: content is required (use \"\" for an empty file)", tools.ErrInvalidArgs)
			}
			return WriteFile(ctx, ws, guard, a.Path, *a.Content)
		},
		Preview: func(ctx context.Context, args tools.Args) (string, error) {
			var a writeFileArgs
			if err := tools.DecodeArgs(args.Canonical, &a); err != nil {
				return "", err
			}
			if a.Content == nil {
				return "", fmt.Errorf("%w: content is required", tools.ErrInvalidArgs)
			}
			return PreviewWrite(ctx, ws, a.Path, *a.Content)
		},
	}
}

// PreviewWrite renders what WriteFile would change, as a unified diff
// (textdiff.Change), writing nothing; a file larger than maxEditFileBytes
// is not read (an error).
func PreviewWrite(ctx context.Context, ws *confine.Workspace, p, content string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	t, err := Open(ws, p, true)
	if err != nil {
		return "", err
	}
	defer t.Close()
	old, err := confine.ReadRegular(t.Root, t.Rel, maxEditFileBytes)
	created := errors.Is(err, os.ErrNotExist)
	if err != nil && !created {
		return "", mapFSError("read", p, err)
	}
	return textdiff.Change(t.Display, old, []byte(content), !created, true), nil
}

func writeMeta(name string) tools.Metadata {
	return tools.Metadata{
		Category:         "file",
		RiskLevel:        tools.RiskMedium,
		Class:            tools.ClassWrite,
		Capabilities:     []string{name},
		RequiresApproval: true,
		PathArgs:         []string{"path"},
	}
}

// WriteFile replaces (or creates) the file at p with content, atomically,
// after checking guard for a conflicting change.
func WriteFile(ctx context.Context, ws *confine.Workspace, guard *conflict.Guard, p, content string) (*WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := Open(ws, p, true)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if err := guard.CheckWriteContext(ctx, t.Real); err != nil {
		return nil, err
	}
	// Never blocks on a FIFO, and refuses to replace a special file.
	old, err := confine.ReadRegular(t.Root, t.Rel, 1<<40)
	created := errors.Is(err, os.ErrNotExist)
	if err != nil && !created {
		if fi, serr := t.Root.Stat(t.Rel); serr == nil && fi.IsDir() {
			return nil, toolErr(TypeIsDir, ErrIsDir, "%s is a directory", t.Display)
		}
		return nil, mapFSError("write", p, err)
	}
	if err := atomicfile.Write(t.Root, t.Rel, []byte(content), 0o644, atomicfile.KeepMode); err != nil {
		return nil, mapFSError("write", p, err)
	}
	guard.RecordWrite(t.Real, []byte(content))
	res := &WriteResult{Path: t.Display, Bytes: len(content), Created: created}
	if looksBinary(old) {
		res.Added = len(textdiff.Lines(content))
		return res, nil
	}
	res.Added, res.Removed = textdiff.Count(string(old), content)
	if !created {
		res.Diff = textdiff.Unified(t.Display, string(old), content, previewContext, previewLines)
	}
	return res, nil
}
