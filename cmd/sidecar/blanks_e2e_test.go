package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestE2EBlanksThatAreNotBlanks: `echo build ok<X>#<X>; touch pwned` with X
// a no-break space, a Hangul filler or the Braille blank reads on a card as
// a command and a comment, but bash does not split words on X, so touch
// runs once approved. The card flags the command (kind "blank") and its
// display form shows X escaped; a command with plain spaces is not flagged.
func TestE2EBlanksThatAreNotBlanks(t *testing.T) {
	blanks := []struct {
		r       rune
		escaped string
	}{
		{'\u00a0', `\xa0`},
		{'\u3164', `\u3164`},
		{'\u2800', `\u2800`},
	}
	command := func(i int, blank string) string {
		return fmt.Sprintf("echo build ok%s#%s; touch pwned-%d", blank, blank, i)
	}
	var responses []map[string]any
	for i, b := range blanks {
		responses = append(responses, calls("", toolCall(fmt.Sprintf("c%d", i), "run_shell", map[string]string{"command": command(i, string(b.r))})), text("ran"))
	}
	responses = append(responses, calls("", toolCall("clean", "run_shell", map[string]string{"command": "echo build ok # ; touch pwned-clean"})), text("ran"))
	e := setup(t, writeScript(t, responses...), nil)

	for i, b := range blanks {
		_, err := e.c.StartTurn(tctx(t), e.sid, fmt.Sprintf("build %d", i))
		require.NoError(t, err)
		evs := untilType(t, e.c, e.sid, "permission_required")
		card := dataOf(t, evs[len(evs)-1])
		require.Equal(t, command(i, string(b.r)), card["arguments"].(map[string]any)["command"], "the arguments are what runs")
		require.Equal(t, []any{map[string]any{"field": "arguments.command", "kind": "blank"}}, card["warnings"], "U+%04X", b.r)
		require.Equal(t, map[string]any{"arguments.command": command(i, b.escaped)}, card["display"], "U+%04X", b.r)

		// The warning is not idle: approved, the command runs touch.
		require.NoError(t, e.c.Respond(tctx(t), e.sid, card["requestId"].(string), map[string]string{"outcome": "once"}))
		untilType(t, e.c, e.sid, "turn_end")
		require.FileExists(t, filepath.Join(e.projDir, fmt.Sprintf("pwned-%d", i)), "bash does not split on U+%04X", b.r)
	}

	_, err := e.c.StartTurn(tctx(t), e.sid, "build clean")
	require.NoError(t, err)
	evs := untilType(t, e.c, e.sid, "permission_required")
	card := dataOf(t, evs[len(evs)-1])
	require.NotContains(t, card, "warnings", "ASCII spaces are not flagged")
	require.NotContains(t, card, "display")
	require.NoError(t, e.c.Respond(tctx(t), e.sid, card["requestId"].(string), map[string]string{"outcome": "deny"}))
	untilType(t, e.c, e.sid, "turn_end")
}
