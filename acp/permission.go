package acp

import (
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/protocol"
)

// The ids of the permission options we offer. An editor answers with one of
// them (or cancelled).
const (
	optAllowOnce    sdk.PermissionOptionId = "allow_once"
	optAllowAlways  sdk.PermissionOptionId = "allow_always"
	optRejectOnce   sdk.PermissionOptionId = "reject_once"
	optRejectAlways sdk.PermissionOptionId = "reject_always"
)

// alwaysOutcome is the session grant an "always" answer to this request
// gives: the executable for a simple run_shell command, the tool for other
// tools, none (no allow_always option) for a shell command too complex to
// grant.
func alwaysOutcome(d protocol.PermissionRequiredData) (permission.Outcome, bool) {
	if d.Name == "run_shell" {
		if d.Command == "" {
			return "", false
		}
		return permission.OutcomeAlwaysCommand, true
	}
	return permission.OutcomeAlwaysTool, true
}

// permissionOptions are the options of a permission_required request.
func permissionOptions(d protocol.PermissionRequiredData) []sdk.PermissionOption {
	opts := []sdk.PermissionOption{{OptionId: optAllowOnce, Name: "Allow once", Kind: sdk.PermissionOptionKindAllowOnce}}
	if o, ok := alwaysOutcome(d); ok {
		name := fmt.Sprintf("Always allow %s in this session", d.Name)
		if o == permission.OutcomeAlwaysCommand {
			name = fmt.Sprintf("Always allow `%s` in this session", engine.DisplayText(d.Command))
		}
		opts = append(opts, sdk.PermissionOption{OptionId: optAllowAlways, Name: name, Kind: sdk.PermissionOptionKindAllowAlways})
	}
	return append(opts,
		sdk.PermissionOption{OptionId: optRejectOnce, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		// We keep no deny rules: "reject always" refuses this call like
		// reject once; the model is told it was refused.
		sdk.PermissionOption{OptionId: optRejectAlways, Name: "Reject always", Kind: sdk.PermissionOptionKindRejectAlways},
	)
}

// approvalOutcome maps the editor's answer to our outcome. Anything but an
// allow option we offered (cancelled, an unknown id, an allow_always we did
// not offer) is deny: approvals fail closed.
func approvalOutcome(d protocol.PermissionRequiredData, out sdk.RequestPermissionOutcome) permission.Outcome {
	if out.Selected == nil {
		return permission.OutcomeDeny
	}
	switch out.Selected.OptionId {
	case optAllowOnce:
		return permission.OutcomeOnce
	case optAllowAlways:
		if o, ok := alwaysOutcome(d); ok {
			return o
		}
	}
	return permission.OutcomeDeny
}

// What a flagged card's characters are, for the editor's user (the kinds of
// protocol.TextWarning).
var warningWhat = map[string]string{
	protocol.WarnControl:   "control characters",
	protocol.WarnANSI:      "terminal escape sequences",
	protocol.WarnBidi:      "bidi overrides that reorder how text shows",
	protocol.WarnInvisible: "invisible characters",
	protocol.WarnBlank:     "blanks that are not spaces to a shell",
}

// warningContent is the first content block of a request whose card the
// engine flagged: a line per field that says what it holds. Titles and
// content show those characters escaped (engine.DisplayText).
func warningContent(ws []protocol.TextWarning) []sdk.ToolCallContent {
	if len(ws) == 0 {
		return nil
	}
	var fields []string
	what := map[string][]string{}
	for _, w := range ws {
		if _, ok := what[w.Field]; !ok {
			fields = append(fields, w.Field)
		}
		k, ok := warningWhat[w.Kind]
		if !ok {
			k = "unsafe characters"
		}
		what[w.Field] = append(what[w.Field], k)
	}
	var b strings.Builder
	for _, f := range fields {
		fmt.Fprintf(&b, "⚠ `%s` holds %s (shown escaped).\n", f, strings.Join(what[f], " and "))
	}
	return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(strings.TrimSuffix(b.String(), "\n")))}
}

// flagTitle marks the title of a flagged request.
func flagTitle(title string, ws []protocol.TextWarning) string {
	if len(ws) == 0 {
		return title
	}
	return "⚠ " + title
}

// yesNoOptions are the options of a plan or directory request.
func yesNoOptions(yes, no string) []sdk.PermissionOption {
	return []sdk.PermissionOption{
		{OptionId: optAllowOnce, Name: yes, Kind: sdk.PermissionOptionKindAllowOnce},
		{OptionId: optRejectOnce, Name: no, Kind: sdk.PermissionOptionKindRejectOnce},
	}
}

// allowed reports whether the editor chose an allow option.
func allowed(out sdk.RequestPermissionOutcome) bool {
	return out.Selected != nil && (out.Selected.OptionId == optAllowOnce || out.Selected.OptionId == optAllowAlways)
}

// questionOptions offers an ask_user question's choices as permission
// options (ACP v1 has no question request): option i has id "answer_<i>".
func questionOptions(q protocol.AskUserQuestionData) []sdk.PermissionOption {
	opts := make([]sdk.PermissionOption, 0, len(q.Options)+1)
	for i, o := range q.Options {
		opts = append(opts, sdk.PermissionOption{OptionId: sdk.PermissionOptionId(fmt.Sprintf("answer_%d", i)), Name: oneLine(engine.DisplayProse(o)), Kind: sdk.PermissionOptionKindAllowOnce})
	}
	return append(opts, sdk.PermissionOption{OptionId: optRejectOnce, Name: "Don't answer", Kind: sdk.PermissionOptionKindRejectOnce})
}

// noAnswer is the answer of a question the editor could not or did not
// answer.
const noAnswer = "(the user did not answer; the editor has no way to type an answer — decide yourself or say what you need in your reply)"

// questionAnswer maps the editor's choice to the answer text.
func questionAnswer(q protocol.AskUserQuestionData, out sdk.RequestPermissionOutcome) string {
	if out.Selected == nil {
		return noAnswer
	}
	var i int
	if _, err := fmt.Sscanf(string(out.Selected.OptionId), "answer_%d", &i); err != nil || i < 0 || i >= len(q.Options) {
		return noAnswer
	}
	return q.Options[i]
}

// Session modes: our four permission modes.
var modes = []struct {
	mode permission.Mode
	name string
	desc string
}{
	{permission.ModeDiscuss, "Discuss", "Read-only: talk about the code; no writes, no commands."},
	{permission.ModePlan, "Plan", "Read-only: explore and propose a plan; no writes, no commands."},
	{permission.ModeInteractive, "Interactive", "Every write and command asks for approval (unless allowlisted)."},
	{permission.ModeAuto, "Auto", "Writes and commands run without asking (still confined to the workspace)."},
}

// modeState is the session's mode state as ACP shows it.
func modeState(current string) *sdk.SessionModeState {
	if current == "" {
		current = string(permission.ModeInteractive)
	}
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(current)}
	for _, m := range modes {
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(m.mode), Name: m.name, Description: sdk.Ptr(m.desc)})
	}
	return st
}
