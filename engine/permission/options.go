package permission

import "strings"

// This file holds the two ways the argument rules read a command's options:
//
//   - optSet, a list of known-safe options, for the commands a shell is
//     likely to allowlist (ls, cat, grep, find, git log, go test, ...): every
//     argument that looks like an option must be one of them, spelled in
//     full. An option the list does not know asks.
//   - optArgs, a list of options that execute or write, for the rest. Long
//     options match in every abbreviation the program would accept
//     (getopt_long, git's parse-options, curl and npm's nopt take any
//     unique prefix: --outp for --output), so any prefix of a refused
//     option is refused.
//
// Neither stops at "--": it can be the value of the option before it
// ("sort -t -- --output=f"), and an operand that starts with a dash after
// it only makes the command ask.

// longName returns the name part of a long option argument ("--out=x" →
// "--out").
func longName(a string) string {
	if i := strings.IndexByte(a, '='); i >= 0 {
		return a[:i]
	}
	return a
}

// abbreviates reports whether the long option argument a names option o:
// o itself or a prefix of it of at least one letter. exact holds the
// program's options that are prefixes of o but options of their own (git's
// --text and --textconv): an exact match wins over an abbreviation.
func abbreviates(a, o string, exact map[string]bool) bool {
	n := longName(a)
	if n == o {
		return true
	}
	if len(n) <= 2 || !strings.HasPrefix(n, "--") || !strings.HasPrefix(o, n) {
		return false
	}
	return !exact[n]
}

// hasOpt reports whether argument a is option o in any spelling the
// program accepts: exact, with an attached value, abbreviated (long
// options), or inside a cluster of short options.
func hasOpt(a, o string, exact map[string]bool) bool {
	if a == o {
		return true
	}
	if strings.HasPrefix(o, "--") {
		return strings.HasPrefix(a, "--") && abbreviates(a, o, exact)
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

// optArgs builds a rule that refuses the listed options in every spelling
// (see hasOpt).
func optArgs(exe, what string, opts ...string) func([]string) string {
	return func(args []string) string {
		return refuseOpts(args, exe, what, nil, opts...)
	}
}

// refuseOpts returns why args hold one of opts, or "".
func refuseOpts(args []string, exe, what string, exact map[string]bool, opts ...string) string {
	for _, a := range args {
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		for _, o := range opts {
			if hasOpt(a, o, exact) {
				return exe + " " + o + " " + what
			}
		}
	}
	return ""
}

// optSet is a list of a program's known-safe options.
type optSet struct {
	short    string // flag letters
	shortVal string // letters that take a value: the rest of the argument, or the next one
	digits   bool   // -NUM is an option (head -5, grep -3, git log -5)
	long     map[string]bool
}

func newOptSet(short, shortVal string, digits bool, long ...string) optSet {
	s := optSet{short: short, shortVal: shortVal, digits: digits, long: map[string]bool{}}
	for _, l := range long {
		s.long[l] = true
	}
	return s
}

// check returns why an argument is not a known-safe option, or "". Words
// that do not start with a dash are operands; a value given as its own word
// after an option is checked like any word, which can only make the
// command ask.
func (s optSet) check(exe string, args []string) string {
	for _, a := range args {
		if a == "-" || a == "--" || !strings.HasPrefix(a, "-") {
			continue
		}
		if r := s.checkOne(exe, a); r != "" {
			return r
		}
	}
	return ""
}

func (s optSet) checkOne(exe, a string) string {
	if strings.HasPrefix(a, "--") {
		if s.long[longName(a)] {
			return ""
		}
		return exe + " " + longName(a) + " is not an option known to be safe"
	}
	for j := 1; j < len(a); j++ {
		c := a[j]
		switch {
		case s.digits && c >= '0' && c <= '9':
		case strings.IndexByte(s.shortVal, c) >= 0:
			return "" // the rest is the value
		case strings.IndexByte(s.short, c) >= 0:
		default:
			return exe + " -" + string(c) + " is not an option known to be safe"
		}
	}
	return ""
}

// rule returns the optSet as an argument rule.
func (s optSet) rule(exe string) func([]string) string {
	return func(args []string) string { return s.check(exe, args) }
}
