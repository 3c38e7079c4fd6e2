package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestE2EDemoSpeaksTheSessionLanguage: without an API key the real binary
// answers with the demo provider, in each session's language: ja from the
// OS locale, zh from session.create {lang}. Its text, its question's
// options and the session's automatic name are in that language, and
// initialize's notice is in the default one.
func TestE2EDemoSpeaksTheSessionLanguage(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := t.TempDir()
	env := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "ZQAGENT_SCRIPT", k == "ZQAGENT_MODEL", k == "DBUS_SESSION_BUS_ADDRESS", k == "XDG_RUNTIME_DIR",
			strings.HasPrefix(k, "LC_"), k == "LANG", strings.HasSuffix(k, "_API_KEY"):
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "LANG=ja_JP.UTF-8", "XDG_RUNTIME_DIR="+t.TempDir()) // no session bus: no keychain, no key
	p := spawnWith(t, dataDir, spawnOptions{env: env, args: []string{"--keyring-service", "zqagent-e2e-lang-" + filepath.Base(dataDir)}})
	c, err := dialChecked(t, tctx(t), p.ready.URL, p.ready.Token, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	var init struct {
		Capabilities struct {
			Provider    string `json:"provider"`
			Notice      string `json:"notice"`
			DefaultLang string `json:"defaultLang"`
		} `json:"capabilities"`
	}
	require.NoError(t, c.Call(tctx(t), "initialize", map[string]any{"protocolVersion": 1}, &init))
	require.Equal(t, "demo", init.Capabilities.Provider)
	require.Equal(t, "ja", init.Capabilities.DefaultLang)
	require.Contains(t, init.Capabilities.Notice, "API キーが設定されていません")
	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)

	play := func(extra map[string]any, input string) (text string, options []any, name string) {
		sid, err := c.CreateSession(tctx(t), pid, extra)
		require.NoError(t, err)
		_, err = c.Subscribe(tctx(t), sid, 0)
		require.NoError(t, err)
		_, err = c.StartTurn(tctx(t), sid, input)
		require.NoError(t, err)
		evs := untilType(t, c, sid, "permission_required") // git status
		perm := dataOf(t, evs[len(evs)-1])
		require.NoError(t, c.Respond(tctx(t), sid, perm["requestId"].(string), map[string]string{"outcome": "once"}))
		more := untilType(t, c, sid, "ask_user_question")
		evs = append(evs, more...)
		q := dataOf(t, more[len(more)-1])
		options, _ = q["options"].([]any)
		require.NotEmpty(t, options)
		require.NoError(t, c.Respond(tctx(t), sid, q["requestId"].(string), map[string]any{"answer": options[2]}))
		evs = append(evs, untilType(t, c, sid, "turn_end")...)
		require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
		var b strings.Builder
		for _, ev := range ofType(evs, "assistant_message") {
			if s, ok := dataOf(t, ev)["text"].(string); ok {
				b.WriteString(s)
			}
		}
		named := untilType(t, c, sid, "session_named")
		name, _ = dataOf(t, named[len(named)-1])["name"].(string)
		return b.String(), options, name
	}

	text, options, name := play(nil, "ビルドを直して")
	require.Contains(t, text, "スクリプトで動くデモプロバイダー")
	require.Contains(t, text, "デモはここまでです")
	require.Equal(t, "今は何もしない", options[2])
	require.Equal(t, "デモ：ビルドを直して", name)

	text, options, name = play(map[string]any{"lang": "zh"}, "修复构建")
	require.Contains(t, text, "演示提供方")
	require.Contains(t, text, "演示到此结束")
	require.Equal(t, "暂时不用", options[2])
	require.Equal(t, "演示：修复构建", name)

	sessions := struct {
		Sessions []struct {
			Title string `json:"title"`
			Lang  string `json:"lang"`
		} `json:"sessions"`
	}{}
	require.NoError(t, c.Call(tctx(t), "session.list", map[string]any{"projectId": pid}, &sessions))
	titles := map[string]string{}
	for _, s := range sessions.Sessions {
		titles[s.Lang] = s.Title
	}
	require.Equal(t, map[string]string{"ja": "デモ：ビルドを直して", "zh": "演示：修复构建"}, titles)
}
