package permission

import "strings"

// neverAutoExecs are executables that are never auto-allowed, whatever
// their arguments: they run other commands (wrappers, shells, eval-like
// builtins, interactive pagers and editors with shell escapes) or change
// privileges. Allowlist entries and session grants do not cover them.
var neverAutoExecs = map[string]bool{
	// wrappers that run their arguments as a command
	"xargs": true, "env": true, "nohup": true, "timeout": true, "nice": true, "ionice": true,
	"exec": true, "command": true, "builtin": true, "eval": true, "source": true, ".": true,
	"time": true, "stdbuf": true, "setsid": true, "chroot": true, "unshare": true, "nsenter": true,
	"watch": true, "strace": true, "ltrace": true, "gdb": true, "flock": true, "parallel": true,
	"script": true, "busybox": true, "chrt": true, "taskset": true, "prlimit": true, "run-parts": true,
	"trap": true, "enable": true, "fc": true, "mapfile": true, "readarray": true, "coproc": true,
	"tmux": true, "screen": true, "systemd-run": true, "faketime": true, "firejail": true,
	"bwrap": true, "sandbox-exec": true, "caffeinate": true, "expect": true,
	// privilege
	"sudo": true, "doas": true, "su": true, "pkexec": true, "runuser": true, "sudoedit": true,
	// shells
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "fish": true,
	"csh": true, "tcsh": true, "ash": true, "pwsh": true, "powershell": true, "cmd": true,
	// pagers and editors (shell escapes with '!', preprocessors)
	"less": true, "more": true, "most": true, "man": true, "pg": true, "vi": true, "vim": true,
	"nvim": true, "view": true, "ex": true, "ed": true, "emacs": true, "nano": true, "pico": true,
}

func neverAuto(word string) bool { return neverAutoExecs[exeName(word)] }

// dangerousArgs returns why the words of a simple command must not be
// auto-allowed, or "" when they may be. The rules follow (and extend) OpenAI
// Codex's is_safe_command: options that execute another program or write
// files turn an otherwise read-only command into an arbitrary one.
func dangerousArgs(words []string) string {
	name := exeName(words[0])
	if neverAutoExecs[name] {
		return name + " runs other commands or changes privileges; it is never auto-allowed"
	}
	args := words[1:]
	if rule, ok := argRules[name]; ok {
		return rule(args)
	}
	switch {
	case strings.HasPrefix(name, "python"), strings.HasPrefix(name, "pypy"):
		return shortFlag(args, "python", 'c', "executes inline code")
	case name == "awk" || name == "gawk" || name == "mawk" || name == "nawk":
		return awkArgs(args)
	}
	return ""
}

