// Package vcs records what each agent turn changed in the workspace as git
// snapshots, and lists, diffs and rolls back those turns (seed §17).
//
// A Plan says how a workspace is tracked: off, native (the workspace's own
// .git, with a private index file and refs under refs/agent/<session>/, so the
// user's HEAD, branch, staging area and log are never touched) or shadow (a
// separate repository of the sidecar's, ShadowGitDir under Config.ShadowRoot
// in the data dir, whose work tree is the workspace; never inside the
// workspace, and a <workspace>/.agent/vcs found there is ignored). Native
// mode uses only the workspace's own .git: a repository in a parent
// directory is not used, and one whose .git file, commondir or
// core.worktree points outside the workspace, or whose .git folder leads
// outside through a link or an alternates entry (gitenv.CheckLayout), is
// refused (auto mode falls back to shadow) — unless Config.Confirmed names
// the worktree's or enclosing repository the user confirmed
// (gitenv.OpenConfirmed): native snapshots then use it, an enclosing one
// limited to the workspace folder (git add of the folder, write-tree
// --prefix, so snapshot trees, diffs and restores are the folder's), and a
// linked worktree's sessions keep their refs under refs/worktree/agent/,
// which git stores per worktree. Native mode checks the .git
// folder again at the start of every operation, before its first git run
// (and a snapshot opens the repository again), and opens its private folder
// (.git/zqagent) through os.Root, refusing it when it is a link. Both need a git binary; without one the plan falls back
// to off and says why in Plan.Status.
//
// A SessionVCS belongs to one session. BeginTurn snapshots the workspace
// before a turn (an unnumbered "base" commit when something changed outside
// the agent), CommitTurn snapshots it after the turn and, only when something
// changed, gives the turn the next number (from 1) under
// refs/agent/<session>/turns/<n>; engine.NewVCSHook calls both from the turn
// lifecycle (backend.NewEngine does so for EngineOptions.VCS).
// refs/agent/<session>/head is the newest
// snapshot; every snapshot's parent is the one before it, so a turn's commit
// diffed against its parent is exactly that turn's change.
//
// Every git call is an argv list run without a shell, with gitenv's inert
// environment (no inherited GIT_* variables, no system or global config, no
// hooks, filters, fsmonitor, pager or signing program of the repository's)
// pinned to the repository and the workspace, and a fixed identity. Native
// snapshots open the repository again each time, so a .git pointed outside
// mid-session is refused and newly configured filter drivers are blanked.
//
// Concurrency: a SessionVCS is safe for concurrent use. All SessionVCS of
// one session in this process share one state whose mutex serializes the
// session's git calls, so the engine's hook and a separate SessionVCS serving
// vcs.restore stay consistent. Ref updates are compare-and-swap; when another
// process moved the refs the update fails and the refs are read again. Sessions sharing a workspace use separate index files and
// refs. The package starts no goroutines of its own.
package vcs
