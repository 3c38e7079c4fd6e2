package engine_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm"
)

// verbRE matches a fmt verb ("%s", "%d", "%-8.2f", "%%").
var verbRE = regexp.MustCompile(`%[-+# 0]*[0-9]*(\.[0-9]+)?[a-zA-Z%]`)

// TestMessagesEveryLanguageHasEveryText: every language has every text for
// people that English has and no other, none empty, each with the same fmt
// verbs as the English one, and its own words (not English left over).
func TestMessagesEveryLanguageHasEveryText(t *testing.T) {
	en := engine.Prompts("en").Messages
	require.NotEmpty(t, en)
	keys := make([]string, 0, len(en))
	for k := range en {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, lang := range engine.PromptLangs {
		m := engine.Prompts(lang).Messages
		got := make([]string, 0, len(m))
		for k := range m {
			got = append(got, k)
		}
		slices.Sort(got)
		require.Equal(t, keys, got, "%s: the texts for people differ from English's", lang)
		for _, k := range keys {
			text := m[k]
			require.NotEmpty(t, strings.TrimSpace(text), "%s: %s is empty", lang, k)
			require.NotContains(t, text, "\n", "%s: %s is one line", lang, k)
			require.Equal(t, verbRE.FindAllString(en[k], -1), verbRE.FindAllString(text, -1), "%s: %s has other fmt verbs than English", lang, k)
			if lang != "en" {
				require.NotEqual(t, en[k], text, "%s: %s is English", lang, k)
			}
		}
	}
}

// TestMessagesCoverWhatPeopleSee: the error types, turn_end reasons and
// JSON-RPC kinds the wire documents as shown to people each have a text.
func TestMessagesCoverWhatPeopleSee(t *testing.T) {
	for _, lang := range engine.PromptLangs {
		for _, typ := range []string{"auth", "rate_limit", "server", "network", "context_overflow", "bad_request", "unsupported", "unknown", "config", "storage", "approval", "compaction", "busy", "closed", "engine", "internal"} {
			require.NotEmpty(t, engine.ErrorMessage(lang, typ, nil), "%s: error_type %s", lang, typ)
		}
		for _, reason := range []string{"engine_unavailable", "nothing_to_retry", "queued_turn_unreadable", "interrupted_while_suspended", "sidecar_restart", "rewind_interrupted"} {
			require.NotEmpty(t, engine.ReasonMessage(lang, reason), "%s: reason %s", lang, reason)
		}
		for _, kind := range []string{"no_model", "no_api_key", "keychain_unavailable", "config", "busy", "nothing_to_retry", "already_answered", "exists", "stale_hash", "uncommitted_changes", "terminal_unavailable", "snapshot_expired", "clobbered", "vcs_disabled", "outside_workspace", "untrusted", "unsupported"} {
			require.NotEmpty(t, engine.KindMessage(lang, kind), "%s: kind %s", lang, kind)
		}
		// Meant for programs: no text.
		for _, kind := range []string{"invalid_params", "required", "wrong_type", "method_not_found", "internal", "not_found"} {
			require.Empty(t, engine.KindMessage(lang, kind), "%s: kind %s", lang, kind)
		}
		require.Empty(t, engine.ReasonMessage(lang, ""), lang)
		require.Empty(t, engine.ErrorMessage(lang, "no_such_type", nil), lang)
	}
}

func TestErrorKey(t *testing.T) {
	for _, c := range []struct {
		typ  string
		err  error
		want string
	}{
		{"config", fmt.Errorf("build: %w: pass a model", llm.ErrNoModel), "no_model"},
		{"config", &llm.Error{Kind: llm.KindConfig, Msg: "no API key", Err: llm.ErrNoAPIKey}, "no_api_key"},
		{"config", &llm.Error{Kind: llm.KindConfig, Msg: "read API key", Err: errors.Join(llm.ErrNoAPIKey, errors.New("keychain locked"))}, "no_api_key"},
		{"config", errors.New("invalid base URL"), "config"},
		{"engine", fmt.Errorf("conflict: %w", engine.ErrNothingToRetry), "nothing_to_retry"},
		{"busy", engine.ErrBusy, "busy"},
		{"auth", &llm.Error{Kind: llm.KindAuth, Status: 401}, "auth"},
		{"internal", nil, "internal"},
	} {
		require.Equal(t, c.want, engine.ErrorKey(c.typ, c.err), "%s %v", c.typ, c.err)
	}
	// The key picks the text: ja and zh differ from English and each other.
	noModel := fmt.Errorf("%w", llm.ErrNoModel)
	require.Equal(t, engine.Message("ja", "error.no_model"), engine.ErrorMessage("ja", "config", noModel))
	require.NotEqual(t, engine.ErrorMessage("ja", "config", noModel), engine.ErrorMessage("ja", "config", nil))
	require.NotEqual(t, engine.ErrorMessage("zh", "auth", nil), engine.ErrorMessage("en", "auth", nil))
}
