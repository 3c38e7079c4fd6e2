package permission

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/sandbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	if m, err := ParseMode("AUTO"); err != nil || m != ModeAuto {
		t.Fatalf("ParseMode: %v %v", m, err)
	}
	if m, _ := ParseMode(""); m != ModeInteractive {
		t.Fatalf("default mode %v", m)
	}
	if _, err := ParseMode("yolo"); !errors.Is(err, ErrUnknownMode) {
		t.Fatalf("bad mode: %v", err)
	}
	if p, _ := ParseShellPolicy(""); p != PolicyApprove {
		t.Fatalf("default policy %v", p)
	}
	if p, err := ParseShellPolicy("workspace"); err != nil || p != PolicyWorkspace {
		t.Fatalf("ParseShellPolicy: %v %v", p, err)
	}
	if _, err := ParseShellPolicy("never"); !errors.Is(err, ErrUnknownPolicy) {
		t.Fatalf("bad policy: %v", err)
	}
	for _, s := range []string{"once", "always_tool", "always_command", "deny"} {
		if o, err := ParseOutcome(s); err != nil || o.String() != s {
			t.Fatalf("ParseOutcome(%q) = %v %v", s, o, err)
		}
	}
	if _, err := ParseOutcome("maybe"); !errors.Is(err, ErrUnknownOutcome) {
		t.Fatalf("bad outcome: %v", err)
	}
	if d, _ := ParseDefaultApproval(""); d != DefaultError {
		t.Fatalf("default approval %v", d)
	}
	if _, err := ParseDefaultApproval("sometimes"); !errors.Is(err, ErrUnknownDefaultApproval) {
		t.Fatalf("bad default approval: %v", err)
	}
	if OutcomeDeny.Allows() || !OutcomeAlwaysTool.Allows() {
		t.Fatal("Allows")
	}
}

func TestFallback(t *testing.T) {
	ctx := context.Background()
	req := Request{ToolName: "write_file"}
	o, err := Fallback(DefaultError)(ctx, req)
	if !errors.Is(err, ErrNoApprover) || o.Allows() || !strings.Contains(err.Error(), "no approver") {
		t.Fatalf("error fallback: %v %v", o, err)
	}
	if o, err := Fallback(DefaultDeny)(ctx, req); err != nil || o != OutcomeDeny {
		t.Fatalf("deny fallback: %v %v", o, err)
	}
	if o, err := Fallback(DefaultAllow)(ctx, req); err != nil || o != OutcomeOnce {
		t.Fatalf("allow fallback: %v %v", o, err)
	}
}

func TestRuntimeChanges(t *testing.T) {
	f := newFixture(t)
	e := New(Options{Workspace: f.ws})
	if e.Mode() != ModeInteractive || e.ShellPolicy() != PolicyApprove {
		t.Fatalf("defaults: %v %v", e.Mode(), e.ShellPolicy())
	}
	if d := e.Evaluate("write_file", at("a.txt"), writeMeta); !d.NeedsUser {
		t.Fatalf("interactive write: %+v", d)
	}
	e.SetMode(ModePlan)
	if d := e.Evaluate("write_file", at("a.txt"), writeMeta); d.Allowed || d.NeedsUser {
		t.Fatalf("plan write: %+v", d)
	}
	e.SetMode(ModeAuto)
	if d := e.Evaluate("write_file", at("a.txt"), writeMeta); !d.Allowed {
		t.Fatalf("auto write: %+v", d)
	}
	e.SetMode(ModeInteractive)
	e.SetAllowedCommands([]string{"go test", "  ", ""})
	if got := e.AllowedCommands(); len(got) != 1 || got[0] != "go test" {
		t.Fatalf("AllowedCommands = %q", got)
	}
	if d := e.Evaluate("run_shell", sh("go test ./..."), shellMeta); !d.Allowed {
		t.Fatalf("allowlisted: %+v", d)
	}
	e.SetShellPolicy(PolicyAll)
	if d := e.Evaluate("run_shell", sh("go vet ./... && rm x"), shellMeta); !d.Allowed {
		t.Fatalf("policy all: %+v", d)
	}
	if e.Sandbox() != (sandbox.Status{}) || e.Workspace() != f.ws {
		t.Fatal("Sandbox/Workspace accessors")
	}
}

