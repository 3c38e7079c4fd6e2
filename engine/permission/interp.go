package permission

import "strings"

// Interpreters: a script file may run (allowlisting "python3" trusts the
// project's scripts), but code or a module named on the command line never
// runs unasked — python -c/-m, node -e/-p/--eval/-r/--require/--import,
// perl -e/-E, ruby -e, php -r, deno eval, bun -e and their kin. The options
// before the script must be known-safe ones; what follows the script
// belongs to it.

// interpOpts describes the options an interpreter may take before its
// script: flag letters, letters whose value follows (glued or as the next
// word), and long options.
type interpOpts struct {
	flags, valued string
	long          map[string]bool
}

var (
	pythonOpts = interpOpts{flags: "bBdEhiIOPqsSuvVx", valued: "WX", long: set("--version", "--help", "--help-env", "--help-xoptions", "--help-all")}
	nodeOpts   = interpOpts{flags: "vhc", long: set("--version", "--help", "--check", "--no-warnings", "--no-deprecation", "--trace-warnings", "--enable-source-maps", "--test", "--trace-uncaught", "--throw-deprecation", "--pending-deprecation")}
	perlOpts   = interpOpts{flags: "wWXvc", long: set("--version", "--help")}
	rubyOpts   = interpOpts{flags: "wWvc", long: set("--version", "--help", "--verbose", "--disable-gems", "--disable-all")}
	phpOpts    = interpOpts{flags: "vlhim", long: set("--version", "--help", "--syntax-check", "--info", "--modules")}
)

func set(ss ...string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// interpArgs returns the rule of one interpreter.
func interpArgs(exe string, o interpOpts) func([]string) string {
	return func(args []string) string {
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a == "-" || a == "--" || !strings.HasPrefix(a, "-") {
				return "" // the script (or stdin): the rest is its arguments
			}
			if strings.HasPrefix(a, "--") {
				if o.long[a] {
					continue
				}
				return exe + " " + longName(a) + " can run code given on the command line; it is never auto-allowed"
			}
			for j := 1; j < len(a); j++ {
				c := a[j]
				if strings.IndexByte(o.valued, c) >= 0 {
					if j == len(a)-1 {
						i++ // the value is the next word
					}
					break
				}
				if strings.IndexByte(o.flags, c) < 0 {
					return exe + " -" + string(c) + " can run code given on the command line or a module; it is never auto-allowed"
				}
			}
		}
		return ""
	}
}

// denoArgs refuses deno's eval and repl, and -e/--eval/-p/--print
// anywhere.
func denoArgs(args []string) string {
	if r := refuseOpts(args, "deno", "executes inline code", nil, "-e", "--eval", "-p", "--print", "--eval-file"); r != "" {
		return r
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			if a == "eval" || a == "repl" {
				return "deno " + a + " executes inline code"
			}
			return ""
		}
	}
	return ""
}

// evalFlags are the interpreters with simpler rules: the listed options
// run code given on the command line, or load a module, wherever they are.
var evalFlags = map[string][]string{
	"bun":       {"-e", "--eval", "-p", "--print", "-r", "--preload", "--require", "--import"},
	"lua":       {"-e", "-l", "-i"},
	"luajit":    {"-e", "-l", "-i", "-j"},
	"rscript":   {"-e", "--expr"},
	"r":         {"-e", "--file", "-f"},
	"julia":     {"-e", "-E", "--eval", "--print", "-L", "--load", "-i"},
	"osascript": {"-e"},
	"elixir":    {"-e", "--eval", "-r", "--require"},
	"erl":       {"-eval", "-s", "-run", "-noshell"},
	"guile":     {"-c", "-e", "-l", "-s"},
	"racket":    {"-e", "--eval", "-l", "--lib", "-r", "--require", "-i"},
	"ghc":       {"-e"},
	"groovy":    {"-e"},
	"scala":     {"-e"},
	"tclsh":     {"-encoding"},
}
