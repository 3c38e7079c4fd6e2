package git

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type repo struct {
	t   *testing.T
	dir string
	reg *tools.Registry
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	ws, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &repo{t: t, dir: ws.Root(), reg: tools.NewRegistry()}
	RegisterGitTools(r.reg, ws)
	r.git("init", "-q", "-b", "main")
	return r
}

// git runs test setup commands (these may change state; the tools never do).
func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Tester", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_DATE=2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (r *repo) write(name, body string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commit(msg string, files map[string]string) {
	r.t.Helper()
	for name, body := range files {
		r.write(name, body)
		r.git("add", "--", name)
	}
	r.git("commit", "-q", "-m", msg)
}

func (r *repo) call(name string, args map[string]any) (any, error) {
	r.t.Helper()
	spec, ok := r.reg.Lookup(name)
	if !ok {
		r.t.Fatalf("%s not registered", name)
	}
	raw, _ := json.Marshal(args)
	return spec.Handler(context.Background(), tools.Call{Name: name, Args: raw})
}

func (r *repo) must(name string, args map[string]any) any {
	r.t.Helper()
	res, err := r.call(name, args)
	if err != nil {
		r.t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

func TestGitLog(t *testing.T) {
	r := newRepo(t)
	if res := r.must("git_log", nil).(LogResult); len(res.Commits) != 0 || res.Note == "" {
		t.Fatalf("empty repo log = %+v", res)
	}
	r.commit("first commit", map[string]string{"a.txt": "one\n"})
	r.commit("second: touch b", map[string]string{"b/b.txt": "two\n"})
	r.commit("third", map[string]string{"a.txt": "one\nthree\n"})
	r.git("tag", "v1", "HEAD~1")

	res := r.must("git_log", nil).(LogResult)
	if len(res.Commits) != 3 || res.Commits[0].Subject != "third" || res.Commits[2].Subject != "first commit" {
		t.Fatalf("log = %+v", res.Commits)
	}
	c := res.Commits[0]
	if len(c.Hash) != 40 || !strings.HasPrefix(c.Hash, c.Short) || c.Author != "Tester" || c.Email != "t@example.com" || !strings.HasPrefix(c.Date, "2024-01-02T03:04:05") {
		t.Fatalf("commit fields = %+v", c)
	}
	subjects := func(res LogResult) []string {
		var s []string
		for _, c := range res.Commits {
			s = append(s, c.Subject)
		}
		return s
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"max_count": 1}, "third"},
		{map[string]any{"path": "a.txt"}, "third,first commit"},
		{map[string]any{"path": "b"}, "second: touch b"},
		{map[string]any{"ref": "v1"}, "second: touch b,first commit"},
		{map[string]any{"ref": "HEAD~2..HEAD", "path": "a.txt"}, "third"},
	} {
		if got := strings.Join(subjects(r.must("git_log", tc.args).(LogResult)), ","); got != tc.want {
			t.Errorf("log %v = %q, want %q", tc.args, got, tc.want)
		}
	}
	if _, err := r.call("git_log", map[string]any{"ref": "no-such-branch"}); !errors.Is(err, ErrGit) {
		t.Errorf("unknown ref: err = %v, want ErrGit", err)
	}
}

func TestGitStatus(t *testing.T) {
	r := newRepo(t)
	r.commit("init", map[string]string{"keep.txt": "k\n", "mod.txt": "m\n", "del.txt": "d\n", "old.txt": "old content here\n"})
	st := r.must("git_status", nil).(Status)
	if !st.Clean || st.Branch != "main" || len(st.Entries) != 0 {
		t.Fatalf("clean status = %+v", st)
	}
	r.write("mod.txt", "m2\n")     // unstaged modification
	r.write("new.txt", "n\n")      // untracked
	r.write("dir/deep.txt", "x\n") // untracked in a new dir
	r.write("staged.txt", "s\n")   // staged add
	r.git("add", "staged.txt")
	r.git("rm", "-q", "del.txt")          // staged delete
	r.git("mv", "old.txt", "renamed.txt") // staged rename
	r.write(".gitignore", "*.log\n")      // untracked
	r.write("ignored.log", "i\n")         // ignored: not listed
	st = r.must("git_status", nil).(Status)
	got := map[string]StatusEntry{}
	for _, e := range st.Entries {
		got[e.Path] = e
	}
	want := map[string]StatusEntry{
		"mod.txt":      {Path: "mod.txt", Unstaged: "modified", State: "changed"},
		"new.txt":      {Path: "new.txt", State: "untracked"},
		"dir/deep.txt": {Path: "dir/deep.txt", State: "untracked"},
		".gitignore":   {Path: ".gitignore", State: "untracked"},
		"staged.txt":   {Path: "staged.txt", Staged: "added", State: "changed"},
		"del.txt":      {Path: "del.txt", Staged: "deleted", State: "changed"},
		"renamed.txt":  {Path: "renamed.txt", OrigPath: "old.txt", Staged: "renamed", State: "renamed"},
	}
	if st.Clean || len(got) != len(want) {
		t.Fatalf("status entries = %+v", st.Entries)
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: got %+v, want %+v", p, got[p], w)
		}
	}
}

