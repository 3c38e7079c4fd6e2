package permission

import "strings"

// git's rules. Before the subcommand only known-safe global options are
// allowed (-c, -C, --git-dir, --exec-path, -p and the rest can run programs
// or read another repository's config). status, diff, log, show and branch
// take known-safe options only; every other subcommand refuses the options
// that run a program or write a file, in every abbreviation git's
// parse-options accepts (--upload for --upload-pack, --rece for
// --receive-pack). Options that make git look into submodules ask
// (gitSubmoduleArgs). An allowlist entry or session grant that names only
// "git" covers the read-only subcommands alone (gitReadOnly): "always allow
// git" after a git status never runs a git push or git commit unasked.

// gitGlobalSafe are the global options that neither run programs nor point
// git at another repository or config.
var gitGlobalSafe = map[string]bool{
	"--no-pager": true, "-P": true, "--no-replace-objects": true, "--literal-pathspecs": true,
	"--glob-pathspecs": true, "--noglob-pathspecs": true, "--icase-pathspecs": true,
	"--no-optional-locks": true, "--version": true, "-v": true, "--no-lazy-fetch": true, "--no-advice": true,
	"-h": true,
}

// gitArgDanger are options refused anywhere after the subcommand, in any
// abbreviation (even where git has an option of its own that is a prefix:
// "git cat-file --text" is --textconv, "git grep --text" is not, and the
// rules do not tell them apart).
var gitArgDanger = []string{"--output", "--output-directory", "--ext-diff", "--textconv", "--upload-pack",
	"--receive-pack", "--exec", "--open-files-in-pager", "--config", "--template", "--extcmd", "--tool",
	"--run", "--gpg-sign", "--show-signature", "--signed", "--help", "--edit", "--upload-archive",
	"--hook", "--cmd", "--command", "--interactive", "--filters"}

// gitSubDanger are subcommands that run user-configured or given programs.
var gitSubDanger = map[string]string{
	"difftool": "runs a diff tool", "mergetool": "runs a merge tool", "filter-branch": "runs shell code",
	"instaweb": "starts a web server", "daemon": "starts a server", "submodule": "can run commands (foreach)",
	"bisect": "can run commands (bisect run)", "rebase": "can run commands (--exec)", "archive": "can run a remote command",
	"web--browse": "runs a browser", "send-email": "sends mail", "credential": "handles secrets",
	"upload-pack": "serves a repository", "receive-pack": "receives pushes", "shell": "runs a shell",
	"fsmonitor--daemon": "starts a daemon", "help": "can run a pager or a browser", "hook": "runs hooks",
	"maintenance": "runs and schedules tasks", "remote-ext": "runs a command", "remote-fd": "runs a transport",
	"filter-repo": "runs code", "p4": "runs p4", "svn": "runs svn", "cvsimport": "runs cvs", "cvsserver": "starts a server",
	"upload-archive": "serves an archive", "http-backend": "serves a repository", "bugreport": "writes a report",
	"diagnose": "writes an archive",
}

// gitSigning are the subcommands whose -S (tag: -s, -u) signs with a
// program named by the config.
var gitSigning = map[string]string{
	"commit": "S", "merge": "S", "pull": "S", "revert": "S", "cherry-pick": "S", "am": "S",
	"commit-tree": "S", "tag": "su",
}

