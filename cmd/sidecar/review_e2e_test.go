package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// A deny with a note: the note is refused with another outcome (the
// request stays pending), accepted with deny, and the model's tool result
// quotes it.
func TestE2EDenyWithANoteReachesTheModel(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "should-not-exist")
	script := writeScript(t,
		calls("", toolCall("c1", "run_shell", map[string]any{"command": "touch " + marker})),
		text("understood"),
	)
	e := setup(t, script, nil)
	startTurn(t, e, "touch it")
	evs := untilType(t, e.c, e.sid, "permission_required")
	rid := dataOf(t, evs[len(evs)-1])["requestId"].(string)

	err := e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "once", "note": "fine"})
	require.Equal(t, client.CodeInvalidParams, client.Code(err), "%v", err)
	require.ErrorContains(t, err, "response.note")
	err = e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "deny", "note": strings.Repeat("x", 4097)})
	require.Equal(t, client.CodeInvalidParams, client.Code(err), "%v", err)

	const note = "do not touch files there; use the build directory"
	require.NoError(t, e.c.Respond(tctx(t), e.sid, rid, map[string]string{"outcome": "deny", "note": note}))
	evs = untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "denied", dataOf(t, ofType(evs, "tool_finished")[0])["status"])
	require.NoFileExists(t, marker)

	results := toolResults(t, e.c, e.sid)
	require.Len(t, results, 1)
	var res struct {
		Error     string `json:"error"`
		ErrorType string `json:"error_type"`
	}
	require.NoError(t, json.Unmarshal([]byte(results[0]), &res), results[0])
	require.Equal(t, "denied", res.ErrorType)
	require.Contains(t, res.Error, "the user denied this tool call")
	require.Contains(t, res.Error, note, "the model reads the user's note")
}

// The approval card of each file tool carries a unified diff of what the
// call will change, computed from the files before anything is written; a
// large one is cut to 64 KiB and says so.
func TestE2EFileCardsCarryADiff(t *testing.T) {
	big := strings.Repeat("a line of a large file\n", 4000) // ~92 KiB
	script := writeScript(t,
		calls("", toolCall("w1", "write_file", map[string]any{"path": "notes.txt", "content": "one\nTWO\nthree\n"})),
		calls("", toolCall("r1", "replace_in_file", map[string]any{"path": "notes.txt", "old_string": "three", "new_string": "3"})),
		calls("", toolCall("p1", "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n*** Update File: notes.txt\n@@\n one\n-TWO\n+two\n*** End Patch"})),
		calls("", toolCall("u1", "apply_unified_diff", map[string]any{"diff": "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n two\n-3\n+three\n"})),
		calls("", toolCall("w2", "write_file", map[string]any{"path": "big.txt", "content": big})),
		calls("", toolCall("w3", "replace_in_file", map[string]any{"path": "notes.txt", "old_string": "absent", "new_string": "x"})),
		text("done"),
	)
	e := setup(t, script, nil)
	notes := filepath.Join(e.projDir, "notes.txt")
	require.NoError(t, os.WriteFile(notes, []byte("one\ntwo\nthree\n"), 0o644))
	startTurn(t, e, "edit the notes")

	// card waits for the next card, checks its file is unchanged (the
	// preview wrote nothing), answers once and returns its data.
	card := func(name, unchanged string) map[string]any {
		t.Helper()
		evs := untilType(t, e.c, e.sid, "permission_required")
		d := dataOf(t, evs[len(evs)-1])
		require.Equal(t, name, d["name"])
		b, err := os.ReadFile(notes)
		require.NoError(t, err)
		require.Equal(t, unchanged, string(b), "nothing is written before the answer")
		require.NoError(t, e.c.Respond(tctx(t), e.sid, d["requestId"].(string), map[string]string{"outcome": "once"}))
		return d
	}
	diffOf := func(d map[string]any) (string, bool) {
		t.Helper()
		m, ok := d["diff"].(map[string]any)
		require.True(t, ok, "the card has a diff: %v", d)
		tr, _ := m["truncated"].(bool)
		return m["unified"].(string), tr
	}

	u, tr := diffOf(card("write_file", "one\ntwo\nthree\n"))
	require.Equal(t, "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n", u)
	require.False(t, tr)

	u, _ = diffOf(card("replace_in_file", "one\nTWO\nthree\n"))
	require.Equal(t, "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n TWO\n-three\n+3\n", u)

	u, _ = diffOf(card("apply_patch", "one\nTWO\n3\n"))
	require.Equal(t, "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,1 @@\n+# New\n"+
		"--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-TWO\n+two\n 3\n", u)

	u, _ = diffOf(card("apply_unified_diff", "one\ntwo\n3\n"))
	require.Equal(t, "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n two\n-3\n+three\n", u)

	d := card("write_file", "one\ntwo\nthree\n")
	u, tr = diffOf(d)
	require.True(t, tr, "a diff over 64 KiB is cut and says so")
	require.LessOrEqual(t, len(u), 64<<10)
	require.True(t, strings.HasPrefix(u, "--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,4000 @@\n+a line"), u[:80])
	require.True(t, strings.HasSuffix(u, "+a line of a large file\n"), "cut at a line end")

	// A replacement that cannot apply has no diff: the card still asks.
	d = card("replace_in_file", "one\ntwo\nthree\n")
	require.NotContains(t, d, "diff")

	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	b, err := os.ReadFile(filepath.Join(e.projDir, "docs", "new.md"))
	require.NoError(t, err)
	require.Equal(t, "# New\n", string(b))
}