func TestGitDiff(t *testing.T) {
	r := newRepo(t)
	r.commit("one", map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"})
	r.commit("two", map[string]string{"a.txt": "alpha\nalpha2\n"})
	r.write("a.txt", "alpha\nalpha2\nunstaged line\n")
	r.write("b.txt", "beta staged\n")
	r.git("add", "b.txt")

	diff := func(args map[string]any) string { return r.must("git_diff", args).(string) }
	if d := diff(nil); !strings.Contains(d, "+unstaged line") || strings.Contains(d, "beta staged") {
		t.Errorf("unstaged diff = %q", d)
	}
	if d := diff(map[string]any{"staged": true}); !strings.Contains(d, "+beta staged") || strings.Contains(d, "unstaged line") {
		t.Errorf("staged diff = %q", d)
	}
	if d := diff(map[string]any{"ref": "HEAD~1..HEAD"}); !strings.Contains(d, "+alpha2") || strings.Contains(d, "unstaged") || strings.Contains(d, "b.txt") {
		t.Errorf("range diff = %q", d)
	}
	if d := diff(map[string]any{"ref": "HEAD~1"}); !strings.Contains(d, "+alpha2") || !strings.Contains(d, "+unstaged line") {
		t.Errorf("ref vs work tree diff = %q", d)
	}
	if d := diff(map[string]any{"ref": "HEAD", "path": "b.txt"}); !strings.Contains(d, "+beta staged") || strings.Contains(d, "a.txt") {
		t.Errorf("path diff = %q", d)
	}
	if d := diff(map[string]any{"stat": true}); !strings.Contains(d, "a.txt | 1 +") || strings.Contains(d, "@@") {
		t.Errorf("stat diff = %q", d)
	}
	r.git("add", "a.txt")
	r.git("commit", "-q", "-m", "three")
	if d := diff(nil); d != "No differences." {
		t.Errorf("clean diff = %q", d)
	}
}

func TestGitDiffCapped(t *testing.T) {
	r := newRepo(t)
	r.commit("one", map[string]string{"big.txt": "x\n"})
	r.write("big.txt", strings.Repeat("a long line of changed text\n", 10000))
	d := r.must("git_diff", nil).(string)
	if len(d) > maxOutputBytes+200 || !strings.Contains(d, "diff cut at") {
		t.Fatalf("diff not capped: %d bytes", len(d))
	}
}

func TestGitRefusesInjection(t *testing.T) {
	r := newRepo(t)
	r.commit("one", map[string]string{"a.txt": "a\n"})
	marker := filepath.Join(t.TempDir(), "pwned")
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"git_log", map[string]any{"ref": "--output=" + marker}},
		{"git_log", map[string]any{"ref": "-c"}},
		{"git_log", map[string]any{"ref": "--exec=touch " + marker}},
		{"git_log", map[string]any{"path": "--output=" + marker}},
		{"git_log", map[string]any{"ref": "HEAD\n--output=x"}},
		{"git_diff", map[string]any{"ref": "--output=" + marker}},
		{"git_diff", map[string]any{"ref": "--ext-diff"}},
		{"git_diff", map[string]any{"ref": "-ccore.pager=touch " + marker}},
		{"git_diff", map[string]any{"ref": "--upload-pack=touch " + marker}},
		{"git_diff", map[string]any{"path": "-p"}},
		{"git_diff", map[string]any{"path": "--textconv"}},
	}
	for _, tc := range cases {
		_, err := r.call(tc.tool, tc.args)
		if !errors.Is(err, ErrUnsafeArg) || !errors.Is(err, tools.ErrInvalidArgs) {
			t.Errorf("%s %v: err = %v, want ErrUnsafeArg", tc.tool, tc.args, err)
		}
	}
	for _, p := range []string{"../x", "/etc/passwd", r.dir + "-evil"} {
		_, err := r.call("git_diff", map[string]any{"path": p})
		if !errors.Is(err, tools.ErrOutsideWorkspace) {
			t.Errorf("path %q: err = %v, want ErrOutsideWorkspace", p, err)
		}
	}
	// Pathspec magic is literal: ":(top)" names a file, not the top.
	if d := r.must("git_diff", map[string]any{"path": ":(exclude)a.txt"}).(string); d != "No differences." {
		t.Errorf("pathspec magic interpreted: %q", d)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an injected option ran")
	}
}

