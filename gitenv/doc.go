// Package gitenv owns the environment of every git the sidecar runs without
// a user's approval: snapshots and restore (vcs), the git tools
// (tools/git) and auto-allowed run_shell commands (tools/shell).
//
// Such a git is inert: repository-controlled execution is off. The
// environment drops every inherited GIT_* variable, skips the system and
// global config (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null,
// GIT_ATTR_NOSYSTEM) and adds command-scope settings through
// GIT_CONFIG_COUNT/KEY/VALUE, which win over the repository's own config and
// every file it includes: no hooks, no fsmonitor, no pager or editor, no
// signing or verifying program, no credential helper, no askpass, a plain
// ssh, no ext:: or local (file) transport, whose remote.<name>.uploadpack
// would run. Settings keyed by a name the repository chooses
// (filter.<driver>.clean/smudge/process, diff.<driver>.textconv/command,
// merge.<driver>.driver, alias.<name>, ...) cannot
// be blanked by one key: Open reads the repository's config (includes
// followed, exactly as the run will) and blanks each one it defines. A
// blanked program makes git fail ("cannot run"), never run something.
// Such a git never looks into a submodule, whose own config and attributes
// Open never saw: recursion is off for it and every git it starts (they
// inherit GIT_CONFIG_COUNT), and Open overrides each submodule.<name>.ignore
// of the config or .gitmodules (which would beat diff.ignoreSubmodules).
//
// Such a git also stays inside its project. Open uses the project's own
// .git only, never a parent repository found by discovery: GIT_DIR and
// GIT_WORK_TREE are pinned and GIT_CEILING_DIRECTORIES stops discovery at
// the project. A .git file, a .git link, a commondir or a core.worktree that
// points outside the project is refused with an *OutsideError, and so is a
// .git folder that leads outside through a link anywhere in it or an
// alternates entry (CheckLayout, which vcs also runs before each of its git
// runs), or whose config includes a file outside (include.path,
// includeIf.*.path: git config --list would show another repository's
// remote URLs or the user's global settings). Env drops GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES
// and every other inherited GIT_* variable.
//
// A repository that holds a project without being its own — a git
// worktree's (the project's .git is a file naming a git directory
// elsewhere) or an enclosing one (the project is a folder of a larger
// repository) — is a Candidate (Discover: resolved paths and a hash of the
// files that lead to them). Open refuses it; OpenConfirmed uses it once the
// user confirmed exactly that Candidate, checking its hash again before
// every run (a rewritten .git file or a moved repository is
// ErrUnconfirmed) and running CheckLayout with the confirmed git and common
// dirs allowed beside the project, nothing further. CommandsConfirmed gives
// commands a confirmed worktree's repository but no repository in an
// enclosing one (ErrEnclosing): a command line cannot be held to a folder.
//
// For commands (Commands), the user's user.name and user.email are carried
// over from their global config as data, so that an auto-allowed commit is
// still theirs. A user-approved command is not this package's business: it
// runs with the user's own git configuration.
//
// The package is a leaf (standard library only). Its only state is the
// user's identity, read once per process; Open walks the git directory
// (bounded, cancelled with its ctx) and runs one git process that ends with
// the call. Everything is safe for concurrent use.
package gitenv
