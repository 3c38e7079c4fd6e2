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
// files turn an otherwise read-only command into an arbitrary one. See
// options.go for how options are matched.
func dangerousArgs(words []string) string {
	name := exeName(words[0])
	if neverAutoExecs[name] {
		return name + " runs other commands or changes privileges; it is never auto-allowed"
	}
	args := words[1:]
	if rule, ok := argRules[name]; ok {
		return rule(args)
	}
	if flags, ok := evalFlags[name]; ok {
		return refuseOpts(args, name, "runs code given on the command line; it is never auto-allowed", nil, flags...)
	}
	switch {
	case strings.HasPrefix(name, "python"), strings.HasPrefix(name, "pypy"):
		return interpArgs("python", pythonOpts)(args)
	case strings.HasPrefix(name, "node") && name != "nodemon":
		return interpArgs("node", nodeOpts)(args)
	case strings.HasPrefix(name, "perl"):
		return interpArgs("perl", perlOpts)(args)
	case strings.HasPrefix(name, "ruby"):
		return interpArgs("ruby", rubyOpts)(args)
	case strings.HasPrefix(name, "php"):
		return interpArgs("php", phpOpts)(args)
	case name == "awk" || name == "gawk" || name == "mawk" || name == "nawk":
		return awkArgs(args)
	}
	return ""
}

// argRules are the per-executable argument rules, keyed by exeName. Set
// in init: the runners' rules call dangerousArgs, which reads the map.
var argRules map[string]func(args []string) string

func init() {
	argRules = map[string]func(args []string) string{
		"ls":     lsOpts.rule("ls"),
		"cat":    catOpts.rule("cat"),
		"head":   headOpts.rule("head"),
		"tail":   tailOpts.rule("tail"),
		"wc":     wcOpts.rule("wc"),
		"grep":   grepOpts.rule("grep"),
		"egrep":  grepOpts.rule("egrep"),
		"fgrep":  grepOpts.rule("fgrep"),
		"rg":     rgOpts.rule("rg"),
		"find":   findArgs,
		"gfind":  findArgs,
		"fd":     optArgs("fd", "executes commands", "-x", "--exec", "-X", "--exec-batch"),
		"fdfind": optArgs("fd", "executes commands", "-x", "--exec", "-X", "--exec-batch"),
		"sed":    sedArgs,
		"gsed":   sedArgs,
		"git":    gitArgs,
		"npx":    func(args []string) string { return npmArgs("npx", append([]string{"exec"}, args...)) },
		"bunx":   func(args []string) string { return npmArgs("bunx", append([]string{"x"}, args...)) },
		"npm":    func(args []string) string { return npmArgs("npm", args) },
		"pnpm":   func(args []string) string { return npmArgs("pnpm", args) },
		"pnpx":   func(args []string) string { return npmArgs("pnpx", append([]string{"dlx"}, args...)) },
		"yarn":   func(args []string) string { return npmArgs("yarn", args) },
		"uvx":    func(args []string) string { return innerCommand("uvx", args) },
		"uv":     runnerArgs("uv", "run", "tool"),
		"poetry": runnerArgs("poetry", "run"),
		"pipenv": runnerArgs("pipenv", "run"),
		"pdm":    runnerArgs("pdm", "run"),
		"hatch":  runnerArgs("hatch", "run"),
		"pipx":   runnerArgs("pipx", "run"),
		"tar":    tarArgs,
		"gtar":   tarArgs,
		"bsdtar": tarArgs,
		"sort":   optArgs("sort", "writes a file or runs a compressor", "-o", "--output", "--compress-program"),
		"deno":   denoArgs,
		"rsync": optArgs("rsync", "runs a remote shell or writes a log or batch file", "-e", "--rsh", "--rsync-path",
			"--log-file", "--write-batch", "--only-write-batch", "--read-batch", "--config", "--daemon", "-M", "--remote-option"),
		"ssh":   sshArgs("ssh"),
		"scp":   sshArgs("scp"),
		"sftp":  sshArgs("sftp"),
		"zip":   optArgs("zip", "runs a test command", "-TT", "--unzip-command"),
		"unzip": unzipArgs,
		"dd":    ddArgs,
		"curl":  curlArgs,
		"wget": wgetArgs(optArgs("wget", "writes files, reads or sends local files, or runs commands", "-O", "--output-document",
			"-o", "--output-file", "-a", "--append-output", "-e", "--execute", "--use-askpass", "-P", "--directory-prefix",
			"--config", "--post-file", "--body-file", "--load-cookies", "--save-cookies", "--warc-file", "--rejected-log",
			"-r", "--recursive", "-m", "--mirror", "-x", "--force-directories", "-nH", "--no-host-directories", "--cut-dirs",
			"-i", "--input-file")),
		"make":   makeArgs,
		"gmake":  makeArgs,
		"diff":   optArgs("diff", "runs a program", "--diff-program"),
		"sdiff":  optArgs("sdiff", "runs a program or writes a file", "--diff-program", "-o", "--output"),
		"go":     goArgs,
		"cargo":  cargoArgs,
		"docker": dockerArgs("docker"),
		"podman": dockerArgs("podman"),
	}
}

