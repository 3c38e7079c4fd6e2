package interact

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

//go:embed request_directory.md
var requestDirectoryDescription string

type dirArgs struct {
	Path     string `json:"path" jsonschema:"required" jsonschema_description:"The directory to access (absolute, or relative to the workspace root)."`
	Reason   string `json:"reason" jsonschema:"required" jsonschema_description:"Why access is needed."`
	Writable bool   `json:"writable" jsonschema_description:"Whether write access is needed (default false)."`
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
func RegisterDirectoryTool(reg *tools.Registry, h tools.Interactor, ws *confine.Workspace) {
	reg.MustRegister(tools.Spec{
		Name:   "request_directory",
		Schema: schema("request_directory", requestDirectoryDescription, tools.ParamsOf[dirArgs]()),
		Meta:   interactiveMeta,
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			return requestDirectory(ctx, call, h, ws)
		},
	})
}

func requestDirectory(ctx context.Context, call tools.Call, h tools.Interactor, ws *confine.Workspace) (any, error) {
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
	// The card shows what a grant would really cover: the resolved path,
	// whether it leaves the project, and the link it was reached through.
	req, err := describeDir(ws, abs)
	if err != nil {
		return nil, err
	}
	req.Reason, req.Writable = a.Reason, a.Writable
	ans, err := h.RequestDirectory(ctx, call.ID, req)
	if err != nil {
		return nil, fmt.Errorf("request_directory: %w", err)
	}
	if !ans.Granted {
		return DirResult{Granted: false, Note: "the user refused access; do not try to reach this directory another way"}, nil
	}
	granted := req
	if p := strings.TrimSpace(ans.Path); p != "" && ws.Abs(p) != req.Path {
		// The user picked another directory: grant what it resolves to.
		if granted, err = describeDir(ws, ws.Abs(p)); err != nil {
			return nil, err
		}
	}
	if err := grantable(granted.Path); err != nil {
		return nil, err
	}
	if err := ws.GrantExact(granted.Path, ans.Writable); err != nil {
		return nil, fmt.Errorf("request_directory: %w", err)
	}
	note := "read-only access granted for this session"
	if ans.Writable {
		note = "read and write access granted for this session"
	}
	if granted.Path != req.Path {
		note += "; the user picked a different directory than requested"
	}
	if granted.Link != "" {
		note += "; " + granted.Link + " is a symlink, the grant covers its target " + granted.Path + " only"
	}
	return DirResult{Granted: true, Path: granted.Path, Writable: ans.Writable, Note: note}, nil
}

// describeDir resolves abs (an absolute directory path) for the card: the
// real path, whether it is outside the workspace, and the first symlink on
// the way.
func describeDir(ws *confine.Workspace, abs string) (tools.DirRequest, error) {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return tools.DirRequest{}, fmt.Errorf("%w: directory %s: %v", tools.ErrNotFound, abs, err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return tools.DirRequest{}, fmt.Errorf("%w: directory %s", tools.ErrNotFound, abs)
	}
	d := tools.DirRequest{Path: real, OutsideProject: !confine.Within(ws.Root(), real)}
	if real != abs {
		d.RequestedPath = abs
		d.Link, d.LinkTarget = firstLink(abs)
	}
	return d, nil
}

// firstLink finds the first symlink among abs's components.
func firstLink(abs string) (link, target string) {
	vol := filepath.VolumeName(abs)
	cur := vol + string(filepath.Separator)
	for part := range strings.SplitSeq(strings.TrimPrefix(abs[len(vol):], string(filepath.Separator)), string(filepath.Separator)) {
		if part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			t, _ := os.Readlink(cur)
			return cur, t
		}
	}
	return "", ""
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
