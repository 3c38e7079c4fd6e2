//go:build !windows

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// Git worktrees and monorepo folders (issue: they work as git projects once
// the user confirms the repository), through the real binary and real git.

type wireCandidate struct {
	Kind       string `json:"kind"`
	Repository string `json:"repository"`
	GitDir     string `json:"gitDir"`
	CommonDir  string `json:"commonDir"`
	Hash       string `json:"hash"`
	Trusted    bool   `json:"trusted"`
}

type wireProject struct {
	ProjectID    string         `json:"projectId"`
	Path         string         `json:"path"`
	Git          bool           `json:"git"`
	GitCandidate *wireCandidate `json:"gitCandidate"`
}

// realTemp is a fresh temp folder, symlinks resolved.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// openProject spawns the sidecar on script and opens dir (vcs auto).
func openProject(t *testing.T, script, dir string, extra map[string]any) (*env, wireProject) {
	t.Helper()
	e := &env{dataDir: filepath.Join(t.TempDir(), "data"), projDir: dir}
	e.p = spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script)
	e.c = e.p.connect(t)
	var pr wireProject
	require.NoError(t, e.c.Call(tctx(t), "project.open", map[string]string{"path": dir, "vcs": "auto"}, &pr))
	var err error
	e.sid, err = e.c.CreateSession(tctx(t), pr.ProjectID, extra)
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	return e, pr
}

// turnResults runs a turn and returns its tool_finished data by call id.
func turnResults(t *testing.T, e *env, prompt string) (map[string]map[string]any, []client.Event) {
	t.Helper()
	_, err := e.c.StartTurn(tctx(t), e.sid, prompt)
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Empty(t, ofType(evs, "permission_required"))
	out := map[string]map[string]any{}
	for _, ev := range ofType(evs, "tool_finished") {
		d := dataOf(t, ev)
		out[d["reqId"].(string)] = d
	}
	return out, evs
}

func previewOf(d map[string]any) string { s, _ := d["result_preview"].(string); return s }

// vcsTurns waits for n snapshotted turns and returns vcs.turns' result.
func vcsTurns(t *testing.T, e *env, n int) (res struct {
	Turns []struct {
		Number int `json:"number"`
		Files  []struct {
			Path string `json:"path"`
		} `json:"files"`
	} `json:"turns"`
	Plan struct {
		Mode   string `json:"mode"`
		Status string `json:"status"`
	} `json:"plan"`
}) {
	t.Helper()
	require.Eventually(t, func() bool {
		err := e.c.Call(tctx(t), "vcs.turns", map[string]string{"sessionId": e.sid}, &res)
		return err == nil && len(res.Turns) == n
	}, 20*time.Second, 20*time.Millisecond, "%d snapshotted turns", n)
	return res
}

