package permission

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

var fuzzSeeds = []string{
	"ls", "ls -la", "git status --short", "ls; rm -rf /", "echo 'a;b'", `echo "a b"`, "ls $(x)",
	"ls `x`", "FOO=1 ls", "cat <<EOF\nx\nEOF", "(ls)", "ls *", "ls ~", "git log HEAD~1", "find . -exec rm '{}' +",
	"sed -n '1,5p' f", "sed 's/a/b/w x' f", "awk '{print $1}'", `ls $'\n'`, "ls\\\nx", "a=~ b", "! ls", "ls &",
	"ls 2>&1", "x <(y)", "ls # c", "\"\"", "''", "'", "\"", "\x00", "ls\t-l",
	"git ls-remote --upload=x o", "git -P log -n5 -Sfoo", "git branch --list x", "wget -qO- u", "wget -O - u",
	"npx -p node node -e 1", "npm test -- --x", "uv run python -c 1", "ssh -vo ProxyCommand=x h", "scp -S x a b",
	"find . -newermt x -mtime -7", "tar xIf p a", "curl -d @f u", "make -j4 V=1", "go test -run=X ./... -args -v",
	"cargo test -p x -- --nocapture", "python3 -W x -c 1", "node -r x a.js", "docker run --net host x", "awk -F: 1 f",
}

// FuzzSafeSimpleCommand: the matcher never panics, and whatever it accepts
// is a single simple command of literal words: quoting the accepted words
// again and parsing the result gives the same words, and an independent
// check of the syntax tree finds only literal parts.
func FuzzSafeSimpleCommand(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		words, _, ok := SafeSimpleCommand(cmd)
		MatchAllowlist(cmd, []string{"ls", "git status", "find", "sed"})
		if !ok {
			return
		}
		assertLiteralSimple(t, cmd)
		var quoted []string
		for _, w := range words {
			switch {
			case !strings.Contains(w, "'"):
				quoted = append(quoted, "'"+w+"'")
			case !strings.ContainsAny(w, "\"$`"):
				quoted = append(quoted, `"`+w+`"`)
			default:
				t.Fatalf("accepted word %q holds both quote kinds or an escape", w)
			}
		}
		again, err := parseSimple(strings.Join(quoted, " "))
		if err != nil || strings.Join(again, "\x00") != strings.Join(words, "\x00") {
			t.Fatalf("round trip of %q: %q -> %q (%v)", cmd, words, again, err)
		}
	})
}

// FuzzCommandExecutable: never panics; an accepted command's executable is
// its first literal word, and the command parses as one literal simple command.
func FuzzCommandExecutable(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		exe, ok := CommandExecutable(cmd)
		if !ok {
			if exe != "" {
				t.Fatalf("rejected %q but returned %q", cmd, exe)
			}
			return
		}
		assertLiteralSimple(t, strings.Trim(cmd, " \t"))
		words, err := parseSimple(strings.Trim(cmd, " \t"))
		if err != nil || words[0] != exe || neverAuto(exe) {
			t.Fatalf("CommandExecutable(%q) = %q, words %q, err %v", cmd, exe, words, err)
		}
	})
}

// assertLiteralSimple re-checks an accepted command with the parser directly.
func assertLiteralSimple(t *testing.T, cmd string) {
	t.Helper()
	if strings.ContainsAny(cmd, "\n\r\x00") {
		t.Fatalf("accepted %q with a control character", cmd)
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		t.Fatalf("accepted %q, which is not one statement (%v)", cmd, err)
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(st.Redirs) > 0 || st.Background || st.Negated {
		t.Fatalf("accepted %q, which is not a plain simple command", cmd)
	}
	for _, w := range call.Args {
		for _, p := range w.Parts {
			switch p := p.(type) {
			case *syntax.Lit:
				if strings.ContainsAny(p.Value, "*?[{\\$`") {
					t.Fatalf("accepted %q with an expandable literal %q", cmd, p.Value)
				}
			case *syntax.SglQuoted:
				if p.Dollar {
					t.Fatalf("accepted %q with $'...'", cmd)
				}
			case *syntax.DblQuoted:
				for _, dp := range p.Parts {
					if _, ok := dp.(*syntax.Lit); !ok {
						t.Fatalf("accepted %q with an expansion in double quotes", cmd)
					}
				}
			default:
				t.Fatalf("accepted %q with a %T", cmd, p)
			}
		}
	}
}

// FuzzSedScript: the sed script scanner never panics, and refuses any
// script that contains a write or execute command it could have missed by
// a naive look: if it accepts, the script has no 'w', 'W' or 'e' that
// starts a command right after a separator.
func FuzzSedScript(f *testing.F) {
	for _, s := range []string{"p", "1,5p", "s/a/b/g", "s/a/b/w x", "1e id", "/x/W y", "y/ab/cd/", ":a;N;ba", "$!d", `\,x,p`, "1~2p", "{p;}", "a text", "s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		if sedScriptDanger(script) != "" {
			return
		}
		for _, bad := range []string{"w", "W", "e"} {
			if script == bad || strings.HasPrefix(script, bad+" ") || strings.Contains(script, ";"+bad+" ") {
				// Only reachable inside text of a/i/c or inside regexes.
				if !strings.ContainsAny(script, "aic/\\y:btTvrR#") {
					t.Fatalf("accepted %q", script)
				}
			}
		}
	})
}
