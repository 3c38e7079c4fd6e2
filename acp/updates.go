package acp

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools/todo"
)

// maxOldText bounds the file content read to show an edit's diff.
const maxOldText = 1 << 20

// toolCall is what the translator remembers of a tool call between its
// events.
type toolCall struct {
	name string
	args map[string]any
}

// translator turns one session's events into ACP session updates. It is
// owned by the session's dispatcher (one goroutine); it is not safe for
// concurrent use.
type translator struct {
	root  string              // the project folder: relative paths are resolved against it
	calls map[string]toolCall // by tool call id (reqId)
}

func newTranslator(root string) *translator {
	return &translator{root: root, calls: map[string]toolCall{}}
}

// updates maps one event to the session updates it shows. history is true
// while session/load replays stored events: the user's messages and whole
// assistant messages are shown then, deltas are not; live, the deltas are
// streamed and the whole message (already shown) is skipped. Interactive
// events (approvals, questions) are not updates: the session asks the editor
// for them.
func (t *translator) updates(ev protocol.SessionEvent, history bool) ([]sdk.SessionUpdate, error) {
	switch protocol.EventType(ev.Type) {
	case protocol.EventTurnStart:
		if !history {
			return nil, nil // the editor shows what it sent
		}
		var d protocol.TurnStartData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return nil, err
		}
		return []sdk.SessionUpdate{sdk.UpdateUserMessageText(d.Input)}, nil
	case protocol.EventQueueSteering:
		if !history {
			return nil, nil
		}
		var d protocol.QueueSteeringData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return nil, err
		}
		return []sdk.SessionUpdate{sdk.UpdateUserMessageText(d.Text)}, nil
	case protocol.EventAssistantDelta, protocol.EventReasoningDelta:
		if history {
			return nil, nil
		}
		var d protocol.DeltaData
		if err := json.Unmarshal(ev.Data, &d); err != nil || d.Text == "" {
			return nil, err
		}
		if ev.Type == string(protocol.EventReasoningDelta) {
			return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(d.Text)}, nil
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(d.Text)}, nil
	case protocol.EventAssistantMessage:
		if !history {
			return nil, nil
		}
		var d protocol.AssistantMessageData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return nil, err
		}
		var out []sdk.SessionUpdate
		if d.Reasoning != "" {
			out = append(out, sdk.UpdateAgentThoughtText(d.Reasoning))
		}
		if d.Text != "" {
			out = append(out, sdk.UpdateAgentMessageText(d.Text))
		}
		return out, nil
	case protocol.EventToolProposed:
		var d protocol.ToolProposedData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return nil, err
		}
		t.calls[d.ReqID] = toolCall{name: d.Name, args: d.Arguments}
		return []sdk.SessionUpdate{t.startCall(d.ReqID, d.Name, d.Arguments)}, nil
	case protocol.EventToolStarted:
		var d protocol.ToolStartedData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return nil, err
		}
		return []sdk.SessionUpdate{sdk.UpdateToolCall(sdk.ToolCallId(d.ReqID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress))}, nil
	case protocol.EventToolFinished:
		var d protocol.ToolFinishedData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return nil, err
		}
		return t.finishCall(d), nil
	case protocol.EventSessionNamed:
		var d protocol.SessionNamedData
		if err := json.Unmarshal(ev.Data, &d); err != nil || d.Name == "" {
			return nil, err
		}
		return []sdk.SessionUpdate{{SessionInfoUpdate: &sdk.SessionSessionInfoUpdate{Title: sdk.Ptr(sessionTitle(d.Name))}}}, nil
	case protocol.EventUsage:
		return usageUpdates(ev.Data) // usage.go
	case protocol.EventError:
		if !history {
			return nil, nil // session/prompt answers with the error
		}
		var d protocol.EventErrorData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return nil, err
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentMessageText("\n\nError: " + d.Error + "\n")}, nil
	}
	return nil, nil
}

// startCall is the tool_call update of a proposed call.
func (t *translator) startCall(id, name string, args map[string]any) sdk.SessionUpdate {
	opts := []sdk.ToolCallStartOpt{
		sdk.WithStartKind(toolKind(name)),
		sdk.WithStartStatus(sdk.ToolCallStatusPending),
		sdk.WithStartRawInput(args),
	}
	if locs := t.locations(args); len(locs) > 0 {
		opts = append(opts, sdk.WithStartLocations(locs))
	}
	if content := t.callContent(name, args); len(content) > 0 {
		opts = append(opts, sdk.WithStartContent(content))
	}
	return sdk.StartToolCall(sdk.ToolCallId(id), toolTitle(name, args), opts...)
}

