package permission

import (
	"errors"
	"runtime"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/syntax"

	"github.com/zqagent/sidecar/shellcmd"
)

// maxCommandLen bounds what the matcher parses; longer commands always ask.
const maxCommandLen = 16 << 10

// windowsShell: on Windows the command runs under cmd.exe or PowerShell,
// where quotes do not protect what they protect in sh ('a & b' runs b under
// cmd.exe). There, any character special to either shell refuses the
// command, quoted or not. A variable so tests can exercise the rule.
var windowsShell = runtime.GOOS == "windows"

const windowsSpecial = "&|<>^%!\"'()$;`@{}[]*?,=\n\r"

// errNotSimple is the internal reason a command line is not a single literal
// simple command.
var errNotSimple = errors.New("not a single literal simple command")

// parseSimple returns the words of cmd when cmd is exactly one simple command
// whose words are all literals: no operators (; & | && ||), no redirections,
// no substitutions or expansions of any kind ($, backticks, globs, braces,
// tilde), no variable assignments, no backslash escapes, no newlines or other
// control characters, no comments, no subshells or compound commands.
// Single-quoted strings and double-quoted strings without expansions are
// literals. The words are returned with their quotes removed, which is what
// the shell passes to the program.
func parseSimple(cmd string) ([]string, error) {
	if cmd == "" || len(cmd) > maxCommandLen {
		return nil, errNotSimple
	}
	if windowsShell && strings.ContainsAny(cmd, windowsSpecial) {
		return nil, errNotSimple
	}
	for _, r := range cmd {
		if r == '\t' {
			continue
		}
		if r < 0x20 || r == 0x7f || r == unicode.ReplacementChar || (r >= 0x80 && !unicode.IsPrint(r) && !unicode.IsSpace(r)) {
			return nil, errNotSimple
		}
	}
	// The grammar of the shell that runs the command (bash, else sh): what
	// is parsed here is what runs.
	p := syntax.NewParser(syntax.Variant(shellcmd.Variant()), syntax.KeepComments(true))
	f, err := p.Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, errNotSimple
	}
	if len(f.Stmts) != 1 || len(f.Last) != 0 {
		return nil, errNotSimple
	}
	st := f.Stmts[0]
	if len(st.Comments) != 0 || st.Negated || st.Background || st.Coprocess || st.Disown ||
		st.Semicolon.IsValid() || len(st.Redirs) != 0 {
		return nil, errNotSimple
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) != 0 || len(call.Args) == 0 {
		return nil, errNotSimple
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		s, ok := literalWord(w)
		if !ok {
			return nil, errNotSimple
		}
		words = append(words, s)
	}
	if words[0] == "" {
		return nil, errNotSimple
	}
	return words, nil
}

// literalWord returns the value of a word made only of literal parts.
func literalWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if !safeUnquoted(p.Value, i == 0, b.String()) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok || strings.ContainsAny(lit.Value, "\\$`") {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// safeUnquoted reports whether an unquoted literal expands to itself: no
// escapes, no glob, extglob or brace characters, no history or tilde
// expansion. first says the literal starts the word; before is the word's
// value so far.
func safeUnquoted(v string, first bool, before string) bool {
	if strings.ContainsAny(v, "\\*?[]{}$`'\"!") {
		return false
	}
	prev := rune(0)
	if before != "" {
		prev = rune(before[len(before)-1])
	}
	for i, r := range v {
		// A tilde expands at the start of a word and, in bash, after '=' or
		// ':' (a=~/x, PATH=a:~/b). Only a tilde glued to a name character
		// (HEAD~1, foo~) stays literal.
		if r == '~' && ((first && i == 0) || !tildeLiteralAfter(prev)) {
			return false
		}
		prev = r
	}
	return true
}

func tildeLiteralAfter(prev rune) bool {
	return unicode.IsLetter(prev) || unicode.IsDigit(prev) || prev == '_' || prev == '^' || prev == '~' || prev == '.' || prev == '-'
}

// CommandExecutable returns the executable a session command grant
// (always_command) would cover: the first word of cmd when cmd is a single
// literal simple command. ok is false for anything else, and for executables
// that are never auto-allowed (wrappers that run other commands, shells,
// privilege tools: sudo, env, xargs, bash, ...) and for commands a grant of
// their executable would not cover (git push: a grant for git covers its
// read-only subcommands, see covers), so the UI does not offer a grant that
// could never apply to the command it shows. CommandGrant also says why.
func CommandExecutable(cmd string) (exe string, ok bool) {
	exe, _ = CommandGrant(cmd)
	return exe, exe != ""
}

// CommandGrant is CommandExecutable with the reason: exe is what an
// always_command grant would cover, or "" and whyNot says why none is
// offered for cmd.
func CommandGrant(cmd string) (exe, whyNot string) {
	words, err := parseSimple(strings.Trim(cmd, " \t"))
	if err != nil {
		return "", "not a single simple command (pipes, redirects, lists, substitutions and variables are never granted for the session)"
	}
	if neverAuto(words[0]) {
		return "", exeName(words[0]) + " runs other commands or changes privileges; it is never granted for the session"
	}
	if !covers(words[:1], words) {
		return "", "a grant for " + words[0] + " covers only its read-only subcommands, not this one"
	}
	return words[0], ""
}

// exeName is the name the argument rules key on: the base name of the first
// word, lower-cased and without a Windows executable extension, so
// /usr/bin/find and GIT.exe get find's and git's rules.
func exeName(word string) string {
	name := strings.ToLower(word)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	for _, ext := range []string{".exe", ".cmd", ".bat", ".com", ".ps1"} {
		name = strings.TrimSuffix(name, ext)
	}
	return name
}

// parseAllowEntry splits an allowlist entry into words.
func parseAllowEntry(entry string) []string {
	return strings.Fields(entry)
}

// prefixMatch reports whether the entry's words are the first words of the
// command: a match ends on a word boundary by construction.
func prefixMatch(entry, words []string) bool {
	if len(entry) == 0 || len(entry) > len(words) {
		return false
	}
	for i, w := range entry {
		if words[i] != w {
			return false
		}
	}
	return true
}

// SafeSimpleCommand reports whether cmd is a single literal simple command
// whose arguments neither execute other programs nor write files through the
// executable's own options (find -exec, sed -i, git -c, ...). It is the
// condition every auto-allow of a command (allowlist, session grant,
// workspace heuristic) requires; on false, reason says why.
func SafeSimpleCommand(cmd string) (words []string, reason string, ok bool) {
	words, err := parseSimple(strings.Trim(cmd, " \t"))
	if err != nil {
		return nil, "command contains shell operators, expansions, redirections or other syntax that is never auto-allowed", false
	}
	if r := dangerousArgs(words); r != "" {
		return nil, r, false
	}
	return words, "", true
}

// MatchAllowlist reports whether cmd is auto-allowed by the allowlist
// entries: it is a safe simple command and one entry's words are a prefix of
// its words.
func MatchAllowlist(cmd string, allowlist []string) bool {
	words, _, ok := SafeSimpleCommand(cmd)
	if !ok {
		return false
	}
	for _, e := range allowlist {
		if prefixMatch(parseAllowEntry(e), words) {
			return true
		}
	}
	return false
}