func TestRecord(t *testing.T) {
	f := newFixture(t)
	e := New(Options{Workspace: f.ws})
	e.Record(Request{ToolName: "web_fetch"}, OutcomeOnce)
	e.Record(Request{ToolName: "web_fetch"}, OutcomeDeny)
	if len(e.SessionTools()) != 0 {
		t.Fatalf("once/deny recorded grants: %q", e.SessionTools())
	}
	e.Record(Request{ToolName: "web_fetch"}, OutcomeAlwaysTool)
	e.Record(Request{ToolName: "apply_patch"}, OutcomeAlwaysTool)
	if got := e.SessionTools(); strings.Join(got, ",") != "apply_patch,web_fetch" {
		t.Fatalf("SessionTools = %q", got)
	}
	// The executable comes from req.Command, or from the command argument.
	e.Record(Request{ToolName: "run_shell", Command: "make"}, OutcomeAlwaysCommand)
	e.Record(Request{ToolName: "run_shell", Arguments: sh("go build ./...")}, OutcomeAlwaysCommand)
	// Not simple, or a wrapper: nothing is granted.
	e.Record(Request{ToolName: "run_shell", Arguments: sh("ls | sh")}, OutcomeAlwaysCommand)
	e.Record(Request{ToolName: "run_shell", Arguments: sh("sudo rm")}, OutcomeAlwaysCommand)
	e.Record(Request{ToolName: "run_shell", Arguments: sh("git push origin main")}, OutcomeAlwaysCommand)
	if got := e.SessionCommands(); strings.Join(got, ",") != "go,make" {
		t.Fatalf("SessionCommands = %q", got)
	}
	if d := e.Evaluate("run_shell", sh("go test ./..."), shellMeta); !d.Allowed {
		t.Fatalf("granted command: %+v", d)
	}
	if d := e.Evaluate("web_fetch", map[string]any{"url": "https://x"}, netMeta); !d.Allowed {
		t.Fatalf("granted tool: %+v", d)
	}
	// Restoring a session (SavedState.allowTools / allowCommands).
	r := New(Options{Workspace: f.ws})
	for _, n := range e.SessionTools() {
		r.AllowToolForSession(n)
	}
	for _, c := range e.SessionCommands() {
		r.AllowCommandForSession(c)
	}
	if d := r.Evaluate("run_shell", sh("make all"), shellMeta); !d.Allowed {
		t.Fatalf("restored grant: %+v", d)
	}
}

func TestCommandExecutable(t *testing.T) {
	for _, c := range []struct {
		cmd, exe string
		ok       bool
	}{
		{"make build", "make", true},
		{"  go test ./...  ", "go", true},
		{`"./build.sh" --fast`, "./build.sh", true},
		{"find . -delete", "find", true}, // the grant is useful; -delete still asks
		{"ls; rm", "", false},
		{"FOO=1 make", "", false},
		{"make > out", "", false},
		{"sudo make", "", false},
		{"env make", "", false},
		{"bash -c make", "", false},
		{"$(which make)", "", false},
		{"git status --short", "git", true},
		{"git push origin main", "", false}, // a grant for git would not cover it
		{"npm install x", "", false},
		{"npm test", "npm", true},
		{"", "", false},
	} {
		exe, ok := CommandExecutable(c.cmd)
		if exe != c.exe || ok != c.ok {
			t.Errorf("CommandExecutable(%q) = %q %v, want %q %v", c.cmd, exe, ok, c.exe, c.ok)
		}
	}
}