// finishCall is the tool_call_update of a finished call, and the plan when
// the call was a successful todo_write.
func (t *translator) finishCall(d protocol.ToolFinishedData) []sdk.SessionUpdate {
	status := sdk.ToolCallStatusCompleted
	if d.Status != protocol.ToolOK {
		status = sdk.ToolCallStatusFailed
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	text := d.ResultPreview
	if text == "" && d.Reason != "" {
		text = d.Reason
	}
	if d.Status == protocol.ToolDenied && text == "" {
		text = "denied"
	}
	if text != "" {
		opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}))
	}
	out := []sdk.SessionUpdate{sdk.UpdateToolCall(sdk.ToolCallId(d.ReqID), opts...)}
	call, ok := t.calls[d.ReqID]
	delete(t.calls, d.ReqID)
	if ok && call.name == "todo_write" && d.Status == protocol.ToolOK {
		if p, ok := planOf(call.args); ok {
			out = append(out, p)
		}
	}
	return out
}

// planOf is the plan update of todo_write's arguments.
func planOf(args map[string]any) (sdk.SessionUpdate, bool) {
	raw, err := json.Marshal(args["todos"])
	if err != nil {
		return sdk.SessionUpdate{}, false
	}
	var items []todo.Item
	if err := json.Unmarshal(raw, &items); err != nil {
		return sdk.SessionUpdate{}, false
	}
	entries := make([]sdk.PlanEntry, 0, len(items))
	for _, it := range items {
		e := sdk.PlanEntry{Content: it.Content, Priority: sdk.PlanEntryPriorityMedium, Status: sdk.PlanEntryStatusPending}
		switch it.Priority {
		case todo.PriorityHigh:
			e.Priority = sdk.PlanEntryPriorityHigh
		case todo.PriorityLow:
			e.Priority = sdk.PlanEntryPriorityLow
		}
		switch string(it.Status) {
		case "in_progress":
			e.Status = sdk.PlanEntryStatusInProgress
		case "completed", "cancelled":
			e.Status = sdk.PlanEntryStatusCompleted
		}
		entries = append(entries, e)
	}
	return sdk.UpdatePlan(entries...), true
}

// toolKind is the ACP kind of one of our tools.
func toolKind(name string) sdk.ToolKind {
	switch name {
	case "read_file", "git_log", "git_status", "git_diff", "media", "terminal_list", "terminal_read", "shell_task_output":
		return sdk.ToolKindRead
	case "write_file", "replace_in_file", "apply_patch", "apply_unified_diff":
		return sdk.ToolKindEdit
	case "list_files", "grep":
		return sdk.ToolKindSearch
	case "run_shell", "shell_task_kill":
		return sdk.ToolKindExecute
	case "web_fetch", "web_search":
		return sdk.ToolKindFetch
	case "todo_write", "explore":
		return sdk.ToolKindThink
	case "propose_plan":
		return sdk.ToolKindSwitchMode
	}
	return sdk.ToolKindOther
}

// toolTitle is a one-line description of a call as a card shows it: the
// characters a card flags (bidi overrides, controls, invisible characters,
// blanks that are not spaces) escaped by engine.DisplayText, and a text of
// several lines cut to its first (callContent has every line).
func toolTitle(name string, args map[string]any) string {
	return oneLine(engine.DisplayText(fullTitle(name, args)))
}

// fullTitle is toolTitle before it is escaped and cut.
func fullTitle(name string, args map[string]any) string {
	str := func(k string) string { s, _ := args[k].(string); return s }
	switch name {
	case "read_file":
		return "Read " + str("path")
	case "write_file":
		return "Write " + str("path")
	case "replace_in_file":
		return "Edit " + str("path")
	case "list_files":
		return "List " + firstNonEmpty(str("path"), ".")
	case "grep":
		return "Search for " + str("pattern")
	case "run_shell":
		return "Run " + str("command")
	case "web_fetch":
		return "Fetch " + str("url")
	case "web_search":
		return "Search the web for " + str("query")
	case "todo_write":
		return "Update the plan"
	}
	return name
}

// oneLine is the first line of s, and how many lines s has when it has
// more than one.
func oneLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = fmt.Sprintf("%s … (%d lines)", s[:i], strings.Count(s, "\n")+1)
	}
	return s
}

// callContent is what a call's card shows under its title: an edit's
// diff; a command, every line of it; for another call whose title was cut
// to one line, the whole title. Text is in its display form, as in
// toolTitle.
func (t *translator) callContent(name string, args map[string]any) []sdk.ToolCallContent {
	if d := t.diff(name, args); len(d) > 0 {
		return d
	}
	text := engine.DisplayText(fullTitle(name, args))
	if cmd, _ := args["command"].(string); name == "run_shell" && cmd != "" {
		text = engine.DisplayText(cmd)
	} else if !strings.Contains(strings.TrimRight(text, "\n"), "\n") {
		return nil
	}
	return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(codeBlock(text)))}
}

// codeBlock is s as a Markdown code block (editors render text content as
// Markdown), fenced with more backticks than any run of them in s.
func codeBlock(s string) string {
	fence, run := 3, 0
	for _, r := range s {
		if r != '`' {
			run = 0
			continue
		}
		run++
		fence = max(fence, run+1)
	}
	f := strings.Repeat("`", fence)
	return f + "\n" + s + "\n" + f
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// abs resolves a path argument against the project.
func (t *translator) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(t.root, p)
}