// argRules are the per-executable argument rules, keyed by exeName.
var argRules = map[string]func(args []string) string{
	"find":   findArgs,
	"fd":     optArgs("fd", "executes commands", "-x", "--exec", "-X", "--exec-batch"),
	"fdfind": optArgs("fd", "executes commands", "-x", "--exec", "-X", "--exec-batch"),
	"rg": optArgs("rg", "runs a preprocessor or decompressor", "--pre", "--pre-glob", "--hostname-bin",
		"-z", "--search-zip"),
	"sed":  sedArgs,
	"gsed": sedArgs,
	"git":  gitArgs,
	"npx":  optArgs("npx", "runs a shell command", "-c", "--call", "--script-shell"),
	"npm":  optArgs("npm", "runs a shell command", "-c", "--call", "--script-shell"),
	"pnpm": optArgs("pnpm", "runs a shell command", "-c", "--call", "--shell-mode", "--script-shell"),
	"yarn": optArgs("yarn", "runs a shell command", "--script-shell"),
	"bunx": optArgs("bunx", "runs a shell command", "-c", "--call"),
	"tar":  tarArgs,
	"sort": optArgs("sort", "writes a file or runs a compressor", "-o", "--output", "--compress-program"),
	"perl": optArgs("perl", "executes inline code", "-e", "-E", "-n", "-p", "-i", "-x", "-M", "-m"),
	"ruby": optArgs("ruby", "executes inline code", "-e", "-n", "-p", "-i", "-x", "-r"),
	"node": optArgs("node", "executes inline code", "-e", "--eval", "-p", "--print", "-r", "--require",
		"--import", "--loader", "--experimental-loader", "-i", "--interactive"),
	"deno":  subcmdArgs("deno", "executes inline code", "eval", "repl"),
	"bun":   optArgs("bun", "executes inline code", "-e", "--eval", "-p", "--print"),
	"php":   optArgs("php", "executes inline code", "-r", "-R", "-B", "-E", "-a", "-F"),
	"lua":   optArgs("lua", "executes inline code", "-e", "-l", "-i"),
	"rsync": optArgs("rsync", "runs a remote shell", "-e", "--rsh", "--rsync-path"),
	"ssh":   sshArgs,
	"scp":   sshArgs,
	"sftp":  sshArgs,
	"zip":   optArgs("zip", "runs a test command", "-TT", "--unzip-command"),
	"dd":    ddArgs,
	"curl":  optArgs("curl", "writes files or reads a config", "-o", "--output", "-O", "--remote-name", "--remote-name-all", "-K", "--config", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--libcurl", "--output-dir", "--etag-save", "--hsts", "--alt-svc"),
	"wget":  optArgs("wget", "writes files or runs commands", "-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-e", "--execute", "--use-askpass"),
	"make":  optArgs("make", "evaluates arbitrary make code", "--eval", "-E"),
	"diff":  optArgs("diff", "runs a program", "--diff-program"),
}

// optArgs builds a rule that refuses the listed options, in their separate
// ("-o x"), attached ("--output=x") and, for single-letter options, clustered
// or glued ("-xo", "-ofile") forms.
func optArgs(exe, what string, opts ...string) func([]string) string {
	return func(args []string) string {
		for _, a := range args {
			if a == "--" {
				return ""
			}
			for _, o := range opts {
				if hasOpt(a, o) {
					return exe + " " + o + " " + what
				}
			}
		}
		return ""
	}
}

// hasOpt reports whether argument a is option o in any spelling.
func hasOpt(a, o string) bool {
	if a == o {
		return true
	}
	if strings.HasPrefix(o, "--") {
		return strings.HasPrefix(a, o+"=")
	}
	if len(o) == 2 && o[0] == '-' && len(a) >= 2 && a[0] == '-' && a[1] != '-' {
		// A short option: anywhere in a cluster (-xvo) or with its value glued.
		return strings.IndexByte(a[1:], o[1]) >= 0
	}
	if len(o) > 2 && o[0] == '-' && o[1] != '-' {
		// A multi-letter single-dash option (-TT, -exec): exact or glued value.
		return strings.HasPrefix(a, o)
	}
	return false
}

// shortFlag refuses a short option letter anywhere in a cluster.
func shortFlag(args []string, exe string, letter byte, what string) string {
	for _, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			// Options after the script name belong to the script.
			return ""
		}
		if !strings.HasPrefix(a, "--") && strings.IndexByte(a[1:], letter) >= 0 {
			return exe + " -" + string(letter) + " " + what
		}
	}
	return ""
}

func subcmdArgs(exe, what string, subs ...string) func([]string) string {
	return func(args []string) string {
		for _, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			for _, s := range subs {
				if a == s {
					return exe + " " + s + " " + what
				}
			}
			return ""
		}
		return ""
	}
}

func findArgs(args []string) string {
	for _, a := range args {
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir":
			return "find " + a + " executes commands"
		case "-delete":
			return "find -delete removes files"
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			return "find " + a + " writes a file"
		}
	}
	return ""
}

func tarArgs(args []string) string {
	danger := optArgs("tar", "runs a program", "--to-command", "--checkpoint-action", "--use-compress-program",
		"--info-script", "--new-volume-script", "--rmt-command", "--rsh-command", "-I", "-F")
	if r := danger(args); r != "" {
		return r
	}
	// Old-style first argument without a dash: "tar xIf prog a.tar".
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && strings.ContainsAny(args[0], "IF") {
		return "tar I/F runs a program"
	}
	// An archive named host:path is opened through rsh/ssh.
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && strings.Contains(a, ":") {
			return "tar with a host:path archive runs a remote shell"
		}
	}
	return ""
}