func tarArgs(args []string) string {
	if r := refuseOpts(args, "tar", "runs a program", nil, "--to-command", "--checkpoint-action",
		"--use-compress-program", "--info-script", "--new-volume-script", "--rmt-command", "--rsh-command", "-I", "-F"); r != "" {
		return r
	}
	if r := refuseOpts(args, "tar", "writes files", nil, "-x", "--extract", "--get", "-c", "--create", "-r", "--append",
		"-u", "--update", "-A", "--catenate", "--concatenate", "--delete", "-g", "--listed-incremental",
		"--index-file", "--volno-file"); r != "" {
		return r
	}
	// Old-style first argument without a dash: "tar xIf prog a.tar".
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && strings.ContainsAny(args[0], "IFxcruAg") {
		return "tar " + args[0] + " runs a program or writes files"
	}
	// An archive named host:path is opened through rsh/ssh.
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && strings.Contains(a, ":") {
			return "tar with a host:path archive runs a remote shell"
		}
	}
	return ""
}

// unzipArgs allows the modes that only list, test or print to stdout
// (-l, -v, -t, -Z, -p, -c, -z); extracting writes files (.git/hooks too).
func unzipArgs(args []string) string {
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], "lvtZpcz") {
			return ""
		}
	}
	return "unzip extracts (writes) files"
}

// sshDanger are the ssh_config options (for -o) that run local programs or
// load code.
var sshDanger = []string{"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "include",
	"pkcs11provider", "securitykeyprovider", "match", "proxyusefdpass"}

// sshArgs refuses -F (a config that can run commands), -o with an option
// that runs a local program, -I (a PKCS#11 library), -E (a log file), -S
// (a control socket; scp and sftp: a program to run) and sftp's -D. A
// cluster is read letter by letter up to the first letter that takes a
// value (the rest of the word, or the next word).
func sshArgs(exe string) func([]string) string {
	danger := "FIES"
	if exe == "sftp" {
		danger += "D"
	}
	const valued = "bcDeEFiIJlLmOopPQRSwW"
	return func(args []string) string {
		for i, a := range args {
			if len(a) < 2 || a[0] != '-' || a[1] == '-' {
				continue
			}
			for j := 1; j < len(a); j++ {
				c := a[j]
				if strings.IndexByte(danger, c) >= 0 {
					return exe + " -" + string(c) + " reads a config, loads a library, writes a log or runs a program"
				}
				if c == 'o' {
					opt := a[j+1:]
					if opt == "" && i+1 < len(args) {
						opt = args[i+1]
					}
					l := strings.ToLower(opt)
					for _, d := range sshDanger {
						if strings.Contains(l, d) {
							return exe + " -o " + opt + " runs a local command"
						}
					}
				}
				if strings.IndexByte(valued, c) >= 0 {
					break
				}
			}
		}
		return ""
	}
}