// gitLogOpts are the known-safe options of git diff, log and show (and
// whatchanged): output formats, limits, pickaxe, diff algorithms. Left
// out: --output, --ext-diff, --textconv, --show-signature (runs gpg).
var gitLogOpts = newOptSet("pusnzaRwbtmcgiEFPWrDNh", "nSGLOUlMCBXI", true, strings.Fields(`
	--oneline --graph --decorate --no-decorate --decorate-refs --decorate-refs-exclude --all --stat --shortstat
	--numstat --name-only --name-status --patch --no-patch --max-count --since --until --after --before --author
	--committer --grep --format --pretty --abbrev-commit --no-abbrev-commit --abbrev --no-abbrev --no-merges
	--merges --min-parents --max-parents --first-parent --reverse --follow --date --color --no-color
	--full-history --simplify-by-decoration --simplify-merges --left-right --left-only --right-only --cherry-pick
	--cherry-mark --cherry --topo-order --date-order --author-date-order --no-walk --do-walk --boundary --source
	--parents --children --relative-date --notes --no-notes --show-notes --branches --tags --remotes --glob
	--exclude --not --regexp-ignore-case --invert-grep --all-match --extended-regexp --fixed-strings
	--basic-regexp --perl-regexp --unified --ignore-all-space --ignore-space-change --ignore-space-at-eol
	--ignore-cr-at-eol --ignore-blank-lines --ignore-matching-lines --word-diff --word-diff-regex --color-words
	--diff-filter --find-renames --find-copies --find-copies-harder --no-renames --raw --summary --dirstat
	--dirstat-by-file --cumulative --full-index --binary --text --no-ext-diff --no-textconv --exit-code --quiet
	--cached --staged --merge-base --minimal --patience --histogram --diff-algorithm --anchored --relative
	--no-relative --src-prefix --dst-prefix --no-prefix --default-prefix --line-prefix --check --compact-summary
	--submodule --ignore-submodules --mailmap --no-mailmap --use-mailmap --no-use-mailmap --encoding
	--expand-tabs --no-expand-tabs --log-size --walk-reflogs --show-linear-break --combined-all-paths
	--remerge-diff --cc --dd --root --break-rewrites --irreversible-delete --pickaxe-all --pickaxe-regex
	--skip --ancestry-path --single-worktree --show-pulls --sparse --dense --ignore-missing --count
	--patch-with-stat --patch-with-raw --indent-heuristic --no-indent-heuristic --function-context
	--color-moved --no-color-moved --color-moved-ws --no-color-moved-ws --ws-error-highlight
	--ita-invisible-in-index --ita-visible-in-index --stat-width --stat-name-width --stat-count
	--stat-graph-width --inter-hunk-context --output-indicator-new --output-indicator-old
	--output-indicator-context --no-index --base --ours --theirs --diff-merges --no-diff-merges
	--exclude-first-parent-only --first-parent --in-commit-order --reflog --alternate-refs --bisect
	--stdin --no-standard-notes --standard-notes --graph --no-graph --show-origin --clear-decorations
	--max-age --min-age --until --no-min-parents --no-max-parents --no-notes --pretty --rotate-to --skip-to
	--find-object --default --no-walk --unpacked --object-names`)...)

var gitStatusOpts = newOptSet("sbvz", "u", false, strings.Fields(`--short --branch --porcelain --long --verbose
	--untracked-files --ignore-submodules --ignored --column --no-column --ahead-behind --no-ahead-behind
	--renames --no-renames --find-renames --show-stash --null --no-optional-locks`)...)

// gitBranchOpts list branches; -d, -D, -m, -M, -c, -C, -f, -u, -t and
// --edit-description (which runs an editor) are not among them.
var gitBranchOpts = newOptSet("arlvi", "", false, strings.Fields(`--list --all --remotes --verbose --contains
	--no-contains --merged --no-merged --points-at --sort --format --color --no-color --column --no-column
	--show-current --abbrev --no-abbrev --omit-empty --ignore-case --quiet`)...)

// splitGit returns the index of git's subcommand in args (-1 if none) or
// why a global option before it is refused.
func splitGit(args []string) (int, string) {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			return i, ""
		}
		if !gitGlobalSafe[a] {
			return -1, "git " + longName(a) + " before the subcommand can run programs or read another repository's config"
		}
	}
	return -1, ""
}

func gitArgs(args []string) string {
	sub, why := splitGit(args)
	if why != "" || sub < 0 {
		return why
	}
	name := args[sub]
	rest := args[sub+1:]
	if why, ok := gitSubDanger[name]; ok || strings.HasPrefix(name, "credential") {
		return "git " + name + " " + why
	}
	if why := gitSubmoduleArgs(name, rest); why != "" {
		return why
	}
	switch name {
	case "log", "show", "diff", "whatchanged":
		return gitLogOpts.check("git "+name, rest)
	case "status":
		return gitStatusOpts.check("git status", rest)
	case "branch":
		return gitBranchArgs(rest)
	}
	if r := refuseOpts(rest, "git", "can run a program or write a file", nil, gitArgDanger...); r != "" {
		return r
	}
	for _, a := range rest {
		if len(a) < 2 || a[0] != '-' || a[1] == '-' {
			continue
		}
		switch name {
		case "grep":
			if strings.IndexByte(a, 'O') >= 0 {
				return "git grep -O opens a pager"
			}
		case "clone", "fetch", "pull", "ls-remote":
			if strings.IndexByte(a[1:], 'u') >= 0 || (name == "clone" && strings.IndexByte(a[1:], 'c') >= 0) {
				return "git " + name + " -u or -c runs a program or sets config"
			}
		}
		if letters, ok := gitSigning[name]; ok && strings.ContainsAny(a[1:], letters) {
			return "git " + name + " -" + letters + " signs with a program the config names"
		}
	}
	if name == "config" && !gitConfigReadOnly(rest) {
		return "git config writes configuration that can make git run programs"
	}
	return ""
}