func TestMatchAllowlist(t *testing.T) {
	list := []string{"ls", "git status", "  "}
	for cmd, want := range map[string]bool{
		"ls": true, "ls -l": true, "lsof": false, "git status": true, "git status -s": true,
		"git statusx": false, "git": false, "ls;": false, "": false, "   ": false,
	} {
		if got := MatchAllowlist(cmd, list); got != want {
			t.Errorf("MatchAllowlist(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// TestDangerousReasons checks that the refusal comes from the named rule,
// not from an unrelated parse failure.
func TestDangerousReasons(t *testing.T) {
	for cmd, want := range map[string]string{
		"find . -exec rm '{}' +":  "find -exec",
		"find . -delete":          "-delete",
		"rg --pre=./x foo":        "rg --pre",
		"sed -i s/a/b/ f":         "sed -i",
		"sed 's/a/b/w out' f":     "s///w",
		"sed '1e id' f":           "sed e",
		"git -c a=b log":          "git -c",
		"git log --output=x":      "--output",
		"git diff --ext-diff":     "--ext-diff",
		"npx -c x":                "npx -c",
		"xargs rm":                "xargs",
		"awk 'BEGIN{system(1)}'":  "awk",
		"tar --to-command=sh -x":  "--to-command",
		"less f":                  "less",
		"ls $(x)":                 "shell operators",
		"python3 -c 1":            "-c",
		"git config a.b c":        "git config",
		"ssh -o ProxyCommand=x h": "ProxyCommand",
		"curl -o /tmp/x u":        "curl -o",
		"dd if=a of=b":            "dd of=",
		"/usr/bin/git -c a=b log": "git -c",
		"GIT.exe -c a=b log":      "git -c",
		"./find . -delete":        "-delete",
	} {
		_, reason, ok := SafeSimpleCommand(cmd)
		if ok || !strings.Contains(reason, want) {
			t.Errorf("SafeSimpleCommand(%q) = ok %v, reason %q; want a reason with %q", cmd, ok, reason, want)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	f := newFixture(t)
	e := New(Options{Workspace: f.ws, AllowedCommands: []string{"ls"}})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				switch (i + j) % 5 {
				case 0:
					e.SetMode(ModeInteractive)
				case 1:
					e.AllowCommandForSession("make")
				case 2:
					e.SetAllowedCommands([]string{"ls", "cat"})
				case 3:
					_ = e.SessionCommands()
				}
				if d := e.Evaluate("run_shell", sh("ls -l"), shellMeta); !d.Allowed {
					t.Errorf("ls: %+v", d)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestWindowsShellRules: under cmd.exe or PowerShell, quotes do not make
// operators literal, so any special character refuses the command.
func TestWindowsShellRules(t *testing.T) {
	old := windowsShell
	windowsShell = true
	t.Cleanup(func() { windowsShell = old })
	for cmd, want := range map[string]bool{
		"dir src":              true,
		"git status --short":   true,
		"echo 'a & del x'":     false,
		`echo "a | calc"`:      false,
		"type %USERPROFILE%":   false,
		"echo ^& calc":         false,
		"echo $(calc)":         false,
		"Get-Item '@{a=1}'":    false,
		"findstr foo (a)":      false,
		"git log --format=%an": false,
	} {
		if got := MatchAllowlist(cmd, []string{"dir", "git", "echo", "type", "Get-Item", "findstr"}); got != want {
			t.Errorf("windows MatchAllowlist(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// TestMCPConfigWithoutAgentDir: creating .agent/mcp.json when even .agent
// does not exist yet asks too, in AUTO mode; a read of it does not.
func TestMCPConfigWithoutAgentDir(t *testing.T) {
	ws, err := confine.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := New(Options{Workspace: ws, Mode: ModeAuto})
	if d := e.Evaluate("write_file", at(".agent/mcp.json"), writeMeta); !d.NeedsUser || !strings.Contains(d.Reason, "MCP") {
		t.Fatalf("write: %+v", d)
	}
	if d := e.Evaluate("apply_unified_diff", map[string]any{"diff": "--- /dev/null\n+++ b/.agent/mcp.json\n"}, patchMeta); !d.NeedsUser {
		t.Fatalf("diff: %+v", d)
	}
	if d := e.Evaluate("read_file", at(".agent/mcp.json"), readMeta); !d.Allowed {
		t.Fatalf("read: %+v", d)
	}
}
