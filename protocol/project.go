package protocol

// VCSMode is per-turn change tracking: off, auto, native or shadow.
type VCSMode string

// The change tracking modes.
const (
	VCSOff    VCSMode = "off"
	VCSAuto   VCSMode = "auto"
	VCSNative VCSMode = "native"
	VCSShadow VCSMode = "shadow"
)

// VCSModes lists the modes.
var VCSModes = []VCSMode{VCSOff, VCSAuto, VCSNative, VCSShadow}

// Project is a project on the wire (project.open, project.list, ...).
type Project struct {
	ProjectID string `json:"projectId"`
	// Path is the folder, symlinks resolved.
	Path string `json:"path"`
	// Git reports whether the folder is a git project: it has a .git of
	// its own, or its GitCandidate is trusted (project.trustGit).
	Git bool `json:"git"`
	// GitCandidate is the repository that holds the folder without being
	// its own (a git worktree's, or an enclosing repository's of which the
	// folder is a part); absent when there is none. Git tools, allowlisted
	// git and native snapshots use it only once the user trusts it.
	GitCandidate *GitCandidate `json:"gitCandidate,omitempty"`
	// Open reports whether the project is open in this sidecar process.
	Open bool `json:"open"`
	// Settings are the project's stored settings.
	Settings ProjectSettings `json:"settings"`
}

// GitCandidateKind is what a GitCandidate is.
type GitCandidateKind string

// The kinds of GitCandidate.
const (
	// GitWorktree: the folder's .git is a file naming a git directory
	// outside it (git worktree add; a submodule).
	GitWorktree GitCandidateKind = "worktree"
	// GitEnclosing: the folder has no .git; a folder above it holds the
	// repository (a package of a monorepo).
	GitEnclosing GitCandidateKind = "enclosing"
)

// GitCandidate is a repository that holds a project without being its own,
// every path resolved (never as the repository wrote it).
type GitCandidate struct {
	Kind GitCandidateKind `json:"kind"`
	// Repository is the repository's top level: the folder holding the
	// enclosing .git, or a worktree's main work tree.
	Repository string `json:"repository"`
	// GitDir is the git directory git uses; CommonDir the one holding the
	// objects and refs (GitDir when they are the same).
	GitDir    string `json:"gitDir"`
	CommonDir string `json:"commonDir"`
	// Hash identifies exactly this repository and the files that lead to
	// it (the .git file, commondir, gitdir); project.trustGit takes it.
	Hash string `json:"hash"`
	// Trusted reports whether the user trusted exactly this Hash.
	Trusted bool `json:"trusted"`
}

// ProjectTrustGitParams are the params of project.trustGit.
type ProjectTrustGitParams struct {
	ProjectID string `json:"projectId" rpc:"required"`
	// Hash is the gitCandidate.hash the user was shown.
	Hash string `json:"hash" rpc:"required"`
}

// ProjectSettings are a project's own settings.
type ProjectSettings struct {
	// VCS is the change tracking of the project's sessions (default auto);
	// a session created with its own vcs keeps that one.
	VCS VCSMode `json:"vcs"`
	// SnapshotCapBytes bounds the storage of the project's snapshots
	// (vcs.usage); over it, the oldest turns' snapshots expire. Default
	// 2 GiB (2147483648).
	SnapshotCapBytes int64 `json:"snapshotCapBytes"`
}

// ProjectOpenParams are the params of project.open.
type ProjectOpenParams struct {
	// Path is absolute, or relative to the sidecar's working directory.
	Path string `json:"path" rpc:"required"`
	// VCS, when set, changes the project's change tracking (as
	// project.setSettings does).
	VCS VCSMode `json:"vcs,omitempty"`
}

// ProjectIDParams are the params of methods that name a project only
// (project.close, session.list, mcp.list, terminal.list).
type ProjectIDParams struct {
	ProjectID string `json:"projectId" rpc:"required"`
}

// ProjectCloseResult is the result of project.close.
type ProjectCloseResult struct {
	// Closed is false when the project was not open.
	Closed bool `json:"closed"`
}

// ProjectListResult is the result of project.list: every project ever
// opened, most recently opened first.
type ProjectListResult struct {
	Projects []Project `json:"projects"`
}

// ProjectSetSettingsParams are the params of project.setSettings; absent
// members are unchanged.
type ProjectSetSettingsParams struct {
	ProjectID string   `json:"projectId" rpc:"required"`
	VCS       *VCSMode `json:"vcs,omitempty"`
	// SnapshotCapBytes sets the cap on the project's snapshot storage: 0
	// for the default (2 GiB), else at least 16 MiB (16777216).
	SnapshotCapBytes *int64 `json:"snapshotCapBytes,omitempty"`
}
