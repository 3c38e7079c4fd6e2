package permission

import "strings"

// Package managers, toolchains and the runners that start other commands
// (npx, npm exec, uv run, ...): their own options that run a shell or load
// config are refused in every abbreviation, and the command they start is
// checked with the same rules as if it were typed (npx node -e is node -e).

// npmDanger are npm's, pnpm's and yarn's options that run a shell command,
// pass options to node, or read a config that can.
var npmDanger = []string{"-c", "--call", "--script-shell", "--shell", "--shell-mode", "--node-options",
	"--userconfig", "--globalconfig", "--init-module", "--editor", "--browser", "--viewer", "--git",
	"--use-yarnrc", "--config", "--onload-script", "--node-arg"}

// npmExact are npm options that are prefixes of a refused one but options
// of their own (nopt matches a full name first).
var npmExact = map[string]bool{"--global": true}

// npmScripts are npm's subcommands that run a package script; up to "--"
// (after which the words go to the script) npm reads every option as
// config, so only known-safe options are allowed there.
var npmScripts = set("test", "t", "tst", "run", "run-script", "rum", "urn", "start", "restart", "stop")

var npmRunOpts = newOptSet("sqdw", "", false, "--silent", "--if-present", "--ignore-scripts", "--workspaces",
	"--ws", "--workspace", "--include-workspace-root", "--loglevel", "--quiet", "--color", "--no-color",
	"--verbose", "--foreground-scripts", "--json", "--parseable", "--no-audit", "--no-fund", "--no-update-notifier")

// beforeDashDash returns the words before the first "--".
func beforeDashDash(args []string) []string {
	for i, a := range args {
		if a == "--" {
			return args[:i]
		}
	}
	return args
}

// npmRunners are the subcommands that start the command that follows.
var npmRunners = map[string]bool{"exec": true, "x": true, "dlx": true, "node": true}

func npmArgs(exe string, args []string) string {
	norm := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--config."):
			return exe + " " + longName(a) + " sets config that can run commands"
		case strings.HasPrefix(a, "--"):
			n := longName(a)
			a = strings.ReplaceAll(n, "_", "-") + a[len(n):]
		case len(a) > 2 && a[0] == '-' && a[1] != '-' && (a[1] < '0' || a[1] > '9'):
			// nopt reads -script-shell as --script-shell too.
			norm = append(norm, "-"+a)
		}
		norm = append(norm, a)
	}
	if r := refuseOpts(norm, exe, "runs a shell command or reads a config that can", npmExact, npmDanger...); r != "" {
		return r
	}
	for i, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		switch {
		case a == "explore" || a == "edit":
			return exe + " " + a + " runs a shell or an editor"
		case exe == "npm" && npmScripts[a]:
			return npmRunOpts.check("npm "+a, beforeDashDash(args))
		case npmRunners[a]:
			inner := args[i+1:]
			if a == "node" {
				inner = append([]string{"node"}, inner...)
			}
			return innerCommand(exe+" "+a, inner)
		}
		return ""
	}
	return ""
}

// runnerExecs are the executables whose rules call innerCommand; an inner
// command naming one is refused, which keeps the check one level deep.
var runnerExecs = set("npx", "bunx", "npm", "pnpm", "pnpx", "yarn", "bun", "uvx", "uv", "poetry", "pipenv", "pdm", "hatch", "pipx")

// maxInnerWords bounds the words of a runner's inner command that are
// checked (every word is tried as the command).
const maxInnerWords = 256

// innerCommand checks the command a runner starts. Which word is the
// command depends on the runner's options and their values, so every word
// that could start it is tried.
func innerCommand(runner string, args []string) string {
	if len(args) > maxInnerWords {
		return runner + " starts a command too long to check"
	}
	for _, a := range args {
		if runnerExecs[exeName(a)] {
			return runner + " starts another runner (" + a + "); nested runners are never auto-allowed"
		}
	}
	for i, a := range args {
		if strings.HasPrefix(a, "-") || a == "" {
			continue
		}
		if r := dangerousArgs(args[i:]); r != "" {
			return runner + " starts a command: " + r
		}
	}
	return ""
}

// runnerArgs is the rule of a tool whose listed subcommands start the
// command that follows (uv run, poetry run).
func runnerArgs(exe string, subs ...string) func([]string) string {
	return func(args []string) string {
		for i, a := range args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			for _, s := range subs {
				if a == s {
					return innerCommand(exe+" "+a, args[i+1:])
				}
			}
			return ""
		}
		return ""
	}
}