// TestE2EWorktreeTrust: a `git worktree add` folder is offered (resolved
// paths), refused until trusted, a stale hash is -32003; once trusted the
// git tools, allowlisted git and native snapshots (refs of that worktree
// only) work and the main work tree's changes are not shown; a rewritten
// .git file makes it untrusted again.
func TestE2EWorktreeTrust(t *testing.T) {
	main := filepath.Join(realTemp(t), "main")
	require.NoError(t, os.MkdirAll(main, 0o755))
	hostileGit(t, main, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(main, "a.txt"), []byte("a\n"), 0o644))
	hostileGit(t, main, "add", "a.txt")
	hostileGit(t, main, "commit", "-q", "-m", "first commit")
	wt := filepath.Join(realTemp(t), "wt")
	hostileGit(t, main, "worktree", "add", "-q", "-b", "feature", wt)
	// The main work tree has a change of its own, never shown in wt.
	require.NoError(t, os.WriteFile(filepath.Join(main, "mainonly.txt"), []byte("main work\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(wt, "wtfile.txt"), []byte("wt work\n"), 0o644))

	script := writeScript(t,
		calls("", toolCall("c1", "git_status", map[string]any{})), text("t1"),
		calls("", toolCall("c2", "write_file", map[string]any{"path": "new.txt", "content": "n\n"}),
			toolCall("c3", "git_status", map[string]any{}),
			toolCall("c4", "run_shell", map[string]any{"command": "git log --oneline -1"})), text("t2"),
		calls("", toolCall("c5", "git_status", map[string]any{})), text("t3"),
	)
	e, pr := openProject(t, script, wt, map[string]any{"mode": "auto", "allowedCommands": []string{"git"}})
	require.False(t, pr.Git)
	require.NotNil(t, pr.GitCandidate)
	c := *pr.GitCandidate
	require.Equal(t, wireCandidate{Kind: "worktree", Repository: main, GitDir: filepath.Join(main, ".git", "worktrees", "wt"),
		CommonDir: filepath.Join(main, ".git"), Hash: c.Hash}, c)

	res, _ := turnResults(t, e, "status please")
	require.Equal(t, "error", res["c1"]["status"])
	require.Contains(t, previewOf(res["c1"]), "project.trustGit")

	err := e.c.Call(tctx(t), "project.trustGit", map[string]string{"projectId": pr.ProjectID, "hash": "sha256:00"}, nil)
	require.Equal(t, client.CodeConflict, client.Code(err), "%v", err)
	var trusted wireProject
	require.NoError(t, e.c.Call(tctx(t), "project.trustGit", map[string]string{"projectId": pr.ProjectID, "hash": c.Hash}, &trusted))
	require.True(t, trusted.Git)
	require.True(t, trusted.GitCandidate.Trusted)

	res, _ = turnResults(t, e, "write and look")
	require.Equal(t, "ok", res["c3"]["status"], res["c3"])
	st := previewOf(res["c3"])
	require.Contains(t, st, `"branch":"feature"`)
	require.Contains(t, st, "wtfile.txt")
	require.NotContains(t, st, "mainonly")
	require.Equal(t, "ok", res["c4"]["status"], res["c4"])
	require.Contains(t, previewOf(res["c4"]), "first commit", "allowlisted git uses the trusted worktree")

	turns := vcsTurns(t, e, 1)
	require.Equal(t, "native", turns.Plan.Mode, turns.Plan.Status)
	require.Equal(t, "new.txt", turns.Turns[0].Files[0].Path)
	require.Empty(t, hostileGit(t, main, "for-each-ref", "refs/agent"), "the main work tree sees no snapshot of wt")
	require.FileExists(t, filepath.Join(main, ".git", "worktrees", "wt", "refs", "worktree", "agent", e.sid, "head"))

	// Rewritten .git file (same target, other bytes): untrusted again.
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+c.GitDir+"\n\n"), 0o644))
	res, _ = turnResults(t, e, "status again")
	require.Equal(t, "error", res["c5"]["status"])
	require.Contains(t, previewOf(res["c5"]), "project.trustGit")
	var again wireProject
	require.NoError(t, e.c.Call(tctx(t), "project.open", map[string]string{"path": wt}, &again))
	require.False(t, again.Git)
	require.False(t, again.GitCandidate.Trusted)
	require.NotEqual(t, c.Hash, again.GitCandidate.Hash)
	require.NoError(t, e.c.Call(tctx(t), "project.trustGit", map[string]string{"projectId": pr.ProjectID, "hash": again.GitCandidate.Hash}, nil))
	var untrusted wireProject
	require.NoError(t, e.c.Call(tctx(t), "project.untrustGit", map[string]string{"projectId": pr.ProjectID}, &untrusted))
	require.False(t, untrusted.Git)
}

