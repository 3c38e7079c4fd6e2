package protocol

// Worktree is one work tree of a repository (worktree.list).
type Worktree struct {
	// Path is the work tree's folder, symlinks resolved.
	Path string `json:"path"`
	// Branch is the checked-out branch (refs/heads/ stripped); absent when
	// HEAD is detached.
	Branch string `json:"branch,omitempty"`
	// Head is the checked-out commit; absent before the first commit.
	Head string `json:"head,omitempty"`
	// Main reports the main work tree (the one holding the repository).
	Main bool `json:"main"`
	// Current reports the work tree of the project the call named.
	Current bool `json:"current"`
	// Locked and Prunable are git's flags (prunable: its folder is gone).
	Locked   bool `json:"locked"`
	Prunable bool `json:"prunable"`
	// ProjectID is the project of that folder, when one was opened.
	ProjectID string `json:"projectId,omitempty"`
}

// WorktreeListResult is the result of worktree.list.
type WorktreeListResult struct {
	Worktrees []Worktree `json:"worktrees"`
}

// WorktreeCreateParams are the params of worktree.create.
type WorktreeCreateParams struct {
	// ProjectID is a git project of the repository (its own .git or a
	// trusted worktree).
	ProjectID string `json:"projectId" rpc:"required"`
	// Branch is the new branch the work tree checks out.
	Branch string `json:"branch" rpc:"required"`
	// Path is the new folder (absolute; it must not exist or be empty);
	// default <main work tree>.worktrees/<branch> beside the main work
	// tree.
	Path string `json:"path,omitempty"`
	// From is the commit the branch starts at (default HEAD).
	From string `json:"from,omitempty"`
}

// WorktreeCreateResult is the result of worktree.create: the new work tree,
// opened as its own, trusted project.
type WorktreeCreateResult struct {
	Worktree Worktree `json:"worktree"`
	Project  Project  `json:"project"`
}

// WorktreeRemoveParams are the params of worktree.remove.
type WorktreeRemoveParams struct {
	// ProjectID is the linked work tree's project.
	ProjectID string `json:"projectId" rpc:"required"`
	// Force removes it even with uncommitted or untracked changes.
	Force bool `json:"force,omitempty"`
}

// WorktreeRemoveResult is the result of worktree.remove.
type WorktreeRemoveResult struct {
	// Path is the folder removed.
	Path string `json:"path"`
}
