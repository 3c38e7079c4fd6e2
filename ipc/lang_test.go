package ipc

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/protocol"
)

func withSystemLocale(tag string) serverOpt {
	return func(o *Options) { o.SystemLocale = func() string { return tag } }
}

// initializeLocale connects and initializes with the shell's locale.
func (ts *testServer) initializeLocale(t *testing.T, locale string) (*client.Client, protocol.InitializeResult) {
	t.Helper()
	c, err := dialRaw(ts)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	var res protocol.InitializeResult
	require.NoError(t, c.Call(tctx(t), "initialize", map[string]any{"client": map[string]string{"name": "t", "version": "1"}, "protocolVersion": 1, "locale": locale}, &res))
	return c, res
}

func sessionLangOf(t *testing.T, c *client.Client, sid string) string {
	t.Helper()
	var got protocol.SessionGetResult
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
	return got.Session.Lang
}

// TestSessionLanguageChoosesPromptAndNaming: a session's language is its
// session.create {lang}, else the shell's locale (initialize {locale}), else
// the OS locale, else English; it is kept with the session, shown by
// session.get, changed by session.setLang, and it selects the system prompt
// and the session-naming prompt the model receives.
func TestSessionLanguageChoosesPromptAndNaming(t *testing.T) {
	f := newFakeOpenAI(t)
	t.Setenv("OPENAI_API_KEY", "sk-lang-test-key-0123")
	t.Setenv("OPENAI_BASE_URL", f.baseURL())
	t.Setenv("OPENAI_FORCE_API_MODE", "chat")
	t.Setenv("OPENAI_MODEL", "m-small")
	ts := startServer(t, withModelProviders(), withSystemLocale("ko_KR.UTF-8"))

	// No shell locale: the OS locale.
	c := ts.dial(t)
	pid := ts.project(t, c)
	sidOS, err := c.CreateSession(tctx(t), pid, map[string]any{"vcs": "off"})
	require.NoError(t, err)
	require.Equal(t, "ko", sessionLangOf(t, c, sidOS))

	// The shell's locale wins over the OS's for sessions created after it;
	// a session keeps the language it was created with.
	c2, res := ts.initializeLocale(t, "ja-JP")
	require.Equal(t, "ja", res.Capabilities.DefaultLang)
	require.Equal(t, engine.PromptLangs, res.Capabilities.Languages)
	sid, err := c2.CreateSession(tctx(t), pid, map[string]any{"vcs": "off"})
	require.NoError(t, err)
	require.Equal(t, "ja", sessionLangOf(t, c2, sid))
	require.Equal(t, "ko", sessionLangOf(t, c2, sidOS))

	// session.create {lang} wins; tags are read as BCP 47 or POSIX.
	sidTW, err := c2.CreateSession(tctx(t), pid, map[string]any{"lang": "zh-Hant-TW", "vcs": "off"})
	require.NoError(t, err)
	require.Equal(t, "zh-TW", sessionLangOf(t, c2, sidTW))

	// Refused: a language without prompts for a session, a malformed locale.
	ce := callErr(t, c2, "session.create", map[string]any{"projectId": pid, "lang": "fr"})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	require.Contains(t, ce.Message, `lang: unsupported language "fr"; one of zh, en, zh-TW, ja, ko, es`)
	ce = callErr(t, c2, "session.setLang", map[string]any{"sessionId": sid, "lang": "klingon"})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	require.Equal(t, wsrpc.CodeNotFound, callErr(t, c2, "session.setLang", map[string]any{"sessionId": "nope", "lang": "en"}).Code)
	c3, err := dialRaw(ts)
	require.NoError(t, err)
	defer c3.Close()
	ce = callErr(t, c3, "initialize", map[string]any{"protocolVersion": 1, "locale": "ja JP; rm"})
	require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
	require.Contains(t, ce.Message, "locale")

	// The model receives the session's language: system prompt and naming.
	_, err = c2.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	turn := func() string {
		_, err := c2.StartTurn(tctx(t), sid, "hello")
		require.NoError(t, err)
		collectTurn(t, c2, sid)
		bodies, _ := f.streamed()
		return systemPrompt(bodies[len(bodies)-1])
	}
	sys := turn()
	require.True(t, strings.HasPrefix(sys, engine.Prompts("ja").Code), sys[:min(len(sys), 200)])
	envLines := strings.Split(engine.Prompts("ja").Env, "\n")
	require.Contains(t, sys, envLines[len(envLines)-2], "the reply-language line of the environment block")
	nextOfType(t, c2, sid, "session_named")
	require.Equal(t, engine.Prompts("ja").Naming, systemPrompt(f.namingBodies()[0]), "the naming prompt is the session's language")

	// session.setLang: shown at once, in the prompt of the next turn.
	var info protocol.Session
	require.NoError(t, c2.Call(tctx(t), "session.setLang", map[string]any{"sessionId": sid, "lang": "es_ES.UTF-8"}, &info))
	require.Equal(t, "es", info.Lang)
	require.Equal(t, "es", sessionLangOf(t, c2, sid))
	sys = turn()
	require.True(t, strings.HasPrefix(sys, engine.Prompts("es").Code), sys[:min(len(sys), 200)])
}

// TestSessionLanguageFallsBackToEnglish: no shell locale and an OS locale
// without prompts (or none) give English.
func TestSessionLanguageFallsBackToEnglish(t *testing.T) {
	for _, osLocale := range []string{"", "fr_FR.UTF-8"} {
		ts := startServer(t, withSystemLocale(osLocale))
		c, res := ts.initializeLocale(t, "")
		require.Equal(t, "en", res.Capabilities.DefaultLang)
		sid := ts.session(t, c, nil)
		require.Equal(t, "en", sessionLangOf(t, c, sid), "os locale %q", osLocale)
	}
	// A shell locale without prompts means English, not the OS's language.
	ts := startServer(t, withSystemLocale("ja_JP.UTF-8"))
	c, res := ts.initializeLocale(t, "fr-FR")
	require.Equal(t, "en", res.Capabilities.DefaultLang)
	require.Equal(t, "en", sessionLangOf(t, c, ts.session(t, c, nil)))
}
