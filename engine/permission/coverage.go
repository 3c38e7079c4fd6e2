package permission

import "strings"

// What an allowlist entry or a session grant covers. An entry that names a
// program's subcommand ("git push", "npm install") covers that subcommand;
// an entry or grant that names only the program ("git", the executable an
// always_command grant records) covers its read-only subcommands, for the
// programs whose subcommands write or run things. The argument rules apply
// on top in both cases.

// readOnlySubcommands report whether a command (the words after the
// executable) only reads, for programs with subcommands.
var readOnlySubcommands = map[string]func(args []string) bool{
	"git":    gitReadOnly,
	"npm":    subIn("test", "t", "tst", "run", "run-script", "rum", "urn", "ls", "list", "ll", "la", "outdated", "view", "v", "info", "show", "why", "explain", "audit", "-v", "--version"),
	"pnpm":   subIn("test", "t", "run", "ls", "list", "outdated", "why", "audit", "-v", "--version"),
	"yarn":   subIn("test", "run", "list", "info", "why", "outdated", "audit", "-v", "--version"),
	"go":     goReadOnly,
	"cargo":  subIn("test", "t", "build", "b", "check", "c", "doc", "tree", "metadata", "version", "--version", "-V", "bench", "search", "verify-project", "locate-project", "pkgid"),
	"docker": dockerReadOnly,
	"podman": dockerReadOnly,
}

// covers reports whether the allowlist entry (or grant, as a one-word
// entry) whose words prefix words covers the command.
func covers(entry, words []string) bool {
	if len(entry) > 1 {
		return true
	}
	ro, ok := readOnlySubcommands[exeName(words[0])]
	return !ok || ro(words[1:])
}

// firstOperand returns the first word that is not an option, "" if none.
func firstOperand(args []string) (string, []string) {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return a, args[i+1:]
		}
	}
	return "", nil
}

// subIn covers a command whose first operand is one of subs (no operand:
// usage or a version, which only print); "audit fix" and "clippy --fix"
// write and are not covered.
func subIn(subs ...string) func([]string) bool {
	m := set(subs...)
	return func(args []string) bool {
		if len(args) > 0 && m[args[0]] && strings.HasPrefix(args[0], "-") {
			return true
		}
		sub, rest := firstOperand(args)
		if sub == "" {
			return true
		}
		if !m[sub] {
			return false
		}
		for _, a := range rest {
			if a == "fix" || longName(a) == "--fix" {
				return false
			}
		}
		return true
	}
}

func goReadOnly(args []string) bool {
	sub, rest := goSub(args)
	switch sub {
	case "", "test", "build", "vet", "list", "version", "env", "doc", "help":
		return true
	case "mod":
		return len(rest) > 0 && (rest[0] == "why" || rest[0] == "graph" || rest[0] == "verify")
	}
	return false
}

// dockerReadOnlySubs are docker's subcommands (and management commands'
// subcommands) that only read.
var dockerReadOnlySubs = set("ps", "images", "version", "info", "inspect", "logs", "top", "port", "diff",
	"history", "stats", "search", "events",
	"image ls", "image list", "image inspect", "image history", "container ls", "container list",
	"container inspect", "container logs", "container top", "container port", "container diff",
	"container stats", "network ls", "network inspect", "volume ls", "volume inspect", "system df",
	"system info", "context ls", "context show", "compose ps", "compose ls", "compose logs", "compose config")

func dockerReadOnly(args []string) bool {
	sub, rest := firstOperand(args)
	if sub == "" {
		return true
	}
	if dockerReadOnlySubs[sub] {
		return true
	}
	next, _ := firstOperand(rest)
	return dockerReadOnlySubs[sub+" "+next]
}