// gitSubmoduleArgs refuses what makes git look into submodules, against
// the inert settings (diff.ignoreSubmodules=all, diff.submodule=short): a
// git run inside a submodule reads its own config (a clean filter), and a
// submodule's .git file can name another repository whose commits
// --submodule=log would show. So --recurse-submodules, --submodule other
// than short, --ignore-submodules other than all, describe --dirty or
// --broken, and diff-files or diff-index (which ignore
// diff.ignoreSubmodules) without --ignore-submodules (or diff-index
// --cached) ask, in every abbreviation.
func gitSubmoduleArgs(name string, rest []string) string {
	ignoreAll := false
	for _, a := range rest {
		if !strings.HasPrefix(a, "--") {
			continue
		}
		_, value, _ := strings.Cut(a, "=")
		switch {
		case abbreviates(a, "--recurse-submodules", nil):
			return "git --recurse-submodules runs git in submodules"
		case abbreviates(a, "--submodule", nil) && a != "--submodule=short":
			return "git " + a + " shows submodules' commits (another repository's, through a .git file)"
		case abbreviates(a, "--ignore-submodules", nil):
			if value != "" && value != "all" {
				return "git " + a + " runs git in submodules"
			}
			ignoreAll = ignoreAll || longName(a) == "--ignore-submodules"
		case name == "diff-index" && a == "--cached":
			ignoreAll = true
		}
	}
	switch name {
	case "describe":
		return refuseOpts(rest, "git describe", "runs git in submodules", nil, "--dirty", "--broken")
	case "diff-files", "diff-index":
		if !ignoreAll {
			return "git " + name + " without --ignore-submodules runs git in submodules"
		}
	}
	return ""
}

// gitBranchArgs allows listing only: known-safe options, and operands only
// as patterns or commits of a listing option (a bare operand creates a
// branch).
func gitBranchArgs(rest []string) string {
	if r := gitBranchOpts.check("git branch", rest); r != "" {
		return r
	}
	listing := false
	operand := false
	for _, a := range rest {
		switch longName(a) {
		case "--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "-a", "-r", "--all", "--remotes":
			listing = true
		}
		if !strings.HasPrefix(a, "-") {
			operand = true
		}
	}
	if operand && !listing {
		return "git branch with a name creates a branch"
	}
	return ""
}

// gitConfigReadOnly reports whether a git config invocation only reads: it
// names a read action and no write or edit action.
func gitConfigReadOnly(rest []string) bool {
	read := false
	for i, a := range rest {
		switch {
		case i == 0 && (a == "get" || a == "list"):
			read = true
		case a == "--get" || a == "--get-all" || a == "--get-regexp" || a == "--get-urlmatch" || a == "--list" || a == "-l" || a == "--get-color" || a == "--get-colorbool":
			read = true
		case a == "-e" || strings.HasPrefix(a, "--") && (abbreviates(a, "--edit", nil) || abbreviates(a, "--add", nil) ||
			abbreviates(a, "--unset", nil) || abbreviates(a, "--unset-all", nil) || abbreviates(a, "--replace-all", nil) ||
			abbreviates(a, "--rename-section", nil) || abbreviates(a, "--remove-section", nil)):
			return false
		case i == 0 && (a == "set" || a == "unset" || a == "edit" || a == "rename-section" || a == "remove-section"):
			return false
		}
	}
	return read
}

// gitReadOnlySubs are the subcommands an entry or grant naming only "git"
// covers; the value, when set, further checks the arguments.
var gitReadOnlySubs = map[string]func(rest []string) bool{
	"status": nil, "diff": nil, "log": nil, "show": nil, "branch": nil, "whatchanged": nil, "blame": nil,
	"annotate": nil, "shortlog": nil, "describe": nil, "rev-parse": nil, "rev-list": nil, "ls-files": nil,
	"ls-tree": nil, "cat-file": nil, "grep": nil, "show-ref": nil, "show-branch": nil, "merge-base": nil,
	"name-rev": nil, "for-each-ref": nil, "count-objects": nil, "version": nil, "var": nil,
	"check-ignore": nil, "check-attr": nil, "diff-tree": nil, "diff-files": nil, "diff-index": nil,
	"range-diff": nil, "cherry": nil, "config": nil,
	"reflog": func(rest []string) bool {
		return len(rest) == 0 || rest[0] == "show" || strings.HasPrefix(rest[0], "-")
	},
	"stash":  func(rest []string) bool { return len(rest) > 0 && (rest[0] == "list" || rest[0] == "show") },
	"remote": func(rest []string) bool { return len(rest) == 0 || rest[0] == "-v" || rest[0] == "get-url" },
	"tag": func(rest []string) bool {
		for _, a := range rest {
			if a == "-l" || a == "--list" {
				return true
			}
		}
		return len(rest) == 0
	},
	"worktree": func(rest []string) bool { return len(rest) > 0 && rest[0] == "list" },
}

// gitReadOnly reports whether a git command (the arguments after "git")
// only reads the repository.
func gitReadOnly(args []string) bool {
	sub, why := splitGit(args)
	if why != "" || sub < 0 {
		return sub < 0 && why == "" // "git --version"
	}
	check, ok := gitReadOnlySubs[args[sub]]
	return ok && (check == nil || check(args[sub+1:]))
}
