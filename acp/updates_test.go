package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/protocol"
)

func event(t *testing.T, typ protocol.EventType, data any) protocol.SessionEvent {
	t.Helper()
	b, err := json.Marshal(data)
	require.NoError(t, err)
	return protocol.SessionEvent{SessionID: "s1", Seq: 1, TurnID: "turn_1", Type: string(typ), Data: b}
}

// wire is an update as the editor receives it.
func wire(t *testing.T, ups []sdk.SessionUpdate) []map[string]any {
	t.Helper()
	out := []map[string]any{}
	for _, u := range ups {
		b, err := json.Marshal(u)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		out = append(out, m)
	}
	return out
}

func TestUpdates(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("old\n"), 0o644))
	abs := filepath.Join(root, "a.txt")
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	tests := []struct {
		name    string
		ev      protocol.SessionEvent
		history bool
		want    []map[string]any
	}{
		{"assistant delta live", event(t, protocol.EventAssistantDelta, protocol.DeltaData{Text: "Hi"}), false,
			[]map[string]any{{"sessionUpdate": "agent_message_chunk", "content": text("Hi")}}},
		{"assistant delta in history is skipped", event(t, protocol.EventAssistantDelta, protocol.DeltaData{Text: "Hi"}), true, []map[string]any{}},
		{"reasoning delta live", event(t, protocol.EventReasoningDelta, protocol.DeltaData{Text: "hmm"}), false,
			[]map[string]any{{"sessionUpdate": "agent_thought_chunk", "content": text("hmm")}}},
		{"whole message live is skipped (deltas showed it)", event(t, protocol.EventAssistantMessage, protocol.AssistantMessageData{Text: "Hi"}), false, []map[string]any{}},
		{"whole message in history", event(t, protocol.EventAssistantMessage, protocol.AssistantMessageData{Text: "Hi", Reasoning: "hmm"}), true,
			[]map[string]any{{"sessionUpdate": "agent_thought_chunk", "content": text("hmm")}, {"sessionUpdate": "agent_message_chunk", "content": text("Hi")}}},
		{"user input in history", event(t, protocol.EventTurnStart, protocol.TurnStartData{Input: "do it"}), true,
			[]map[string]any{{"sessionUpdate": "user_message_chunk", "content": text("do it")}}},
		{"user input live is skipped", event(t, protocol.EventTurnStart, protocol.TurnStartData{Input: "do it"}), false, []map[string]any{}},
		{"proposed read", event(t, protocol.EventToolProposed, protocol.ToolProposedData{ReqID: "c1", Name: "read_file", Arguments: map[string]any{"path": "a.txt", "start_line": 3}}), false,
			[]map[string]any{{"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read a.txt", "kind": "read", "status": "pending",
				"rawInput": map[string]any{"path": "a.txt", "start_line": float64(3)}, "locations": []any{map[string]any{"path": abs, "line": float64(3)}}}}},
		{"proposed write: a diff against the file", event(t, protocol.EventToolProposed, protocol.ToolProposedData{ReqID: "c2", Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": "new\n"}}), false,
			[]map[string]any{{"sessionUpdate": "tool_call", "toolCallId": "c2", "title": "Write a.txt", "kind": "edit", "status": "pending",
				"rawInput": map[string]any{"path": "a.txt", "content": "new\n"}, "locations": []any{map[string]any{"path": abs}},
				"content": []any{map[string]any{"type": "diff", "path": abs, "oldText": "old\n", "newText": "new\n"}}}}},
		{"proposed write of a new file", event(t, protocol.EventToolProposed, protocol.ToolProposedData{ReqID: "c3", Name: "write_file", Arguments: map[string]any{"path": "b.txt", "content": "x"}}), false,
			[]map[string]any{{"sessionUpdate": "tool_call", "toolCallId": "c3", "title": "Write b.txt", "kind": "edit", "status": "pending",
				"rawInput": map[string]any{"path": "b.txt", "content": "x"}, "locations": []any{map[string]any{"path": filepath.Join(root, "b.txt")}},
				"content": []any{map[string]any{"type": "diff", "path": filepath.Join(root, "b.txt"), "newText": "x"}}}}},
		{"proposed replace: old → new", event(t, protocol.EventToolProposed, protocol.ToolProposedData{ReqID: "c4", Name: "replace_in_file", Arguments: map[string]any{"path": abs, "old_string": "o", "new_string": "n"}}), false,
			[]map[string]any{{"sessionUpdate": "tool_call", "toolCallId": "c4", "title": "Edit " + abs, "kind": "edit", "status": "pending",
				"rawInput": map[string]any{"path": abs, "old_string": "o", "new_string": "n"}, "locations": []any{map[string]any{"path": abs}},
				"content": []any{map[string]any{"type": "diff", "path": abs, "oldText": "o", "newText": "n"}}}}},
		{"proposed command", event(t, protocol.EventToolProposed, protocol.ToolProposedData{ReqID: "c5", Name: "run_shell", Arguments: map[string]any{"command": "make\ntest"}}), false,
			[]map[string]any{{"sessionUpdate": "tool_call", "toolCallId": "c5", "title": "Run make … (2 lines)", "kind": "execute", "status": "pending",
				"rawInput": map[string]any{"command": "make\ntest"}, "content": []any{map[string]any{"type": "content", "content": text("```\nmake\ntest\n```")}}}}},
		{"proposed command with a bidi override and blanks: escaped", event(t, protocol.EventToolProposed, protocol.ToolProposedData{ReqID: "c7", Name: "run_shell", Arguments: map[string]any{"command": "ls \u202e``` x\u00a0#"}}), false,
			[]map[string]any{{"sessionUpdate": "tool_call", "toolCallId": "c7", "title": `Run ls \u202e` + "```" + ` x\xa0#`, "kind": "execute", "status": "pending",
				"rawInput": map[string]any{"command": "ls \u202e``` x\u00a0#"}, "content": []any{map[string]any{"type": "content", "content": text("````\n" + `ls \u202e` + "```" + ` x\xa0#` + "\n````")}}}}},
		{"a pattern of two lines", event(t, protocol.EventToolProposed, protocol.ToolProposedData{ReqID: "c8", Name: "grep", Arguments: map[string]any{"pattern": "a\nb"}}), false,
			[]map[string]any{{"sessionUpdate": "tool_call", "toolCallId": "c8", "title": "Search for a … (2 lines)", "kind": "search", "status": "pending",
				"rawInput": map[string]any{"pattern": "a\nb"}, "content": []any{map[string]any{"type": "content", "content": text("```\nSearch for a\nb\n```")}}}}},
		{"started", event(t, protocol.EventToolStarted, protocol.ToolStartedData{ReqID: "c1", Name: "read_file"}), false,
			[]map[string]any{{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress"}}},
		{"finished ok", event(t, protocol.EventToolFinished, protocol.ToolFinishedData{ReqID: "c1", Name: "read_file", Status: protocol.ToolOK, ResultPreview: "1\told"}), false,
			[]map[string]any{{"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed", "content": []any{map[string]any{"type": "content", "content": text("1\told")}}}}},
		{"finished denied", event(t, protocol.EventToolFinished, protocol.ToolFinishedData{ReqID: "c5", Name: "run_shell", Status: protocol.ToolDenied}), false,
			[]map[string]any{{"sessionUpdate": "tool_call_update", "toolCallId": "c5", "status": "failed", "content": []any{map[string]any{"type": "content", "content": text("denied")}}}}},
		{"finished with an error", event(t, protocol.EventToolFinished, protocol.ToolFinishedData{ReqID: "c6", Name: "grep", Status: protocol.ToolError, Reason: "bad pattern"}), false,
			[]map[string]any{{"sessionUpdate": "tool_call_update", "toolCallId": "c6", "status": "failed", "content": []any{map[string]any{"type": "content", "content": text("bad pattern")}}}}},
		{"error in history", event(t, protocol.EventError, protocol.EventErrorData{Error: "boom"}), true,
			[]map[string]any{{"sessionUpdate": "agent_message_chunk", "content": text("\n\nError: boom\n")}}},
		{"error live is the prompt's answer", event(t, protocol.EventError, protocol.EventErrorData{Error: "boom"}), false, []map[string]any{}},
		{"permission is a question, not an update", event(t, protocol.EventPermissionRequired, protocol.PermissionRequiredData{ReqID: "c5", RequestID: "r1", Name: "run_shell"}), false, []map[string]any{}},
		{"session named", event(t, protocol.EventSessionNamed, protocol.SessionNamedData{Name: "Fix the build", Source: "auto"}), false,
			[]map[string]any{{"sessionUpdate": "session_info_update", "title": "Fix the build"}}},
		{"turn end", event(t, protocol.EventTurnEnd, protocol.TurnEndData{Status: protocol.TurnCompleted}), false, []map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ups, err := newTranslator(root).updates(tt.ev, tt.history)
			require.NoError(t, err)
			require.Equal(t, tt.want, wire(t, ups))
		})
	}
}

// TestTodoWriteIsAPlan: a successful todo_write shows as the plan; a failed
// one does not.
func TestTodoWriteIsAPlan(t *testing.T) {
	args := map[string]any{"todos": []any{
		map[string]any{"id": "1", "content": "a", "status": "completed", "priority": "low"},
		map[string]any{"id": "2", "content": "b", "status": "in_progress", "priority": "high"},
		map[string]any{"id": "3", "content": "c", "status": "pending"},
	}}
	for _, status := range []protocol.ToolStatus{protocol.ToolOK, protocol.ToolError} {
		tr := newTranslator(t.TempDir())
		_, err := tr.updates(event(t, protocol.EventToolProposed, protocol.ToolProposedData{ReqID: "t1", Name: "todo_write", Arguments: args}), false)
		require.NoError(t, err)
		ups, err := tr.updates(event(t, protocol.EventToolFinished, protocol.ToolFinishedData{ReqID: "t1", Name: "todo_write", Status: status}), false)
		require.NoError(t, err)
		got := wire(t, ups)
		if status != protocol.ToolOK {
			require.Len(t, got, 1)
			continue
		}
		require.Len(t, got, 2)
		require.Equal(t, map[string]any{"sessionUpdate": "plan", "entries": []any{
			map[string]any{"content": "a", "priority": "low", "status": "completed"},
			map[string]any{"content": "b", "priority": "high", "status": "in_progress"},
			map[string]any{"content": "c", "priority": "medium", "status": "pending"},
		}}, got[1])
	}
}

func TestStopReason(t *testing.T) {
	tests := []struct {
		status  protocol.TurnStatus
		want    sdk.StopReason
		wantErr string
	}{
		{protocol.TurnCompleted, sdk.StopReasonEndTurn, ""},
		{protocol.TurnInterrupted, sdk.StopReasonCancelled, ""},
		{protocol.TurnMaxIterations, sdk.StopReasonMaxTurnRequests, ""},
		{protocol.TurnError, "", "turn error: no key"},
	}
	for _, tt := range tests {
		got, err := stopReason(protocol.TurnEndData{Status: tt.status}, "no key")
		if tt.wantErr != "" {
			require.EqualError(t, err, tt.wantErr)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tt.want, got)
	}
}

// TestReadOldStaysInTheProject: the diff of a write never shows a file
// outside the project, not even through a symlink.
func TestReadOldStaysInTheProject(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	root := t.TempDir()
	require.NoError(t, os.Symlink(secret, filepath.Join(root, "link")))
	tr := newTranslator(root)
	for _, p := range []string{secret, "../" + filepath.Base(outside) + "/secret", "link"} {
		_, ok := tr.readOld(p)
		require.False(t, ok, p)
	}
}

func TestToolKinds(t *testing.T) {
	for name, want := range map[string]sdk.ToolKind{
		"read_file": sdk.ToolKindRead, "list_files": sdk.ToolKindSearch, "grep": sdk.ToolKindSearch,
		"write_file": sdk.ToolKindEdit, "replace_in_file": sdk.ToolKindEdit, "apply_patch": sdk.ToolKindEdit, "apply_unified_diff": sdk.ToolKindEdit,
		"run_shell": sdk.ToolKindExecute, "web_fetch": sdk.ToolKindFetch, "web_search": sdk.ToolKindFetch,
		"todo_write": sdk.ToolKindThink, "propose_plan": sdk.ToolKindSwitchMode, "ask_user": sdk.ToolKindOther, "mcp__x__y": sdk.ToolKindOther,
	} {
		require.Equal(t, want, toolKind(name), name)
	}
}
