package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The manual's turn_end.produced_files lists every file the turn wrote or
// created, including those written by apply_patch and apply_unified_diff,
// whose paths live inside the patch text.
func TestE2EProducedFilesIncludePatchTools(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: added.txt\n+hello\n*** End Patch\n"
	unified := "--- /dev/null\n+++ b/unified.txt\n@@ -0,0 +1 @@\n+from a diff\n"
	script := writeScript(t,
		calls("",
			toolCall("c1", "write_file", map[string]any{"path": "written.txt", "content": "x\n"}),
			toolCall("c2", "apply_patch", map[string]any{"patch": patch}),
			toolCall("c3", "apply_unified_diff", map[string]any{"diff": unified}),
		),
		text("done"),
	)
	e := setup(t, script, map[string]any{"mode": "auto"})
	_, err := e.c.StartTurn(tctx(t), e.sid, "write three files")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	for _, ev := range ofType(evs, "tool_finished") {
		require.Equal(t, "ok", dataOf(t, ev)["status"], string(ev.Data))
	}
	for _, f := range []string{"written.txt", "added.txt", "unified.txt"} {
		_, err := os.Stat(filepath.Join(e.projDir, f))
		require.NoError(t, err)
	}
	end := dataOf(t, evs[len(evs)-1])
	require.ElementsMatch(t, []any{"written.txt", "added.txt", "unified.txt"}, end["produced_files"])
}