// locations are the files a call touches (its path argument).
func (t *translator) locations(args map[string]any) []sdk.ToolCallLocation {
	p, _ := args["path"].(string)
	if p == "" {
		return nil
	}
	loc := sdk.ToolCallLocation{Path: t.abs(p)}
	if n, ok := args["start_line"].(float64); ok && n >= 1 {
		loc.Line = sdk.Ptr(int(n))
	}
	return []sdk.ToolCallLocation{loc}
}

// diff is the diff content of an edit: write_file against the file on disk
// (read through the project's os.Root, so nothing outside it is shown),
// replace_in_file as old → new text. The editor renders it as the card, so
// its path and texts are in their display form (diffContent).
func (t *translator) diff(name string, args map[string]any) []sdk.ToolCallContent {
	p, _ := args["path"].(string)
	if p == "" {
		return nil
	}
	switch name {
	case "write_file":
		content, ok := args["content"].(string)
		if !ok {
			return nil
		}
		if old, ok := t.readOld(p); ok {
			return diffContent(t.abs(p), content, &old)
		}
		return diffContent(t.abs(p), content, nil)
	case "replace_in_file":
		oldS, ok1 := args["old_string"].(string)
		newS, ok2 := args["new_string"].(string)
		if !ok1 || !ok2 {
			return nil
		}
		return diffContent(t.abs(p), newS, &oldS)
	}
	return nil
}

// diffContent is a diff as a card shows it: the characters a card flags
// escaped (engine.DisplayText) in the path, and in both texts when one of
// them holds any (engine.DisplayTexts: an escaped backslash is then not a
// change), and a first content block that says what the diff holds, as
// warningContent does for a permission request's fields.
func diffContent(path, newText string, oldText *string) []sdk.ToolCallContent {
	texts := []string{newText}
	if oldText != nil {
		texts = append(texts, *oldText)
	}
	shown := engine.DisplayTexts(texts...)
	var out []sdk.ToolCallContent
	var flagged []string
	if dp := engine.DisplayText(path); dp != path {
		flagged = append(flagged, "path")
		path = dp
	}
	if shown[0] != texts[0] || (len(texts) > 1 && shown[1] != texts[1]) {
		flagged = append(flagged, "text")
	}
	if len(flagged) > 0 {
		verb := "holds"
		if len(flagged) > 1 {
			verb = "hold"
		}
		out = append(out, sdk.ToolContent(sdk.TextBlock(fmt.Sprintf("⚠ the diff's %s %s characters a card flags (shown escaped).", strings.Join(flagged, " and "), verb))))
	}
	if oldText != nil {
		return append(out, sdk.ToolDiffContent(path, shown[0], shown[1]))
	}
	return append(out, sdk.ToolDiffContent(path, shown[0]))
}

// sessionTitle is a session's name as the editor shows it: the characters
// a card flags escaped (engine.DisplayProse) and marked ⚠, on one line.
func sessionTitle(name string) string {
	shown := engine.DisplayProse(name)
	if shown != name {
		return "⚠ " + oneLine(shown)
	}
	return oneLine(shown)
}

// readOld reads a file inside the project for an edit's diff.
func (t *translator) readOld(p string) (string, bool) {
	if t.root == "" {
		return "", false
	}
	rel := p
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(t.root, p)
		if err != nil {
			return "", false
		}
		rel = r
	}
	root, err := os.OpenRoot(t.root)
	if err != nil {
		return "", false
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxOldText {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxOldText))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// stopReason maps a turn_end status to ACP's stop reason; an error turn is
// an error of session/prompt instead.
func stopReason(end protocol.TurnEndData, lastErr string) (sdk.StopReason, error) {
	switch end.Status {
	case protocol.TurnCompleted:
		return sdk.StopReasonEndTurn, nil
	case protocol.TurnInterrupted:
		return sdk.StopReasonCancelled, nil
	case protocol.TurnMaxIterations:
		return sdk.StopReasonMaxTurnRequests, nil
	}
	msg := firstNonEmpty(lastErr, end.Reason, "the turn failed")
	return "", fmt.Errorf("turn %s: %s", end.Status, msg)
}

// callUpdate describes a call in a permission request: as the tool_call
// update shows it, and, when the engine flagged a field of the card, a
// title marked ⚠ and a first content block that says which and why. It
// reads only the translator's root, so the question goroutines may call it.
func (t *translator) callUpdate(d protocol.PermissionRequiredData) sdk.ToolCallUpdate {
	return sdk.ToolCallUpdate{
		ToolCallId: sdk.ToolCallId(d.ReqID),
		Title:      sdk.Ptr(flagTitle(toolTitle(d.Name, d.Arguments), d.Warnings)),
		Kind:       sdk.Ptr(toolKind(d.Name)),
		Status:     sdk.Ptr(sdk.ToolCallStatusPending),
		RawInput:   d.Arguments,
		Locations:  t.locations(d.Arguments),
		Content:    append(warningContent(d.Warnings), t.callContent(d.Name, d.Arguments)...),
	}
}
