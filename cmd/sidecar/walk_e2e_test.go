package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ignoreBomb is a .gitignore of short distinct patterns, just under 1 MiB
// (inside the size every walker read before they were bounded together).
func ignoreBomb() []byte {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20-16; i++ {
		fmt.Fprintf(&b, "p%x\n", i)
	}
	return []byte(b.String())
}

// setupIn is setup for a project folder filled by fill before the project
// is opened (the conflict watcher walks it at open).
func setupIn(t *testing.T, script string, fill func(dir string)) *env {
	t.Helper()
	e := &env{dataDir: filepath.Join(t.TempDir(), "data"), projDir: filepath.Join(t.TempDir(), "proj")}
	require.NoError(t, os.MkdirAll(e.projDir, 0o755))
	fill(e.projDir)
	e.p = spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+script)
	e.c = e.p.connect(t)
	pid, err := e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
	e.sid, err = e.c.CreateSession(tctx(t), pid, map[string]any{"mode": "auto", "vcs": "off"}) // no per-turn snapshot of the large trees
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	return e
}

// TestE2EIgnoreBombIsBounded (item 5): a workspace whose .gitignore is 1 MiB
// of distinct patterns: list_files and grep (both run without approval)
// finish, and their results say the ignore rules were truncated. How fast
// and how much memory: BenchmarkListFilesIgnoreBomb, BenchmarkGrepIgnoreBomb.
func TestE2EIgnoreBombIsBounded(t *testing.T) {
	script := writeScript(t,
		calls("", toolCall("l1", "list_files", map[string]any{"path": "."})),
		text("listed"),
		calls("", toolCall("g1", "grep", map[string]any{"pattern": "needle"})),
		text("searched"),
	)
	e := setupIn(t, script, func(dir string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), ignoreBomb(), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("needle\n"), 0o644))
	})
	for _, tool := range []string{"list_files", "grep"} {
		_, err := e.c.StartTurn(tctx(t), e.sid, "use "+tool)
		require.NoError(t, err)
		evs := untilType(t, e.c, e.sid, "turn_end")
		require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
		fin := ofType(evs, "tool_finished")
		require.Len(t, fin, 1)
		d := dataOf(t, fin[0])
		require.Equal(t, tool, d["name"])
		require.Equal(t, "ok", d["status"], d["result_preview"])
		require.Contains(t, d["result_preview"], "ignore rules truncated", tool)
	}
}

// TestE2EInterruptStopsTheWalk (item 6): a turn interrupted while grep
// walks a large tree ends interrupted, and each grep's result says so. The tree starts with a directory whose
// .gitignore is 1 MiB of patterns, which an unbounded walker spends seconds
// on before it looks at its context again.
func TestE2EInterruptStopsTheWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50,000 files")
	}
	script := writeScript(t,
		calls("", toolCall("g1", "grep", map[string]any{"pattern": "needle"}), toolCall("g2", "grep", map[string]any{"pattern": "haystack"})),
		text("never reached"),
	)
	e := setupIn(t, script, func(dir string) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "aaa"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "aaa", ".gitignore"), ignoreBomb(), 0o644))
		body := []byte(strings.Repeat("some text that does not match\n", 8))
		for d := range 500 {
			sub := filepath.Join(dir, "tree", fmt.Sprintf("d%03d", d))
			require.NoError(t, os.MkdirAll(sub, 0o755))
			for f := range 100 {
				require.NoError(t, os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.txt", f)), body, 0o644))
			}
		}
	})
	_, err := e.c.StartTurn(tctx(t), e.sid, "search")
	require.NoError(t, err)
	untilType(t, e.c, e.sid, "tool_started")
	require.NoError(t, e.c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": e.sid}, nil))
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "interrupted", dataOf(t, evs[len(evs)-1])["status"])
	fin := ofType(evs, "tool_finished")
	require.Len(t, fin, 2)
	for _, ev := range fin {
		// A grep that ran returned on the cancel; one whose start the
		// interrupt overtook never ran ("… before it ran"). The engine
		// never abandons a running tool any more (TestTurnEndWaitsForTools);
		// that grep's walk stops on the cancel is counted in tools/search.
		d := dataOf(t, ev)
		require.Equal(t, "interrupted", d["status"], d["result_preview"])
		require.Contains(t, d["result_preview"], "interrupted by the user")
	}
}
