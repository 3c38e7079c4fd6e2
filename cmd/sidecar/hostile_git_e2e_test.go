//go:build !windows

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Hostile .git folders (issue: git object stores that point outside): a
// project's .git is a real folder in the project, so the .git file and
// core.worktree guards pass, but its alternates or links lead to another
// repository on the machine. Nothing of that repository is read or
// written, and the model is told why.

// hostileGit runs git for the test's own setup, with no user config.
func hostileGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com",
		"-c", "core.hooksPath=/dev/null", "-c", "init.defaultBranch=main", "-c", "commit.gpgSign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// secretRepo is a repository outside every project, whose one commit's
// subject and file hold "other-secret".
func secretRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	hostileGit(t, dir, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("other-secret content\n"), 0o644))
	hostileGit(t, dir, "add", "secret.txt")
	hostileGit(t, dir, "commit", "-q", "-m", "other-secret subject")
	return dir
}

// hostileProject makes a project with a .git folder of its own and one
// commit, then lets edit make it hostile.
func hostileProject(t *testing.T, edit func(dotgit string)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	hostileGit(t, dir, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("mine\n"), 0o644))
	hostileGit(t, dir, "add", "mine.txt")
	hostileGit(t, dir, "commit", "-q", "-m", "mine")
	edit(filepath.Join(dir, ".git"))
	return dir
}

// openHostile spawns the sidecar on script, opens projDir with vcs and
// returns a subscribed session with extra settings.
func openHostile(t *testing.T, script, projDir, vcsMode string, extra map[string]any) *env {
	t.Helper()
	e := &env{dataDir: filepath.Join(t.TempDir(), "data"), projDir: projDir}
	e.p = spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script)
	e.c = e.p.connect(t)
	var pr struct {
		ProjectID string `json:"projectId"`
	}
	require.NoError(t, e.c.Call(tctx(t), "project.open", map[string]string{"path": projDir, "vcs": vcsMode}, &pr))
	var err error
	e.sid, err = e.c.CreateSession(tctx(t), pr.ProjectID, extra)
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	return e
}

// TestE2EGitToolsRefuseAlternatesOutside: the project's .git names the
// other repository's objects in objects/info/alternates (a relative path)
// and its branch names the other repository's commit. git_log and
// git_diff, which run without approval, answer an error that says why,
// and nothing of the other repository reaches the model.
func TestE2EGitToolsRefuseAlternatesOutside(t *testing.T) {
	other := secretRepo(t)
	proj := hostileProject(t, func(dotgit string) {
		objects := filepath.Join(dotgit, "objects")
		rel, err := filepath.Rel(objects, filepath.Join(other, ".git", "objects"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(objects, "info", "alternates"), []byte(rel+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dotgit, "refs", "heads", "main"), []byte(hostileGit(t, other, "rev-parse", "HEAD")+"\n"), 0o644))
	})
	// The attack is live: plain git in the project reads the other
	// repository through the alternates.
	require.Contains(t, hostileGit(t, proj, "log", "-1", "--format=%s"), "other-secret")

	script := writeScript(t,
		calls("", toolCall("c1", "git_log", map[string]any{}), toolCall("c2", "git_diff", map[string]any{})),
		text("done"),
	)
	e := openHostile(t, script, proj, "off", nil)
	_, err := e.c.StartTurn(tctx(t), e.sid, "show me the history")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Empty(t, ofType(evs, "permission_required"), "the git tools run without approval")
	fins := ofType(evs, "tool_finished")
	require.Len(t, fins, 2)
	for _, ev := range fins {
		fin := dataOf(t, ev)
		require.Equal(t, "error", fin["status"], fin)
		preview, _ := fin["result_preview"].(string)
		require.Contains(t, preview, "outside the project", fin)
		require.Contains(t, preview, ".git/objects/info/alternates", fin)
		require.NotContains(t, string(mustJSON(t, fin)), "other-secret")
	}
	for _, ev := range evs {
		require.NotContains(t, string(ev.Data), "other-secret subject", ev.Type)
	}
}

