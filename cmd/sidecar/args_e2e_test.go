package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// rawCall is a tool call whose arguments are sent byte for byte as given
// (toolCall re-encodes a map, which sorts and deduplicates keys).
func rawCall(id, name, args string) map[string]any {
	return map[string]any{"id": id, "name": name, "arguments": args}
}

// TestE2ECaseVariantKeys (issue 14): arguments with a key that differs only
// in case from a schema field are refused as invalid_arguments before any
// permission decision. With echo allowlisted, run_shell
// {"command":"echo hello","Command":"touch <marker>"} used to run the touch
// unasked (the allowlist read "command", the handler's struct decode took
// the last case-insensitive match); in auto mode, write_file
// {"path":"notes.txt",...,"Path":".agent/mcp.json"} used to write the MCP
// config.
func TestE2ECaseVariantKeys(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	script := writeScript(t,
		calls("", rawCall("c1", "run_shell", `{"command":"echo hello","Command":"touch `+marker+`"}`)),
		text("shell refused"),
		calls("", rawCall("c2", "write_file", `{"path":"notes.txt","content":"{}","Path":".agent/mcp.json"}`)),
		text("write refused"),
	)
	e := setup(t, script, map[string]any{"allowedCommands": []string{"echo"}})

	_, err := e.c.StartTurn(tctx(t), e.sid, "run it")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Empty(t, ofType(evs, "permission_required"), "an invalid call never gets a card")
	fin := dataOf(t, ofType(evs, "tool_finished")[0])
	require.Equal(t, "error", fin["status"])
	require.Contains(t, fin["result_preview"], "invalid_arguments")
	require.Contains(t, fin["result_preview"], `Command`)
	require.NoFileExists(t, marker)

	require.NoError(t, e.c.Call(tctx(t), "session.setMode", map[string]string{"sessionId": e.sid, "mode": "auto"}, nil))
	_, err = e.c.StartTurn(tctx(t), e.sid, "write it")
	require.NoError(t, err)
	evs = untilType(t, e.c, e.sid, "turn_end")
	fin = dataOf(t, ofType(evs, "tool_finished")[0])
	require.Equal(t, "error", fin["status"])
	require.Contains(t, fin["result_preview"], "invalid_arguments")
	require.Contains(t, fin["result_preview"], `Path`)
	require.NoFileExists(t, filepath.Join(e.projDir, ".agent", "mcp.json"))
	require.NoFileExists(t, filepath.Join(e.projDir, "notes.txt"))
	_, err = os.Stat(filepath.Join(e.projDir, ".agent", "mcp.json"))
	require.True(t, os.IsNotExist(err))
}