// TestE2EMonorepoFolderScoped: a package of a monorepo, trusted, sees only
// its own folder: git_status and git_diff list its paths relative to it,
// git_log only commits that touch it, allowlisted git gets no repository
// (and says why), and nothing of a secret file beside the folder reaches
// the model; snapshots are native and hold the folder's files only.
func TestE2EMonorepoFolderScoped(t *testing.T) {
	top := filepath.Join(realTemp(t), "mono")
	app := filepath.Join(top, "packages", "app")
	other := filepath.Join(top, "packages", "other")
	for _, d := range []string{app, other} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	hostileGit(t, top, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(app, "a.txt"), []byte("a\n"), 0o644))
	hostileGit(t, top, "add", ".")
	hostileGit(t, top, "commit", "-q", "-m", "app first")
	require.NoError(t, os.WriteFile(filepath.Join(top, "topsecret.txt"), []byte("TOPSECRET one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(other, "o.txt"), []byte("TOPSECRET other\n"), 0o644))
	hostileGit(t, top, "add", ".")
	hostileGit(t, top, "commit", "-q", "-m", "topsecret commit")
	for name, body := range map[string]string{
		filepath.Join(app, "a.txt"): "a changed\n", filepath.Join(top, "topsecret.txt"): "TOPSECRET two\n",
		filepath.Join(other, "o.txt"): "TOPSECRET three\n", filepath.Join(top, "topsecret-untracked.txt"): "TOPSECRET\n",
	} {
		require.NoError(t, os.WriteFile(name, []byte(body), 0o644))
	}

	script := writeScript(t,
		calls("", toolCall("s", "git_status", map[string]any{}), toolCall("d", "git_diff", map[string]any{}),
			toolCall("l", "git_log", map[string]any{}), toolCall("r", "run_shell", map[string]any{"command": "git log --stat"}),
			toolCall("x", "git_diff", map[string]any{"ref": "HEAD:../../topsecret.txt"}),
			toolCall("w", "write_file", map[string]any{"path": "new.txt", "content": "n\n"})),
		text("done"),
	)
	e, pr := openProject(t, script, app, map[string]any{"mode": "auto", "allowedCommands": []string{"git"}})
	require.False(t, pr.Git)
	require.Equal(t, "enclosing", pr.GitCandidate.Kind)
	require.Equal(t, top, pr.GitCandidate.Repository)
	require.Equal(t, filepath.Join(top, ".git"), pr.GitCandidate.GitDir)
	require.NoError(t, e.c.Call(tctx(t), "project.trustGit", map[string]string{"projectId": pr.ProjectID, "hash": pr.GitCandidate.Hash}, nil))

	res, evs := turnResults(t, e, "look around")
	require.Equal(t, "ok", res["s"]["status"], res["s"])
	require.Contains(t, previewOf(res["s"]), `"path":"a.txt"`)
	require.NotContains(t, previewOf(res["s"]), "packages/")
	require.Equal(t, "ok", res["d"]["status"], res["d"])
	require.Contains(t, previewOf(res["d"]), "a/a.txt")
	require.Equal(t, "ok", res["l"]["status"], res["l"])
	require.Contains(t, previewOf(res["l"]), "app first")
	require.Contains(t, previewOf(res["r"]), "larger repository", "allowlisted git is refused in a folder")
	require.Equal(t, "error", res["x"]["status"], "a ref naming a path outside is refused")
	for _, ev := range evs {
		if ev.Type == "tool_started" || ev.Type == "tool_call" || ev.Type == "message_delta" {
			continue // the call's own arguments name the path
		}
		require.NotContains(t, strings.ToLower(string(ev.Data)), "topsecret ", ev.Type)
		require.NotContains(t, string(ev.Data), "TOPSECRET", ev.Type)
		require.NotContains(t, string(ev.Data), "topsecret commit", ev.Type)
		require.NotContains(t, string(ev.Data), "o.txt", ev.Type)
	}

	turns := vcsTurns(t, e, 1)
	require.Equal(t, "native", turns.Plan.Mode, turns.Plan.Status)
	require.Len(t, turns.Turns[0].Files, 1)
	require.Equal(t, "new.txt", turns.Turns[0].Files[0].Path)
	var diff struct {
		Patch string `json:"diff"`
	}
	require.NoError(t, e.c.Call(tctx(t), "vcs.diff", map[string]any{"sessionId": e.sid, "turn": 1}, &diff))
	require.Contains(t, diff.Patch, "b/new.txt")
	require.NotContains(t, diff.Patch, "TOPSECRET")
	require.NoError(t, os.Remove(filepath.Join(app, "new.txt")))
	var restored json.RawMessage
	require.NoError(t, e.c.Call(tctx(t), "vcs.restore", map[string]any{"sessionId": e.sid, "turn": 1}, &restored))
	require.FileExists(t, filepath.Join(app, "new.txt"), "restore brought the turn's file back: %s", restored)
	require.NotContains(t, string(restored), "TOPSECRET")
	require.NotContains(t, string(restored), "topsecret")
	require.FileExists(t, filepath.Join(top, "topsecret-untracked.txt"), "nothing outside the folder is touched")
}

// TestE2EWorktreeCreateListRemove: worktree.create makes a branch's work
// tree beside the main one, opened as its own trusted project;
// worktree.list shows both; worktree.remove refuses uncommitted changes
// unless forced.
func TestE2EWorktreeCreateListRemove(t *testing.T) {
	main := filepath.Join(realTemp(t), "repo")
	require.NoError(t, os.MkdirAll(main, 0o755))
	hostileGit(t, main, "init", "-q")
	require.NoError(t, os.WriteFile(filepath.Join(main, "a.txt"), []byte("a\n"), 0o644))
	hostileGit(t, main, "add", "a.txt")
	hostileGit(t, main, "commit", "-q", "-m", "first")
	e, pr := openProject(t, writeScript(t, text("hi")), main, nil)
	require.True(t, pr.Git)

	var created struct {
		Worktree struct {
			Path   string `json:"path"`
			Branch string `json:"branch"`
		} `json:"worktree"`
		Project wireProject `json:"project"`
	}
	require.NoError(t, e.c.Call(tctx(t), "worktree.create", map[string]string{"projectId": pr.ProjectID, "branch": "task/one"}, &created))
	want := filepath.Join(filepath.Dir(main), "repo.worktrees", "task-one")
	require.Equal(t, want, created.Worktree.Path)
	require.Equal(t, "task/one", created.Worktree.Branch)
	require.Equal(t, want, created.Project.Path)
	require.True(t, created.Project.Git, "trusted by construction")
	require.True(t, created.Project.GitCandidate.Trusted)
	require.FileExists(t, filepath.Join(want, "a.txt"))

	var list struct {
		Worktrees []struct {
			Path      string `json:"path"`
			Main      bool   `json:"main"`
			Current   bool   `json:"current"`
			ProjectID string `json:"projectId"`
		} `json:"worktrees"`
	}
	require.NoError(t, e.c.Call(tctx(t), "worktree.list", map[string]string{"projectId": pr.ProjectID}, &list))
	require.Len(t, list.Worktrees, 2)
	require.True(t, list.Worktrees[0].Main && list.Worktrees[0].Current)
	require.Equal(t, want, list.Worktrees[1].Path)
	require.Equal(t, created.Project.ProjectID, list.Worktrees[1].ProjectID)

	err := e.c.Call(tctx(t), "worktree.create", map[string]string{"projectId": pr.ProjectID, "branch": "--bad"}, nil)
	require.Equal(t, client.CodeInvalidParams, client.Code(err), "%v", err)
	err = e.c.Call(tctx(t), "worktree.remove", map[string]any{"projectId": pr.ProjectID}, nil)
	require.Equal(t, client.CodeForbidden, client.Code(err), "the main work tree is not removed: %v", err)

	require.NoError(t, os.WriteFile(filepath.Join(want, "wip.txt"), []byte("wip\n"), 0o644))
	err = e.c.Call(tctx(t), "worktree.remove", map[string]any{"projectId": created.Project.ProjectID}, nil)
	require.Equal(t, client.CodeConflict, client.Code(err), "%v", err)
	require.Contains(t, err.Error(), "uncommitted")
	require.FileExists(t, filepath.Join(want, "wip.txt"))
	require.NoError(t, e.c.Call(tctx(t), "worktree.remove", map[string]any{"projectId": created.Project.ProjectID, "force": true}, nil))
	require.NoDirExists(t, want)
	require.NoError(t, e.c.Call(tctx(t), "worktree.list", map[string]string{"projectId": pr.ProjectID}, &list))
	require.Len(t, list.Worktrees, 1)
}