// TestE2EAllowlistedGitCannotDumpAnotherRepository: with git allowlisted
// (read-only subcommands run unasked), `git cat-file --batch-all-objects
// --batch` in a project whose .git/objects is a link into another
// repository dumps nothing of it, and the result says why.
func TestE2EAllowlistedGitCannotDumpAnotherRepository(t *testing.T) {
	other := secretRepo(t)
	proj := hostileProject(t, func(dotgit string) {
		objects := filepath.Join(dotgit, "objects")
		require.NoError(t, os.RemoveAll(objects))
		require.NoError(t, os.Symlink(filepath.Join(other, ".git", "objects"), objects))
	})
	const dump = "git cat-file --batch-all-objects --batch"
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": dump})),
		text("done"),
	)
	e := openHostile(t, script, proj, "off", map[string]any{"allowedCommands": []string{"git"}})
	_, err := e.c.StartTurn(tctx(t), e.sid, "dump the objects")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Empty(t, ofType(evs, "permission_required"), "git cat-file is allowlisted")
	fin := dataOf(t, ofType(evs, "tool_finished")[0])
	require.Equal(t, "ok", fin["status"], fin)
	preview, _ := fin["result_preview"].(string)
	require.Contains(t, preview, "not a git repository", fin)
	require.Contains(t, preview, "outside the project", fin)
	require.Contains(t, preview, ".git/objects link", fin)
	for _, ev := range evs {
		require.NotContains(t, string(ev.Data), "other-secret", ev.Type)
	}
}

// TestE2ESnapshotsNeverWriteAnotherRepository: the project's .git has its
// objects and refs linked into another repository and its snapshots'
// private folder linked to a folder outside. With vcs on (auto), the turn
// is snapshotted in the shadow repository (the plan says why), the other
// repository gets no ref and no object, and the outside folder stays empty.
func TestE2ESnapshotsNeverWriteAnotherRepository(t *testing.T) {
	other := secretRepo(t)
	outside := t.TempDir()
	proj := hostileProject(t, func(dotgit string) {
		for _, d := range []string{"objects", "refs"} {
			require.NoError(t, os.RemoveAll(filepath.Join(dotgit, d)))
			require.NoError(t, os.Symlink(filepath.Join(other, ".git", d), filepath.Join(dotgit, d)))
		}
		require.NoError(t, os.Symlink(outside, filepath.Join(dotgit, "zqagent")))
	})
	objectsBefore := hostileGit(t, other, "count-objects", "-v")
	refsBefore := hostileGit(t, other, "for-each-ref")

	script := writeScript(t,
		calls("", toolCall("w1", "write_file", map[string]any{"path": "new.txt", "content": "written by the turn\n"})),
		text("wrote it"),
	)
	e := openHostile(t, script, proj, "auto", map[string]any{"mode": "auto"})
	_, err := e.c.StartTurn(tctx(t), e.sid, "write a file")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "ok", dataOf(t, ofType(evs, "tool_finished")[0])["status"])

	var res struct {
		Turns []json.RawMessage `json:"turns"`
		Plan  struct {
			Mode   string `json:"mode"`
			Status string `json:"status"`
		} `json:"plan"`
	}
	// The end-of-turn snapshot may still run when turn_end arrives.
	require.Eventually(t, func() bool {
		err := e.c.Call(tctx(t), "vcs.turns", map[string]string{"sessionId": e.sid}, &res)
		return err == nil && len(res.Turns) == 1
	}, 20*time.Second, 20*time.Millisecond, "the turn was snapshotted somewhere")
	require.Equal(t, refsBefore, hostileGit(t, other, "for-each-ref"), "refs written into the other repository")
	require.Equal(t, objectsBefore, hostileGit(t, other, "count-objects", "-v"), "objects written into the other repository")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries, "the private folder's link was followed")
	require.Equal(t, "shadow", res.Plan.Mode, res.Plan.Status)
	require.Contains(t, res.Plan.Status, "outside the project")
}