func ddArgs(args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "of=") {
			return "dd of= writes a file"
		}
	}
	return ""
}

// curlArgs refuses the options that write files, read a config, load an
// engine or talk to a local socket, and sending a local file (@file or
// <file values: -d @f, -F x=@f, -H @f, -T f).
func curlArgs(args []string) string {
	if r := refuseOpts(args, "curl", "writes files, reads a config or sends a local file", nil, "-o", "--output",
		"-O", "--remote-name", "--remote-name-all", "-K", "--config", "-D", "--dump-header", "-c", "--cookie-jar",
		"--trace", "--trace-ascii", "--libcurl", "--output-dir", "--etag-save", "--hsts", "--alt-svc", "--stderr",
		"-T", "--upload-file", "--netrc-file", "--engine", "--unix-socket", "--abstract-unix-socket",
		"--ssl-sessions", "--create-dirs"); r != "" {
		return r
	}
	for _, a := range args {
		v := a
		switch {
		case strings.HasPrefix(a, "--"):
			if i := strings.IndexByte(a, '='); i >= 0 {
				v = a[i+1:]
			}
		case strings.HasPrefix(a, "-") && len(a) > 2:
			v = a[2:]
		}
		if strings.HasPrefix(v, "@") || strings.Contains(v, "=@") || strings.Contains(v, "=<") {
			return "curl " + a + " sends a local file"
		}
		if strings.Contains(a, "%output{") || strings.Contains(a, "%{stderr}") {
			return "curl --write-out %output{} writes a file"
		}
	}
	return ""
}

// wgetArgs lets wget write the download to stdout (-O-, -qO -,
// --output-document=-) and applies rule to the rest.
func wgetArgs(rule func([]string) string) func([]string) string {
	return func(args []string) string {
		rest := make([]string, 0, len(args))
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "--output-document=-":
				continue
			case len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.HasSuffix(a, "O-") && strings.IndexByte(a, 'O') == len(a)-2:
				a = a[:len(a)-2] // -qO- is -q and stdout
			case len(a) >= 2 && a[0] == '-' && a[1] != '-' && strings.HasSuffix(a, "O") && strings.IndexByte(a, 'O') == len(a)-1 && i+1 < len(args) && args[i+1] == "-":
				a = a[:len(a)-1]
				i++
			case a == "--output-document" && i+1 < len(args) && args[i+1] == "-":
				i++
				continue
			}
			if a != "-" && a != "" {
				rest = append(rest, a)
			}
		}
		return rule(rest)
	}
}

// makeArgs refuses make code and makefiles given on the command line,
// another directory's makefile, and variable overrides (SHELL=..., CC=...
// run what they name).
func makeArgs(args []string) string {
	if r := refuseOpts(args, "make", "evaluates make code or reads another makefile", nil, "--eval", "-E",
		"-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir"); r != "" {
		return r
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && strings.Contains(a, "=") {
			return "make " + a + " overrides a make variable"
		}
	}
	return ""
}

// awkOpts are awk's known-safe options; -f, -E, -i, -l (program code from
// files), -d, -o, -p (write files) and -W are not among them.
var awkOpts = newOptSet("bcCDghLMnNOPrsStV", "Fve", false, "--field-separator", "--assign", "--source",
	"--characters-as-bytes", "--traditional", "--copyright", "--gen-pot", "--help", "--lint", "--bignum",
	"--non-decimal-data", "--use-lc-numeric", "--optimize", "--posix", "--re-interval", "--no-optimize",
	"--sandbox", "--lint-old", "--version")

// awkArgs allows awk's known-safe options, and refuses any argument (the
// program text, -e/--source text, or -v values) that mentions system(),
// getline, a pipe or an output redirection.
func awkArgs(args []string) string {
	if r := awkOpts.check("awk", args); r != "" {
		return r
	}
	for _, a := range args {
		if strings.Contains(a, "system") || strings.Contains(a, "getline") || strings.ContainsAny(a, "|>@") {
			return "awk program uses system(), getline, pipes or output redirection"
		}
	}
	return ""
}
