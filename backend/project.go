package backend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/vcs"
)

// projectInfo is a project on the wire, open as this process knows it.
func (b *Backend) projectInfo(ctx context.Context, pr store.Project, ps protocol.ProjectSettings) protocol.Project {
	b.mu.Lock()
	_, open := b.openProjects[pr.ID]
	b.mu.Unlock()
	g := b.gitStateOf(ctx, pr)
	return protocol.Project{ProjectID: pr.ID, Path: pr.Path, Git: g.own || g.trusted, GitCandidate: g.wireCandidate(), Open: open, Settings: ps}
}

// projectRoot checks a project path: absolute after cleaning, an existing
// directory, and neither a filesystem root nor the home directory. It
// returns the path with symlinks resolved, so one folder has one id.
func projectRoot(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", protocol.InvalidField("path", err.Error())
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: project path %q does not exist", ErrNotFound, path)
		}
		return "", protocol.InvalidField("path", err.Error())
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%w: project path %q: %v", ErrNotFound, path, err)
	}
	if !st.IsDir() {
		return "", protocol.InvalidField("path", fmt.Sprintf("%q is not a directory", path))
	}
	if filepath.Dir(real) == real {
		return "", fmt.Errorf("%w: %q is a filesystem root; open a project folder instead", ErrForbidden, real)
	}
	if home, err := os.UserHomeDir(); err == nil {
		if h, err := filepath.EvalSymlinks(home); err == nil && h == real {
			return "", fmt.Errorf("%w: %q is the home directory; open a project folder instead", ErrForbidden, real)
		}
	}
	return real, nil
}

// isGitRepo reports whether path has a .git directory of its own (a .git
// file is a worktree's: gitStateOf).
func isGitRepo(path string) bool {
	fi, err := os.Lstat(filepath.Join(path, ".git"))
	return err == nil && fi.IsDir()
}

func (b *Backend) OpenProject(ctx context.Context, p protocol.ProjectOpenParams) (protocol.Project, error) {
	root, err := projectRoot(p.Path)
	if err != nil {
		return protocol.Project{}, err
	}
	var mode vcs.Mode
	if p.VCS != "" {
		if mode, err = parseVCSMode(string(p.VCS)); err != nil {
			return protocol.Project{}, err
		}
	}
	pr, ps, err := b.openProject(ctx, root, mode)
	if err != nil {
		return protocol.Project{}, err
	}
	return b.projectInfo(ctx, pr, ps), nil
}

// openProject records root (checked by projectRoot) as a project, sets its
// vcs mode unless mode is "", and opens it in this process.
func (b *Backend) openProject(ctx context.Context, root string, mode vcs.Mode) (store.Project, protocol.ProjectSettings, error) {
	pr, err := b.opts.Store.UpsertProject(ctx, root)
	if err != nil {
		return pr, protocol.ProjectSettings{}, fmt.Errorf("open project: %w", err)
	}
	var ps protocol.ProjectSettings
	if mode != "" {
		ps, err = b.setProjectVCS(ctx, pr.ID, mode)
	} else {
		ps, err = b.projectSettings(ctx, pr.ID)
	}
	if err != nil {
		return pr, ps, err
	}
	b.mu.Lock()
	b.openProjects[pr.ID] = struct{}{}
	b.mu.Unlock()
	b.openMCP(pr.ID, pr.Path) // connects in the background
	return pr, ps, nil
}

func (b *Backend) CloseProject(ctx context.Context, p protocol.ProjectIDParams) (protocol.ProjectCloseResult, error) {
	if _, err := b.opts.Store.Project(ctx, p.ProjectID); err != nil {
		return protocol.ProjectCloseResult{}, err
	}
	return protocol.ProjectCloseResult{Closed: b.closeProject(p.ProjectID)}, nil
}

// closeProject closes a project in this process: idle engines of the
// project are released (running turns finish), its MCP servers, file
// watcher, file index and terminals closed. It reports whether it was open.
func (b *Backend) closeProject(projectID string) bool {
	b.mu.Lock()
	_, wasOpen := b.openProjects[projectID]
	delete(b.openProjects, projectID)
	b.mu.Unlock()
	b.unloadIdle(projectID)
	b.closeMCP(projectID) // kills its MCP servers
	b.closeFileIndex(projectID)
	if err := b.closeWatcher(projectID); err != nil {
		b.log.Warn("close file watcher", "project", projectID, "err", err)
	}
	if b.opts.Terminals != nil {
		b.opts.Terminals.CloseProject(projectID)
	}
	return wasOpen
}

func (b *Backend) Projects(ctx context.Context, p protocol.Empty) (protocol.ProjectListResult, error) {
	prs, err := b.opts.Store.Projects(ctx)
	if err != nil {
		return protocol.ProjectListResult{}, err
	}
	out := make([]protocol.Project, len(prs))
	for i, pr := range prs {
		ps, err := b.projectSettings(ctx, pr.ID)
		if err != nil {
			return protocol.ProjectListResult{}, err
		}
		out[i] = b.projectInfo(ctx, pr, ps)
	}
	return protocol.ProjectListResult{Projects: out}, nil
}

// projectOf returns a stored project or an error wrapping ErrNotFound.
func (b *Backend) projectOf(ctx context.Context, id string) (store.Project, error) {
	return b.opts.Store.Project(ctx, id)
}