// TestGitRunsNoRepoPrograms configures, in the repository itself, every
// hook that would make git run a program on status, diff or log; none may
// run.
func TestGitRunsNoRepoPrograms(t *testing.T) {
	r := newRepo(t)
	r.commit("one", map[string]string{"a.txt": "a\n", "b.bin": "b\n"})
	// A signed commit on top (a fake signature makes git call gpg.program).
	signed := filepath.Join(t.TempDir(), "signed")
	obj := "tree " + strings.TrimSpace(r.git("rev-parse", "HEAD^{tree}")) + "\nparent " + strings.TrimSpace(r.git("rev-parse", "HEAD")) +
		"\nauthor T <t@example.com> 1700000000 +0000\ncommitter T <t@example.com> 1700000000 +0000\n" +
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n"
	if err := os.WriteFile(signed, []byte(obj), 0o644); err != nil {
		t.Fatal(err)
	}
	r.git("update-ref", "HEAD", strings.TrimSpace(r.git("hash-object", "-t", "commit", "-w", signed)))
	marker := filepath.Join(t.TempDir(), "ran")
	touch := "sh -c 'echo $0 >> " + marker + "; cat'"
	r.git("config", "filter.evil.clean", touch+" clean")
	r.git("config", "filter.evil.smudge", touch+" smudge")
	r.git("config", "filter.evil2.process", touch+" process")
	r.git("config", "diff.evil.textconv", touch+" textconv")
	r.git("config", "diff.evil.command", touch+" command")
	r.git("config", "diff.external", touch+" external")
	r.git("config", "core.pager", touch+" pager")
	r.git("config", "core.fsmonitor", touch+" fsmonitor")
	r.git("config", "log.showSignature", "true")
	r.git("config", "gpg.program", touch+" gpg")
	r.write(".gitattributes", "*.txt filter=evil diff=evil\n*.bin filter=evil2\n")
	// Attributes the work tree does not show, and hooks.
	r.git("config", "filter.evil3.clean", touch+" info-clean")
	r.write(".git/info/attributes", "*.md filter=evil3\n")
	r.commit("md", map[string]string{"c.md": "c\n"})
	r.write("c.md", "c changed\n")
	for _, hook := range []string{"reference-transaction", "post-index-change"} {
		r.write(".git/hooks/"+hook, "#!/bin/sh\necho hook >> "+marker+"\n")
		if err := os.Chmod(filepath.Join(r.dir, ".git", "hooks", hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.write("a.txt", "a changed\n")
	r.write("b.bin", "b changed\n")
	_ = os.Remove(marker) // the setup's own git ran them
	// Make the stat info stale so that git must re-read (and filter) files.
	r.must("git_status", nil)
	if d := r.must("git_diff", nil).(string); !strings.Contains(d, "+a changed") {
		t.Fatalf("diff = %q", d)
	}
	r.must("git_diff", map[string]any{"ref": "HEAD"})
	r.must("git_log", nil)
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("git ran repository-configured programs: %s", b)
	}
}

func TestGitNotARepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	// Keep git from finding a repository above the temp dir.
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	ws, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	RegisterGitTools(reg, ws)
	for _, name := range []string{"git_log", "git_status", "git_diff"} {
		spec, _ := reg.Lookup(name)
		_, err := spec.Handler(context.Background(), tools.Call{Name: name, Args: json.RawMessage(`{}`)})
		if !errors.Is(err, ErrNotRepo) {
			t.Errorf("%s outside a repo: err = %v, want ErrNotRepo", name, err)
		}
	}
}

func TestGitMetadata(t *testing.T) {
	r := newRepo(t)
	for _, name := range []string{"git_log", "git_status", "git_diff"} {
		s, _ := r.reg.Lookup(name)
		if s.Meta.Class != tools.ClassRead || s.Meta.RiskLevel != tools.RiskLow || s.Meta.RequiresApproval {
			t.Errorf("%s meta = %+v", name, s.Meta)
		}
		if !json.Valid(s.Schema.Function.Parameters) || s.Schema.Function.Description == "" {
			t.Errorf("%s: bad schema", name)
		}
	}
}