func sshArgs(args []string) string {
	for i, a := range args {
		opt := ""
		switch {
		case a == "-o" && i+1 < len(args):
			opt = args[i+1]
		case strings.HasPrefix(a, "-o"):
			opt = a[2:]
		case a == "-F" || strings.HasPrefix(a, "-F"):
			return "ssh -F reads a config that can run commands"
		}
		l := strings.ToLower(opt)
		if strings.Contains(l, "proxycommand") || strings.Contains(l, "localcommand") || strings.Contains(l, "knownhostscommand") || strings.Contains(l, "include") {
			return "ssh -o " + opt + " runs a local command"
		}
	}
	return ""
}

func ddArgs(args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "of=") {
			return "dd of= writes a file"
		}
	}
	return ""
}

// awkArgs refuses program files and extension loading, and any argument
// (the program text, -e/--source text, or -v values) that mentions
// system(), getline, a pipe or an output redirection.
func awkArgs(args []string) string {
	for _, a := range args {
		switch {
		case a == "--":
			continue
		case strings.HasPrefix(a, "-f"), strings.HasPrefix(a, "--file"), strings.HasPrefix(a, "-i"),
			strings.HasPrefix(a, "--include"), strings.HasPrefix(a, "-l"), strings.HasPrefix(a, "--load"),
			strings.HasPrefix(a, "-E"), strings.HasPrefix(a, "--exec"):
			return "awk " + a + " loads program code from a file"
		}
		if strings.Contains(a, "system") || strings.Contains(a, "getline") || strings.ContainsAny(a, "|>@") {
			return "awk program uses system(), getline, pipes or output redirection"
		}
	}
	return ""
}

// gitGlobalDanger are git's global options (before the subcommand) that
// execute programs, read another repository's config or page output.
var gitGlobalDanger = []string{"-c", "--config-env", "--exec-path", "-p", "--paginate", "-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds"}

// gitArgDanger are options refused anywhere in a git command line.
var gitArgDanger = []string{"--output", "--ext-diff", "--textconv", "--upload-pack", "--receive-pack", "--exec",
	"--open-files-in-pager", "--config", "--template", "--extcmd", "--tool", "--run"}

// gitSubDanger are subcommands that run user-configured or given programs.
var gitSubDanger = map[string]string{
	"difftool": "runs a diff tool", "mergetool": "runs a merge tool", "filter-branch": "runs shell code",
	"instaweb": "starts a web server", "daemon": "starts a server", "submodule": "can run commands (foreach)",
	"bisect": "can run commands (bisect run)", "rebase": "can run commands (--exec)", "archive": "can run a remote command",
	"web--browse": "runs a browser", "send-email": "sends mail", "credential": "handles secrets",
	"upload-pack": "serves a repository", "receive-pack": "receives pushes", "shell": "runs a shell",
	"fsmonitor--daemon": "starts a daemon",
}

func gitArgs(args []string) string {
	sub := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			sub = i
			break
		}
		for _, o := range gitGlobalDanger {
			if a == o || strings.HasPrefix(a, o+"=") || (len(o) == 2 && strings.HasPrefix(a, o) && len(a) > 2 && a[1] != '-') {
				return "git " + o + " can run programs or read another repository's config"
			}
		}
	}
	if sub < 0 {
		return ""
	}
	name := args[sub]
	rest := args[sub+1:]
	if why, ok := gitSubDanger[name]; ok {
		return "git " + name + " " + why
	}
	for _, a := range rest {
		if a == "--" {
			break
		}
		for _, o := range gitArgDanger {
			if a == o || strings.HasPrefix(a, o+"=") {
				return "git " + o + " can run a program or write a file"
			}
		}
		switch name {
		case "grep":
			if a == "-O" || strings.HasPrefix(a, "-O") {
				return "git grep -O opens a pager"
			}
		case "config":
			// Writing git config can install a pager, fsmonitor or hook
			// command that a later git call runs.
		case "clone", "fetch", "pull", "ls-remote":
			if a == "-u" || strings.HasPrefix(a, "-u") {
				return "git " + name + " -u runs a program"
			}
		}
	}
	if name == "config" && !gitConfigReadOnly(rest) {
		return "git config writes configuration that can make git run programs"
	}
	return ""
}

// gitConfigReadOnly reports whether a git config invocation only reads.
func gitConfigReadOnly(rest []string) bool {
	if len(rest) == 0 {
		return false
	}
	switch rest[0] {
	case "get", "list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l":
		return true
	}
	return false
}
