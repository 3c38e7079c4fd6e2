//go:build !windows

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Submodules (issue: inert git recursing into submodules): a git run
// inside a submodule reads the submodule's own config and attributes, and
// a submodule's .git file can name any repository on the machine. The
// sidecar's git never looks into a submodule: nothing the submodule's
// config names runs, and nothing of another repository is shown, without
// the user's approval.

// TestE2ESubmoduleConfigNeverRuns: the project's submodule has a clean
// filter in its own config (.git/modules/sub/config) for its *.txt, and
// .gitmodules asks for ignore=none. Each turn rewrites the submodule's
// file with the same content (git must hash it, through the filter) and
// then calls git_status, or an allowlisted `git status`; every turn is
// snapshotted (vcs auto: native). The filter never runs.
func TestE2ESubmoduleConfigNeverRuns(t *testing.T) {
	up := secretRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	prog := filepath.Join(t.TempDir(), "clean.sh")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\necho clean >> '"+marker+"'\nexec cat\n"), 0o755))
	proj := hostileProject(t, func(string) {})
	hostileGit(t, proj, "-c", "protocol.file.allow=always", "submodule", "add", "-q", up, "sub")
	hostileGit(t, proj, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none")
	hostileGit(t, proj, "commit", "-q", "-am", "sub")
	sub := filepath.Join(proj, "sub")
	hostileGit(t, sub, "config", "filter.x.clean", prog)
	require.NoError(t, os.WriteFile(filepath.Join(sub, ".gitattributes"), []byte("*.txt filter=x\n"), 0o644))
	secret := filepath.Join(sub, "secret.txt")
	content, err := os.ReadFile(secret)
	require.NoError(t, err)

	// The attack is live: plain git status in the project runs the filter.
	when := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(secret, when, when))
	hostileGit(t, proj, "status")
	require.FileExists(t, marker, "test setup: plain git status should run the submodule's filter")
	require.NoError(t, os.Remove(marker))

	rewrite := func(id, n string) []map[string]any {
		return []map[string]any{
			toolCall(id+"a", "write_file", map[string]any{"path": "sub/secret.txt", "content": string(content)}),
			toolCall(id+"b", "write_file", map[string]any{"path": "turn.txt", "content": n}),
		}
	}
	script := writeScript(t,
		calls("", append(rewrite("t1", "1"), toolCall("t1c", "git_status", map[string]any{}))...),
		text("status seen"),
		calls("", append(rewrite("t2", "2"), toolCall("t2c", "run_shell", map[string]any{"command": "git status"}))...),
		text("status seen again"),
		calls("", rewrite("t3", "3")...),
		text("rewritten"),
	)
	e := openHostile(t, script, proj, "auto", map[string]any{"mode": "auto", "allowedCommands": []string{"git"}})
	for i := range 3 {
		_, err := e.c.StartTurn(tctx(t), e.sid, "turn")
		require.NoError(t, err)
		evs := untilType(t, e.c, e.sid, "turn_end")
		require.Empty(t, ofType(evs, "permission_required"), "turn %d runs unasked", i+1)
		for _, ev := range ofType(evs, "tool_finished") {
			require.Equal(t, "ok", dataOf(t, ev)["status"], string(ev.Data))
		}
	}
	var res struct {
		Turns []struct {
			Number int `json:"number"`
		} `json:"turns"`
		Plan struct {
			Mode   string `json:"mode"`
			Status string `json:"status"`
		} `json:"plan"`
	}
	// The end-of-turn snapshot may still run when turn_end arrives.
	require.Eventually(t, func() bool {
		err := e.c.Call(tctx(t), "vcs.turns", map[string]string{"sessionId": e.sid}, &res)
		return err == nil && len(res.Turns) == 3
	}, 20*time.Second, 20*time.Millisecond, "every turn was snapshotted")
	require.Equal(t, "native", res.Plan.Mode, res.Plan.Status)
	require.NoFileExists(t, marker, "the submodule's clean filter ran")
}

// TestE2ESubmoduleGitdirNeverShown: the project records a gitlink "leak"
// whose .git file points at another repository on the machine, one commit
// behind its HEAD. With git allowlisted, `git diff --submodule=log` (which
// would list the other repository's subjects) asks; git_status, git_diff
// and an allowlisted `git diff` and `git status` never show them.
func TestE2ESubmoduleGitdirNeverShown(t *testing.T) {
	other := secretRepo(t)
	first := hostileGit(t, other, "rev-parse", "HEAD")
	require.NoError(t, os.WriteFile(filepath.Join(other, "secret.txt"), []byte("more\n"), 0o644))
	hostileGit(t, other, "commit", "-q", "-am", "other-secret newer subject")
	proj := hostileProject(t, func(string) {})
	hostileGit(t, proj, "update-index", "--add", "--cacheinfo", "160000,"+first+",leak")
	hostileGit(t, proj, "commit", "-q", "-m", "leak")
	require.NoError(t, os.MkdirAll(filepath.Join(proj, "leak"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(proj, "leak", ".git"), []byte("gitdir: "+filepath.Join(other, ".git")+"\n"), 0o644))
	// The attack is live: plain git shows the other repository's subject.
	require.Contains(t, hostileGit(t, proj, "diff", "--submodule=log"), "other-secret newer subject")

	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "git diff --submodule=log"})),
		text("denied"),
		calls("",
			toolCall("c2", "git_status", map[string]any{}),
			toolCall("c3", "git_diff", map[string]any{}),
			toolCall("c4", "run_shell", map[string]any{"command": "git diff"}),
			toolCall("c5", "run_shell", map[string]any{"command": "git status"}),
			toolCall("c6", "run_shell", map[string]any{"command": "git diff --submodule=short"}),
		),
		text("done"),
	)
	e := openHostile(t, script, proj, "off", map[string]any{"allowedCommands": []string{"git"}})
	_, err := e.c.StartTurn(tctx(t), e.sid, "show the submodule's log")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	card := dataOf(t, evs[len(evs)-1])
	require.Contains(t, string(mustJSON(t, card)), "--submodule=log")
	require.NoError(t, e.c.Respond(tctx(t), e.sid, card["requestId"].(string), map[string]string{"outcome": "deny"}))
	evs = append(evs, untilType(t, e.c, e.sid, "turn_end")...)

	_, err = e.c.StartTurn(tctx(t), e.sid, "show the status")
	require.NoError(t, err)
	more := untilType(t, e.c, e.sid, "turn_end")
	require.Empty(t, ofType(more, "permission_required"), "the git tools and allowlisted git status/diff run unasked")
	fins := ofType(more, "tool_finished")
	require.Len(t, fins, 5)
	for _, ev := range fins {
		require.Equal(t, "ok", dataOf(t, ev)["status"], string(ev.Data))
	}
	for _, ev := range append(evs, more...) {
		require.False(t, strings.Contains(string(ev.Data), "other-secret"), "%s shows the other repository: %s", ev.Type, ev.Data)
	}
}
