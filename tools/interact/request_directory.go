package interact

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/confine"
)

//go:embed request_directory.md
var requestDirectoryDescription string

const requestDirectoryParams = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The directory to access (absolute, or relative to the workspace root)."},
    "reason": {"type": "string", "description": "Why access is needed."},
    "writable": {"type": "boolean", "description": "Whether write access is needed (default false)."}
  },
  "required": ["path", "reason"],
  "additionalProperties": false
}`

type dirArgs struct {
	Path     string `json:"path"`
	Reason   string `json:"reason"`
	Writable bool   `json:"writable"`
}

// DirResult is what request_directory returns to the model.
type DirResult struct {
	Granted  bool   `json:"granted"`
	Path     string `json:"path,omitempty"`
	Writable bool   `json:"writable"`
	Note     string `json:"note"`
}

// RegisterDirectoryTool registers request_directory, answered by
// h.RequestDirectory; a granted directory is added to ws.
func RegisterDirectoryTool(reg *tools.Registry, h Handlers, ws *confine.Workspace) {
	reg.MustRegister(tools.Spec{
		Name:   "request_directory",
		Schema: schema("request_directory", requestDirectoryDescription, requestDirectoryParams),
		Meta:   interactiveMeta,
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			return requestDirectory(ctx, call, h, ws)
		},
	})
}

func requestDirectory(ctx context.Context, call tools.Call, h Handlers, ws *confine.Workspace) (any, error) {
	var a dirArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	a.Path, a.Reason = strings.TrimSpace(a.Path), strings.TrimSpace(a.Reason)
	if a.Path == "" || a.Reason == "" {
		return nil, fmt.Errorf("%w: path and reason are required", tools.ErrInvalidArgs)
	}
	if ws == nil {
		return nil, tools.Errorf("unavailable", "request_directory: %w: no workspace", tools.ErrUnavailable)
	}
	abs := ws.Abs(a.Path)
	if err := grantable(abs); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: directory %s", tools.ErrNotFound, abs)
	}
	if _, err := ws.Resolve(abs, a.Writable); err == nil {
		return DirResult{Granted: true, Path: abs, Writable: a.Writable, Note: "already accessible: it is inside the workspace or an earlier grant"}, nil
	}
	if h == nil {
		return nil, noHandler("request_directory")
	}
	ans, err := h.RequestDirectory(ctx, call.ID, DirRequest{Reason: a.Reason, Path: abs, Writable: a.Writable})
	if err != nil {
		return nil, fmt.Errorf("request_directory: %w", err)
	}
	if !ans.Granted {
		return DirResult{Granted: false, Note: "the user refused access; do not try to reach this directory another way"}, nil
	}
	granted := abs
	if p := strings.TrimSpace(ans.Path); p != "" {
		granted = ws.Abs(p)
	}
	if err := grantable(granted); err != nil {
		return nil, err
	}
	if err := ws.Grant(granted, ans.Writable); err != nil {
		return nil, fmt.Errorf("request_directory: %w", err)
	}
	note := "read-only access granted for this session"
	if ans.Writable {
		note = "read and write access granted for this session"
	}
	if granted != abs {
		note += "; the user picked a different directory than requested"
	}
	return DirResult{Granted: true, Path: granted, Writable: ans.Writable, Note: note}, nil
}

// grantable refuses the filesystem root and the user's home directory (and
// what they resolve to through symlinks).
func grantable(abs string) error {
	cands := []string{filepath.Clean(abs)}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		cands = append(cands, real)
	}
	home, _ := os.UserHomeDir()
	var realHome string
	if home != "" {
		realHome, _ = filepath.EvalSymlinks(home)
	}
	for _, p := range cands {
		if p == filepath.VolumeName(p)+string(filepath.Separator) {
			return tools.Errorf("forbidden", "%w: %s is the filesystem root", ErrRefusedDirectory, abs)
		}
		if home != "" && (p == filepath.Clean(home) || p == realHome) {
			return tools.Errorf("forbidden", "%w: %s is the home directory; ask for a specific folder", ErrRefusedDirectory, abs)
		}
	}
	return nil
}