// goFlag returns the name of a Go-style flag argument ("-run=x" and
// "--run" → "run"), or "" for a word that is not a flag.
func goFlag(a string) string {
	if len(a) < 2 || a[0] != '-' || a == "--" {
		return ""
	}
	n := strings.TrimPrefix(a[1:], "-")
	if i := strings.IndexByte(n, '='); i >= 0 {
		n = n[:i]
	}
	return n
}

// goSub returns go's subcommand and the words after it, skipping the
// flags before it (-C dir takes a value).
func goSub(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		n := goFlag(args[i])
		switch {
		case n == "C" && !strings.Contains(args[i], "="):
			i++
		case n == "":
			return args[i], args[i+1:]
		}
	}
	return "", nil
}

// goDanger are go flags that run a program or write a file anywhere.
var goDanger = map[string]string{"exec": "runs the test binary through a program", "toolexec": "runs the toolchain through a program",
	"vettool": "runs a program as vet", "o": "writes the binary to a path", "overlay": "replaces source files",
	"modfile": "reads another go.mod", "pgo": "reads a profile", "coverprofile": "writes a file",
	"cpuprofile": "writes a file", "memprofile": "writes a file", "blockprofile": "writes a file",
	"mutexprofile": "writes a file", "trace": "writes a file", "outputdir": "writes files", "c": "writes the test binary",
	"ldflags": "can name an external linker to run (-extld)", "gccgoflags": "passes flags to gccgo", "pkgdir": "writes packages"}

// goTestSafe are go test's known-safe flags (up to -args, after which the
// words go to the test binary).
var goTestSafe = set("v", "run", "count", "race", "timeout", "short", "cover", "covermode", "coverpkg",
	"bench", "benchmem", "benchtime", "cpu", "failfast", "json", "list", "parallel", "p", "shuffle", "skip",
	"tags", "trimpath", "vet", "fullpath", "mod", "x", "n", "a", "buildvcs", "fuzz", "fuzztime",
	"fuzzminimizetime", "msan", "asan", "work")

func goArgs(args []string) string {
	sub := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--args" {
			break
		}
		n := goFlag(a)
		if n == "C" && !strings.Contains(a, "=") {
			i++ // -C dir: the value is not the subcommand
			continue
		}
		if n == "" {
			if sub == "" {
				sub = a
				if a == "bug" {
					return "go bug opens a browser"
				}
			}
			continue
		}
		if why, ok := goDanger[n]; ok {
			return "go -" + n + " " + why
		}
		switch {
		case sub == "env" && (n == "w" || n == "u"):
			return "go env -" + n + " writes go's configuration (GOFLAGS can name programs to run)"
		case sub == "test" && !goTestSafe[n]:
			return "go test -" + n + " is not a flag known to be safe"
		}
	}
	return ""
}

// cargoTestOpts are cargo test's (build's, check's) known-safe options
// before "--", after which the words go to the test binary.
var cargoTestOpts = newOptSet("qvr", "pFj", false, strings.Fields(`--all --workspace --package --lib --bins --bin
	--tests --test --benches --bench --examples --example --all-targets --doc --no-run --no-fail-fast --release
	--features --all-features --no-default-features --target --profile --jobs --quiet --verbose --color
	--frozen --locked --offline --message-format --exclude --keep-going --help --manifest-path`)...)

func cargoArgs(args []string) string {
	if r := refuseOpts(args, "cargo", "sets config that can name programs to run", nil, "--config", "-Z"); r != "" {
		return r
	}
	for i, a := range args {
		if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+") {
			continue
		}
		switch a {
		case "test", "build", "check", "t", "b", "c":
			rest := args[i+1:]
			for j, w := range rest {
				if w == "--" {
					rest = rest[:j]
					break
				}
			}
			return cargoTestOpts.check("cargo "+a, rest)
		}
		return ""
	}
	return ""
}

// dockerDanger are the options that give a container the host (its
// files, devices, namespaces) or point the client at another daemon.
var dockerDanger = []string{"-v", "--volume", "--mount", "--privileged", "--cap-add", "--device", "--pid",
	"--ipc", "--uts", "--userns", "--security-opt", "--volumes-from", "--cgroup-parent", "--cgroupns",
	"-H", "--host", "--config", "--context"}

func dockerArgs(exe string) func([]string) string {
	return func(args []string) string {
		if r := refuseOpts(args, exe, "gives a container the host or uses another daemon", nil, dockerDanger...); r != "" {
			return r
		}
		for i, a := range args {
			n := longName(a)
			if (n == "--network" || n == "--net") && (strings.HasSuffix(a, "=host") || a == n && i+1 < len(args) && args[i+1] == "host") {
				return exe + " " + n + " host shares the host's network"
			}
		}
		return ""
	}
}
