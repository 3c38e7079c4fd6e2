package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/sandbox"
	"github.com/zqagent/sidecar/tools"
)

var (
	readMeta  = tools.Metadata{Class: tools.ClassRead, RiskLevel: tools.RiskLow, PathArgs: []string{"path"}}
	writeMeta = tools.Metadata{Class: tools.ClassWrite, RiskLevel: tools.RiskMedium, PathArgs: []string{"path"}}
	patchMeta = tools.Metadata{Class: tools.ClassWrite, RiskLevel: tools.RiskMedium}
	shellMeta = tools.Metadata{Class: tools.ClassExec, RiskLevel: tools.RiskHigh}
	netMeta   = tools.Metadata{Class: tools.ClassNetwork, RiskLevel: tools.RiskHigh, RequiresApproval: true}
	interMeta = tools.Metadata{Class: tools.ClassInteractive, RiskLevel: tools.RiskLow}
	multiMeta = tools.Metadata{Class: tools.ClassRead, PathArgs: []string{"paths"}}
	noMeta    = tools.Metadata{}
)

// fixture is a real directory tree with the escapes the table tries:
//
//	parent/ws/                 the workspace
//	parent/ws/src/main.go
//	parent/ws/link-out -> parent/outside      (folder link pointing out)
//	parent/ws/file-link -> parent/outside/secret.txt
//	parent/ws/dangling -> parent/nowhere
//	parent/ws/.agent/          (no mcp.json yet)
//	parent/ws/agent-link -> parent/ws/.agent
//	parent/ws-evil/x           sibling with the workspace's name as prefix
//	parent/outside/secret.txt
//	parent/granted-ro/a.txt    granted read-only
//	parent/granted-rw/         granted writable
//	parent/ws-mcp/.agent/mcp.json  a second workspace whose MCP config exists
type fixture struct {
	parent, root string
	ws, wsMCP    *confine.Workspace
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	parent, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(parent, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		if err := os.WriteFile(filepath.Join(parent, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(filepath.Join(parent, target), filepath.Join(parent, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"ws/src", "ws/.agent", "ws-evil", "outside", "granted-ro", "granted-rw", "ws-mcp/.agent"} {
		mk(d)
	}
	for _, f := range []string{"ws/src/main.go", "ws-evil/x", "outside/secret.txt", "granted-ro/a.txt", "ws-mcp/.agent/mcp.json"} {
		write(f)
	}
	link("outside", "ws/link-out")
	link("outside/secret.txt", "ws/file-link")
	link("nowhere", "ws/dangling")
	link("ws/.agent", "ws/agent-link")
	ws, err := confine.New(filepath.Join(parent, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Grant(filepath.Join(parent, "granted-ro"), false); err != nil {
		t.Fatal(err)
	}
	if err := ws.Grant(filepath.Join(parent, "granted-rw"), true); err != nil {
		t.Fatal(err)
	}
	wsMCP, err := confine.New(filepath.Join(parent, "ws-mcp"))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{parent: parent, root: ws.Root(), ws: ws, wsMCP: wsMCP}
}

type want int

const (
	wantDeny want = iota
	wantAllow
	wantAsk
)

func (w want) String() string { return [...]string{"deny", "allow", "ask"}[w] }

func got(d Decision) want {
	switch {
	case d.NeedsUser && !d.Allowed:
		return wantAsk
	case d.Allowed && !d.NeedsUser:
		return wantAllow
	case !d.Allowed && !d.NeedsUser:
		return wantDeny
	}
	return -1
}

var (
	enforced    = sandbox.Status{Mode: sandbox.ModeAuto, Kind: sandbox.KindBwrap, Enforced: true}
	notEnforced = sandbox.Status{Mode: sandbox.ModeAuto, Kind: sandbox.KindNone, Reason: "test"}
	stdAllow    = []string{"ls", "cat", "echo", "grep", "git status", "git log", "git diff", "pnpm test"}
	// broadAllow lists executables whose dangerous arguments must still ask.
	broadAllow = []string{"find", "rg", "sed", "awk", "git", "npx", "npm", "xargs", "env", "nohup", "sudo",
		"timeout", "nice", "exec", "command", "builtin", "tar", "less", "more", "bash", "sh", "python3", "sort"}
)

type row struct {
	name     string
	mode     Mode
	policy   ShellPolicy
	sb       sandbox.Status
	allow    []string
	tools    []string // session tool grants
	commands []string // session command grants
	mcpWS    bool     // use the workspace whose .agent/mcp.json exists
	tool     string
	args     map[string]any
	meta     tools.Metadata
	want     want
}

func sh(cmd string) map[string]any { return map[string]any{"command": cmd} }
func at(p string) map[string]any   { return map[string]any{"path": p} }

func TestEvaluateTable(t *testing.T) {
	f := newFixture(t)
	abs := func(p string) string { return filepath.Join(f.parent, p) }
	rows := []row{
		// Step 1: modes.
		{name: "discuss denies write", mode: ModeDiscuss, tool: "write_file", args: at("a.txt"), meta: writeMeta, want: wantDeny},
		{name: "plan denies shell", mode: ModePlan, tool: "run_shell", args: sh("ls"), meta: shellMeta, allow: stdAllow, want: wantDeny},
		{name: "plan denies network", mode: ModePlan, tool: "web_fetch", args: map[string]any{"url": "https://x"}, meta: netMeta, want: wantDeny},
		{name: "plan denies unclassified tool", mode: ModePlan, tool: "custom", meta: noMeta, want: wantDeny},
		{name: "discuss denies shell even with grants", mode: ModeDiscuss, tool: "run_shell", args: sh("ls"), meta: shellMeta, tools: []string{"run_shell"}, want: wantDeny},
		{name: "plan allows read", mode: ModePlan, tool: "read_file", args: at("src/main.go"), meta: readMeta, want: wantAllow},
		{name: "plan allows propose_plan", mode: ModePlan, tool: "propose_plan", args: map[string]any{"plan": "1. do"}, meta: interMeta, want: wantAllow},
		{name: "discuss allows ask_user", mode: ModeDiscuss, tool: "ask_user", args: map[string]any{"question": "?"}, meta: interMeta, want: wantAllow},
		{name: "request_directory outside is interactive", tool: "request_directory", args: at(abs("outside")), meta: interMeta, want: wantAllow},
		{name: "interactive asks for write", tool: "write_file", args: at("a.txt"), meta: writeMeta, want: wantAsk},
		{name: "interactive asks for network", tool: "web_fetch", args: map[string]any{"url": "https://x"}, meta: netMeta, want: wantAsk},
		{name: "interactive asks for unclassified", tool: "custom", meta: noMeta, want: wantAsk},
		{name: "auto allows write inside", mode: ModeAuto, tool: "write_file", args: at("src/new.go"), meta: writeMeta, want: wantAllow},
		{name: "auto allows any shell", mode: ModeAuto, tool: "run_shell", args: sh("make && rm -rf build"), meta: shellMeta, want: wantAllow},
		{name: "auto allows network", mode: ModeAuto, tool: "mcp__x__y", meta: netMeta, want: wantAllow},

		// Step 2: the workspace boundary, on the real tree.
		{name: "dotdot read", tool: "read_file", args: at("../outside/secret.txt"), meta: readMeta, want: wantDeny},
		{name: "dotdot inside then out", tool: "read_file", args: at("src/../../outside/secret.txt"), meta: readMeta, want: wantDeny},
		{name: "absolute path outside", tool: "read_file", args: at("/etc/passwd"), meta: readMeta, want: wantDeny},
		{name: "absolute path inside", tool: "read_file", args: at(abs("ws/src/main.go")), meta: readMeta, want: wantAllow},
		{name: "sibling prefix ws-evil", tool: "read_file", args: at(abs("ws-evil/x")), meta: readMeta, want: wantDeny},
		{name: "sibling prefix via dotdot", tool: "read_file", args: at("../ws-evil/x"), meta: readMeta, want: wantDeny},
		{name: "folder link out: read", tool: "read_file", args: at("link-out/secret.txt"), meta: readMeta, want: wantDeny},
		{name: "folder link out: write in auto", mode: ModeAuto, tool: "write_file", args: at("link-out/secret.txt"), meta: writeMeta, want: wantDeny},
		{name: "new file under linked folder", mode: ModeAuto, tool: "write_file", args: at("link-out/new/deep.txt"), meta: writeMeta, want: wantDeny},
		{name: "file link out: read", tool: "read_file", args: at("file-link"), meta: readMeta, want: wantDeny},
		{name: "file link out: write", mode: ModeAuto, tool: "write_file", args: at("file-link"), meta: writeMeta, want: wantDeny},
		{name: "dangling link", mode: ModeAuto, tool: "write_file", args: at("dangling"), meta: writeMeta, want: wantDeny},
		{name: "granted read-only dir: read", tool: "read_file", args: at(abs("granted-ro/a.txt")), meta: readMeta, want: wantAllow},
		{name: "granted read-only dir: write", mode: ModeAuto, tool: "write_file", args: at(abs("granted-ro/a.txt")), meta: writeMeta, want: wantDeny},
		{name: "granted writable dir: write asks", tool: "write_file", args: at(abs("granted-rw/b.txt")), meta: writeMeta, want: wantAsk},
		{name: "granted writable dir: auto writes", mode: ModeAuto, tool: "write_file", args: at(abs("granted-rw/b.txt")), meta: writeMeta, want: wantAllow},
		{name: "file_path arg checked", mode: ModeAuto, tool: "replace_in_file", args: map[string]any{"file_path": "../outside/secret.txt"}, meta: patchMeta, want: wantDeny},
		{name: "list path arg checked", tool: "grep", args: map[string]any{"paths": []any{"src", "../outside"}}, meta: multiMeta, want: wantDeny},
		{name: "shell cwd outside", mode: ModeAuto, tool: "run_shell", args: map[string]any{"command": "ls", "cwd": "/etc"}, meta: shellMeta, want: wantDeny},
		{name: "shell cwd in read-only grant", mode: ModeAuto, tool: "run_shell", args: map[string]any{"command": "ls", "cwd": abs("granted-ro")}, meta: shellMeta, want: wantDeny},
		{name: "session tool grant does not cross the boundary", tools: []string{"write_file"}, tool: "write_file", args: at("../outside/x"), meta: writeMeta, want: wantDeny},

		// The MCP config rule (issue 8).
		{name: "auto: new .agent/mcp.json asks", mode: ModeAuto, tool: "write_file", args: at(".agent/mcp.json"), meta: writeMeta, want: wantAsk},
		{name: "auto: new mcp.json by absolute path asks", mode: ModeAuto, tool: "write_file", args: at(abs("ws/.agent/mcp.json")), meta: writeMeta, want: wantAsk},
		{name: "auto: patch creating mcp.json asks", mode: ModeAuto, tool: "apply_patch", args: map[string]any{"patch": "*** Add File: .agent/mcp.json\n+{}"}, meta: patchMeta, want: wantAsk},
		{name: "tool grant: new mcp.json still asks", tools: []string{"write_file"}, tool: "write_file", args: at(".agent/mcp.json"), meta: writeMeta, want: wantAsk},
		{name: "auto: new mcp.json through a linked folder asks", mode: ModeAuto, tool: "write_file", args: at("agent-link/mcp.json"), meta: writeMeta, want: wantAsk},
		{name: "auto: other mcp.json allowed", mode: ModeAuto, tool: "write_file", args: at("src/mcp.json"), meta: writeMeta, want: wantAllow},
		{name: "auto: existing mcp.json edit asks", mcpWS: true, mode: ModeAuto, tool: "write_file", args: at(".agent/mcp.json"), meta: writeMeta, want: wantAsk},

		// Steps 5–6: allowlist, word boundaries, quoting.
		{name: "allowlist ls", allow: stdAllow, tool: "run_shell", args: sh("ls"), meta: shellMeta, want: wantAllow},
		{name: "allowlist ls -la src", allow: stdAllow, tool: "run_shell", args: sh("ls -la src"), meta: shellMeta, want: wantAllow},
		{name: "allowlist quoted words", allow: stdAllow, tool: "run_shell", args: sh(`"ls" -l 'my file' "a b"`), meta: shellMeta, want: wantAllow},
		{name: "allowlist quoted operators are literal", allow: stdAllow, tool: "run_shell", args: sh(`echo 'a;b|c > d $(x)'`), meta: shellMeta, want: wantAllow},
		{name: "word boundary: lsof", allow: stdAllow, tool: "run_shell", args: sh("lsof"), meta: shellMeta, want: wantAsk},
		{name: "git status --short", allow: stdAllow, tool: "run_shell", args: sh("git status --short"), meta: shellMeta, want: wantAllow},
		{name: "word boundary: git statusx", allow: stdAllow, tool: "run_shell", args: sh("git statusx"), meta: shellMeta, want: wantAsk},
		{name: "git log HEAD~1 is literal", allow: stdAllow, tool: "run_shell", args: sh("git log --oneline HEAD~1"), meta: shellMeta, want: wantAllow},
		{name: "git push not in list", allow: stdAllow, tool: "run_shell", args: sh("git push"), meta: shellMeta, want: wantAsk},
		{name: "pnpm test prefix", allow: stdAllow, tool: "run_shell", args: sh("pnpm test --watch=false"), meta: shellMeta, want: wantAllow},
		{name: "pnpm install not covered", allow: stdAllow, tool: "run_shell", args: sh("pnpm install"), meta: shellMeta, want: wantAsk},
		{name: "bypass: semicolon", allow: stdAllow, tool: "run_shell", args: sh("ls; rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "bypass: and", allow: stdAllow, tool: "run_shell", args: sh("ls && rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "bypass: or", allow: stdAllow, tool: "run_shell", args: sh("ls || rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "bypass: pipe", allow: stdAllow, tool: "run_shell", args: sh("cat x | sh"), meta: shellMeta, want: wantAsk},
		{name: "bypass: background", allow: stdAllow, tool: "run_shell", args: sh("ls & rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "bypass: redirect out", allow: stdAllow, tool: "run_shell", args: sh("echo x > /etc/passwd"), meta: shellMeta, want: wantAsk},
		{name: "bypass: redirect fd", allow: stdAllow, tool: "run_shell", args: sh("ls 2>/tmp/x"), meta: shellMeta, want: wantAsk},
		{name: "bypass: redirect in", allow: stdAllow, tool: "run_shell", args: sh("cat < /etc/shadow"), meta: shellMeta, want: wantAsk},
		{name: "bypass: command substitution", allow: stdAllow, tool: "run_shell", args: sh("ls $(rm -rf /)"), meta: shellMeta, want: wantAsk},
		{name: "bypass: substitution in double quotes", allow: stdAllow, tool: "run_shell", args: sh(`echo "$(rm -rf /)"`), meta: shellMeta, want: wantAsk},
		{name: "bypass: backticks", allow: stdAllow, tool: "run_shell", args: sh("ls `rm -rf /`"), meta: shellMeta, want: wantAsk},
		{name: "bypass: process substitution", allow: stdAllow, tool: "run_shell", args: sh("cat <(rm -rf /)"), meta: shellMeta, want: wantAsk},
		{name: "bypass: variable", allow: stdAllow, tool: "run_shell", args: sh("cat $HOME/.ssh/id_rsa"), meta: shellMeta, want: wantAsk},
		{name: "bypass: braced variable in quotes", allow: stdAllow, tool: "run_shell", args: sh(`echo "${IFS}"`), meta: shellMeta, want: wantAsk},
		{name: "bypass: ansi-c quote", allow: stdAllow, tool: "run_shell", args: sh(`ls $'\x3b'rm`), meta: shellMeta, want: wantAsk},
		{name: "bypass: arithmetic", allow: stdAllow, tool: "run_shell", args: sh("echo $((1+1))"), meta: shellMeta, want: wantAsk},
		{name: "bypass: newline", allow: stdAllow, tool: "run_shell", args: sh("ls\nrm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "bypass: carriage return", allow: stdAllow, tool: "run_shell", args: sh("ls\rrm"), meta: shellMeta, want: wantAsk},
		{name: "bypass: line continuation", allow: stdAllow, tool: "run_shell", args: sh("ls \\\n; rm"), meta: shellMeta, want: wantAsk},
		{name: "bypass: here-doc", allow: stdAllow, tool: "run_shell", args: sh("cat <<EOF\nx\nEOF"), meta: shellMeta, want: wantAsk},
		{name: "bypass: here-string", allow: stdAllow, tool: "run_shell", args: sh("cat <<< x"), meta: shellMeta, want: wantAsk},
		{name: "bypass: subshell", allow: stdAllow, tool: "run_shell", args: sh("(ls)"), meta: shellMeta, want: wantAsk},
		{name: "bypass: group", allow: stdAllow, tool: "run_shell", args: sh("{ ls; }"), meta: shellMeta, want: wantAsk},
		{name: "bypass: glob star", allow: stdAllow, tool: "run_shell", args: sh("cat *"), meta: shellMeta, want: wantAsk},
		{name: "bypass: glob question", allow: stdAllow, tool: "run_shell", args: sh("cat /etc/passw?"), meta: shellMeta, want: wantAsk},
		{name: "bypass: glob class", allow: stdAllow, tool: "run_shell", args: sh("cat [a]"), meta: shellMeta, want: wantAsk},
		{name: "bypass: brace expansion", allow: stdAllow, tool: "run_shell", args: sh("cat {a,b}"), meta: shellMeta, want: wantAsk},
		{name: "bypass: tilde", allow: stdAllow, tool: "run_shell", args: sh("cat ~/.ssh/id_rsa"), meta: shellMeta, want: wantAsk},
		{name: "bypass: tilde after =", allow: stdAllow, tool: "run_shell", args: sh("grep --file=~/.netrc x"), meta: shellMeta, want: wantAsk},
		{name: "bypass: env prefix", allow: stdAllow, tool: "run_shell", args: sh("FOO=1 ls"), meta: shellMeta, want: wantAsk},
		{name: "bypass: PATH prefix", allow: stdAllow, tool: "run_shell", args: sh("PATH=/tmp/evil ls"), meta: shellMeta, want: wantAsk},
		{name: "bypass: negation", allow: stdAllow, tool: "run_shell", args: sh("! ls"), meta: shellMeta, want: wantAsk},
		{name: "bypass: escaped semicolon", allow: stdAllow, tool: "run_shell", args: sh(`ls \; rm`), meta: shellMeta, want: wantAsk},
		{name: "bypass: comment", allow: stdAllow, tool: "run_shell", args: sh("ls # hidden"), meta: shellMeta, want: wantAsk},
		{name: "bypass: extglob", allow: stdAllow, tool: "run_shell", args: sh("ls !(x)"), meta: shellMeta, want: wantAsk},
		{name: "bypass: test clause", allow: stdAllow, tool: "run_shell", args: sh("[[ -f x ]]"), meta: shellMeta, want: wantAsk},
		{name: "bypass: function", allow: stdAllow, tool: "run_shell", args: sh("ls() { rm -rf /; }"), meta: shellMeta, want: wantAsk},
		{name: "bypass: trailing semicolon", allow: stdAllow, tool: "run_shell", args: sh("ls;"), meta: shellMeta, want: wantAsk},

		// Dangerous arguments of allowlisted executables.
		{name: "find -name is fine", allow: broadAllow, tool: "run_shell", args: sh("find . -name '*.go' -type f"), meta: shellMeta, want: wantAllow},
		{name: "find -exec", allow: broadAllow, tool: "run_shell", args: sh("find . -exec rm '{}' +"), meta: shellMeta, want: wantAsk},
		{name: "find -execdir", allow: broadAllow, tool: "run_shell", args: sh("find . -execdir rm '{}' +"), meta: shellMeta, want: wantAsk},
		{name: "find -ok", allow: broadAllow, tool: "run_shell", args: sh("find . -ok rm '{}' ';'"), meta: shellMeta, want: wantAsk},
		{name: "find -okdir", allow: broadAllow, tool: "run_shell", args: sh("find . -okdir rm '{}' ';'"), meta: shellMeta, want: wantAsk},
		{name: "find -delete", allow: broadAllow, tool: "run_shell", args: sh("find . -delete"), meta: shellMeta, want: wantAsk},
		{name: "find -fprint", allow: broadAllow, tool: "run_shell", args: sh("find . -fprint /tmp/out"), meta: shellMeta, want: wantAsk},
		{name: "find -fprintf", allow: broadAllow, tool: "run_shell", args: sh("find . -fprintf /tmp/out %p"), meta: shellMeta, want: wantAsk},
		{name: "find -fls", allow: broadAllow, tool: "run_shell", args: sh("find . -fls /tmp/out"), meta: shellMeta, want: wantAsk},
		{name: "/usr/bin/find -delete", allow: []string{"/usr/bin/find"}, tool: "run_shell", args: sh("/usr/bin/find . -delete"), meta: shellMeta, want: wantAsk},
		{name: "rg is fine", allow: broadAllow, tool: "run_shell", args: sh("rg -n 'func main' src"), meta: shellMeta, want: wantAllow},
		{name: "rg --pre", allow: broadAllow, tool: "run_shell", args: sh("rg --pre ./evil foo"), meta: shellMeta, want: wantAsk},
		{name: "rg --pre=", allow: broadAllow, tool: "run_shell", args: sh("rg --pre=./evil foo"), meta: shellMeta, want: wantAsk},
		{name: "rg --pre-glob", allow: broadAllow, tool: "run_shell", args: sh("rg --pre-glob '*.pdf' foo"), meta: shellMeta, want: wantAsk},
		{name: "sed -n print is fine", allow: broadAllow, tool: "run_shell", args: sh("sed -n '1,20p' src/main.go"), meta: shellMeta, want: wantAllow},
		{name: "sed substitution to stdout is fine", allow: broadAllow, tool: "run_shell", args: sh("sed -e 's/foo/bar/g' src/main.go"), meta: shellMeta, want: wantAllow},
		{name: "sed -i", allow: broadAllow, tool: "run_shell", args: sh("sed -i 's/a/b/' f"), meta: shellMeta, want: wantAsk},
		{name: "sed -i.bak", allow: broadAllow, tool: "run_shell", args: sh("sed -i.bak 's/a/b/' f"), meta: shellMeta, want: wantAsk},
		{name: "sed -ni cluster", allow: broadAllow, tool: "run_shell", args: sh("sed -ni p f"), meta: shellMeta, want: wantAsk},
		{name: "sed --in-place", allow: broadAllow, tool: "run_shell", args: sh("sed --in-place=.bak 's/a/b/' f"), meta: shellMeta, want: wantAsk},
		{name: "sed w command", allow: broadAllow, tool: "run_shell", args: sh("sed -n 'w /tmp/out' f"), meta: shellMeta, want: wantAsk},
		{name: "sed W command after address", allow: broadAllow, tool: "run_shell", args: sh("sed '/x/W /tmp/out' f"), meta: shellMeta, want: wantAsk},
		{name: "sed s///w flag", allow: broadAllow, tool: "run_shell", args: sh("sed 's/a/b/gw /tmp/out' f"), meta: shellMeta, want: wantAsk},
		{name: "sed e command", allow: broadAllow, tool: "run_shell", args: sh("sed '1e id' f"), meta: shellMeta, want: wantAsk},
		{name: "sed s///e flag", allow: broadAllow, tool: "run_shell", args: sh("sed 's/.*/id/e' f"), meta: shellMeta, want: wantAsk},
		{name: "sed e in second -e", allow: broadAllow, tool: "run_shell", args: sh("sed -e p -e 'e id' f"), meta: shellMeta, want: wantAsk},
		{name: "sed -f script", allow: broadAllow, tool: "run_shell", args: sh("sed -f script.sed f"), meta: shellMeta, want: wantAsk},
		{name: "git -c", allow: broadAllow, tool: "run_shell", args: sh("git -c core.pager=./evil log"), meta: shellMeta, want: wantAsk},
		{name: "git --config-env", allow: broadAllow, tool: "run_shell", args: sh("git --config-env=core.pager=EVIL log"), meta: shellMeta, want: wantAsk},
		{name: "git log --output", allow: broadAllow, tool: "run_shell", args: sh("git log --output=/tmp/x"), meta: shellMeta, want: wantAsk},
		{name: "git diff --ext-diff", allow: broadAllow, tool: "run_shell", args: sh("git diff --ext-diff"), meta: shellMeta, want: wantAsk},
		{name: "git log --textconv", allow: broadAllow, tool: "run_shell", args: sh("git log -p --textconv"), meta: shellMeta, want: wantAsk},
		{name: "git -p pager", allow: broadAllow, tool: "run_shell", args: sh("git -p log"), meta: shellMeta, want: wantAsk},
		{name: "git --paginate", allow: broadAllow, tool: "run_shell", args: sh("git --paginate log"), meta: shellMeta, want: wantAsk},
		{name: "git --exec-path", allow: broadAllow, tool: "run_shell", args: sh("git --exec-path=/tmp/evil status"), meta: shellMeta, want: wantAsk},
		{name: "git -C other repo", allow: broadAllow, tool: "run_shell", args: sh("git -C /tmp/other status"), meta: shellMeta, want: wantAsk},
		{name: "git fetch --upload-pack", allow: broadAllow, tool: "run_shell", args: sh("git fetch --upload-pack=./evil origin"), meta: shellMeta, want: wantAsk},
		{name: "git grep -O pager", allow: broadAllow, tool: "run_shell", args: sh("git grep -Ovim foo"), meta: shellMeta, want: wantAsk},
		{name: "git config write", allow: broadAllow, tool: "run_shell", args: sh("git config core.fsmonitor ./evil"), meta: shellMeta, want: wantAsk},
		{name: "git config --get is fine", allow: broadAllow, tool: "run_shell", args: sh("git config --get user.name"), meta: shellMeta, want: wantAllow},
		{name: "git difftool", allow: broadAllow, tool: "run_shell", args: sh("git difftool"), meta: shellMeta, want: wantAsk},
		{name: "git rebase --exec", allow: broadAllow, tool: "run_shell", args: sh("git rebase --exec ./evil main"), meta: shellMeta, want: wantAsk},
		{name: "git log is fine", allow: broadAllow, tool: "run_shell", args: sh("git log -n 5 --stat"), meta: shellMeta, want: wantAllow},
		{name: "npx -c", allow: broadAllow, tool: "run_shell", args: sh("npx -c 'rm -rf /'"), meta: shellMeta, want: wantAsk},
		{name: "npm exec -c", allow: broadAllow, tool: "run_shell", args: sh("npm exec -c 'rm -rf /'"), meta: shellMeta, want: wantAsk},
		{name: "npm exec --call", allow: broadAllow, tool: "run_shell", args: sh("npm exec --call='rm -rf /'"), meta: shellMeta, want: wantAsk},
		{name: "xargs", allow: broadAllow, tool: "run_shell", args: sh("xargs rm"), meta: shellMeta, want: wantAsk},
		{name: "env", allow: broadAllow, tool: "run_shell", args: sh("env rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "nohup", allow: broadAllow, tool: "run_shell", args: sh("nohup rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "sudo", allow: broadAllow, tool: "run_shell", args: sh("sudo ls"), meta: shellMeta, want: wantAsk},
		{name: "timeout wrapper", allow: broadAllow, tool: "run_shell", args: sh("timeout 5 rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "nice wrapper", allow: broadAllow, tool: "run_shell", args: sh("nice rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "exec wrapper", allow: broadAllow, tool: "run_shell", args: sh("exec rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "command wrapper", allow: broadAllow, tool: "run_shell", args: sh("command rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "builtin wrapper", allow: broadAllow, tool: "run_shell", args: sh("builtin eval x"), meta: shellMeta, want: wantAsk},
		{name: "bash -c", allow: broadAllow, tool: "run_shell", args: sh("bash -c 'rm -rf /'"), meta: shellMeta, want: wantAsk},
		{name: "sh script", allow: broadAllow, tool: "run_shell", args: sh("sh evil.sh"), meta: shellMeta, want: wantAsk},
		{name: "python -c", allow: broadAllow, tool: "run_shell", args: sh("python3 -c 'import os'"), meta: shellMeta, want: wantAsk},
		{name: "awk print is fine", allow: broadAllow, tool: "run_shell", args: sh("awk '{print $1}' f"), meta: shellMeta, want: wantAllow},
		{name: "awk system", allow: broadAllow, tool: "run_shell", args: sh(`awk 'BEGIN{system("id")}'`), meta: shellMeta, want: wantAsk},
		{name: "awk pipe", allow: broadAllow, tool: "run_shell", args: sh(`awk '{print | "sh"}' f`), meta: shellMeta, want: wantAsk},
		{name: "awk redirect", allow: broadAllow, tool: "run_shell", args: sh(`awk '{print > "/tmp/x"}' f`), meta: shellMeta, want: wantAsk},
		{name: "awk -f", allow: broadAllow, tool: "run_shell", args: sh("awk -f prog.awk f"), meta: shellMeta, want: wantAsk},
		{name: "tar -tf is fine", allow: broadAllow, tool: "run_shell", args: sh("tar -tf a.tar"), meta: shellMeta, want: wantAllow},
		{name: "tar --to-command", allow: broadAllow, tool: "run_shell", args: sh("tar --to-command=sh -xf a.tar"), meta: shellMeta, want: wantAsk},
		{name: "tar --checkpoint-action", allow: broadAllow, tool: "run_shell", args: sh("tar --checkpoint=1 --checkpoint-action=exec=sh -cf x.tar ."), meta: shellMeta, want: wantAsk},
		{name: "tar -I", allow: broadAllow, tool: "run_shell", args: sh("tar -I ./evil -xf a.tar"), meta: shellMeta, want: wantAsk},
		{name: "tar old-style I", allow: broadAllow, tool: "run_shell", args: sh("tar xIf ./evil a.tar"), meta: shellMeta, want: wantAsk},
		{name: "tar remote archive", allow: broadAllow, tool: "run_shell", args: sh("tar -tf evil.host:/a.tar"), meta: shellMeta, want: wantAsk},
		{name: "less", allow: broadAllow, tool: "run_shell", args: sh("less f"), meta: shellMeta, want: wantAsk},
		{name: "more", allow: broadAllow, tool: "run_shell", args: sh("more f"), meta: shellMeta, want: wantAsk},
		{name: "sort -o", allow: broadAllow, tool: "run_shell", args: sh("sort -o /etc/x f"), meta: shellMeta, want: wantAsk},
		{name: "sort --compress-program", allow: broadAllow, tool: "run_shell", args: sh("sort --compress-program=./evil f"), meta: shellMeta, want: wantAsk},

		// Session grants.
		{name: "session command grant", commands: []string{"make"}, tool: "run_shell", args: sh("make build"), meta: shellMeta, want: wantAllow},
		{name: "session command grant: not for compound", commands: []string{"make"}, tool: "run_shell", args: sh("make build; rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "session command grant: word boundary", commands: []string{"make"}, tool: "run_shell", args: sh("makefoo"), meta: shellMeta, want: wantAsk},
		{name: "session command grant: dangerous args", commands: []string{"find"}, tool: "run_shell", args: sh("find . -delete"), meta: shellMeta, want: wantAsk},
		{name: "session command grant: wrapper never", commands: []string{"sudo"}, tool: "run_shell", args: sh("sudo make"), meta: shellMeta, want: wantAsk},
		{name: "session tool grant: shell", tools: []string{"run_shell"}, tool: "run_shell", args: sh("make && rm -rf /"), meta: shellMeta, want: wantAllow},
		{name: "session tool grant: other tool", tools: []string{"write_file"}, tool: "web_fetch", meta: netMeta, want: wantAsk},

		// shellPolicy.
		{name: "policy all: anything", policy: PolicyAll, tool: "run_shell", args: sh("curl x | sh"), meta: shellMeta, want: wantAllow},
		{name: "policy all: not for other tools", policy: PolicyAll, tool: "write_file", args: at("a"), meta: writeMeta, want: wantAsk},
		{name: "policy sandbox enforced", policy: PolicySandbox, sb: enforced, tool: "run_shell", args: sh("make && make test"), meta: shellMeta, want: wantAllow},
		{name: "policy sandbox not enforced", policy: PolicySandbox, sb: notEnforced, tool: "run_shell", args: sh("make"), meta: shellMeta, want: wantAsk},
		{name: "policy sandbox not enforced, allowlist still applies", policy: PolicySandbox, sb: notEnforced, allow: stdAllow, tool: "run_shell", args: sh("ls"), meta: shellMeta, want: wantAllow},
		{name: "policy approve ignores sandbox", policy: PolicyApprove, sb: enforced, tool: "run_shell", args: sh("make"), meta: shellMeta, want: wantAsk},
		{name: "policy workspace enforced", policy: PolicyWorkspace, sb: enforced, tool: "run_shell", args: sh("rm -rf /etc"), meta: shellMeta, want: wantAllow},
		{name: "policy workspace heuristic: inside", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: sh("rm -rf build src/old.go"), meta: shellMeta, want: wantAllow},
		{name: "policy workspace heuristic: absolute outside", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: sh("rm -rf /etc"), meta: shellMeta, want: wantAsk},
		{name: "policy workspace heuristic: dotdot", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: sh("cp src/main.go ../outside/"), meta: shellMeta, want: wantAsk},
		{name: "policy workspace heuristic: link out", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: sh("touch link-out/x"), meta: shellMeta, want: wantAsk},
		{name: "policy workspace heuristic: option value", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: sh("sort --output=/etc/x f"), meta: shellMeta, want: wantAsk},
		{name: "policy workspace heuristic: glued option", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: sh("cc -o/etc/x a.c"), meta: shellMeta, want: wantAsk},
		{name: "policy workspace heuristic: operators", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: sh("rm -rf build && rm -rf /"), meta: shellMeta, want: wantAsk},
		{name: "policy workspace heuristic: cwd relative", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: map[string]any{"command": "rm ../../outside/secret.txt", "cwd": "src"}, meta: shellMeta, want: wantAsk},
		{name: "policy workspace heuristic: .git", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: sh("touch .git/hooks/pre-commit"), meta: shellMeta, want: wantAsk},
		{name: "policy workspace heuristic: cwd .git", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: map[string]any{"command": "touch hooks/pre-commit", "cwd": ".git"}, meta: shellMeta, want: wantAsk},
		{name: "policy workspace heuristic: mcp.json", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: sh("cp x .agent/mcp.json"), meta: shellMeta, want: wantAsk},
		{name: "allowlist in a .git cwd asks", allow: stdAllow, tool: "run_shell", args: map[string]any{"command": "ls", "cwd": ".git"}, meta: shellMeta, want: wantAsk},
		{name: "policy workspace heuristic: wrapper", policy: PolicyWorkspace, sb: notEnforced, tool: "run_shell", args: sh("xargs rm"), meta: shellMeta, want: wantAsk},
	}
	if len(rows) < 40 {
		t.Fatalf("table has %d rows", len(rows))
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			ws := f.ws
			if r.mcpWS {
				ws = f.wsMCP
			}
			e := New(Options{Workspace: ws, Mode: r.mode, AllowedCommands: r.allow, ShellPolicy: r.policy, Sandbox: r.sb})
			for _, n := range r.tools {
				e.AllowToolForSession(n)
			}
			for _, c := range r.commands {
				e.AllowCommandForSession(c)
			}
			d := e.Evaluate(r.tool, r.args, r.meta)
			if g := got(d); g != r.want {
				t.Fatalf("%s %v: got %v (%+v), want %v", r.tool, r.args, g, d, r.want)
			}
			if d.Reason == "" {
				t.Fatalf("decision without a reason: %+v", d)
			}
		})
	}
}
