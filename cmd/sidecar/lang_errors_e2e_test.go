package main

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// TestE2EErrorsSpeakTheSessionLanguage: a model endpoint that answers 401
// and then 429 ends a ja session's turns and a zh session's with error
// events whose message says it in the session's language, while error
// stays the English text for logs and error_type the class.
func TestE2EErrorsSpeakTheSessionLanguage(t *testing.T) {
	f := newFakeModel(t, "401", "429", "401", "429")
	e := setupEnv(t, modelEnv(f, "OPENAI_MAX_RETRIES=0", "LANG=en_US.UTF-8", "LC_ALL="), map[string]any{"lang": "ja"})
	pid, err := e.c.OpenProject(tctx(t), e.projDir) // the project already open: its id
	require.NoError(t, err)
	zh, err := e.c.CreateSession(tctx(t), pid, map[string]any{"lang": "zh"})
	require.NoError(t, err)
	_, err = e.c.Subscribe(tctx(t), zh, 0)
	require.NoError(t, err)

	failed := func(sid string) map[string]any {
		t.Helper()
		_, err := e.c.StartTurn(tctx(t), sid, "hello")
		require.NoError(t, err)
		evs := untilType(t, e.c, sid, "turn_end")
		require.Equal(t, "error", dataOf(t, evs[len(evs)-1])["status"])
		errs := ofType(evs, "error")
		require.Len(t, errs, 1)
		return dataOf(t, errs[0])
	}
	for _, c := range []struct {
		sid             string
		auth, rateLimit string
	}{
		{e.sid, "モデルプロバイダーが API キーを拒否しました", "モデルプロバイダーへのリクエストが多すぎます"},
		{zh, "模型提供方拒绝了 API 密钥", "模型提供方当前请求过多"},
	} {
		d := failed(c.sid)
		require.Equal(t, "auth", d["error_type"])
		require.Contains(t, d["error"], "HTTP 401", "error stays the English text")
		require.Contains(t, d["message"], c.auth)
		require.NotContains(t, d["message"], "sk-retry", "no key in the message")
		// An auth error is not retriable: -32003 nothing_to_retry, whose
		// data.message is in the default language (the OS's: English).
		err := e.c.Call(tctx(t), "turn.retry", map[string]any{"sessionId": c.sid}, nil)
		var we *client.Error
		require.True(t, errors.As(err, &we), "%v", err)
		require.Equal(t, client.CodeConflict, we.Code)
		require.Equal(t, protocol.KindNothingToRetry, we.Data.Kind)
		require.Contains(t, we.Data.Message, "There is nothing to retry")
		d = failed(c.sid)
		require.Equal(t, "rate_limit", d["error_type"])
		require.Equal(t, true, d["retriable"])
		require.Contains(t, d["error"], "HTTP 429")
		require.Contains(t, d["message"], c.rateLimit)
	}
	streams, _ := f.counts()
	require.Equal(t, 4, streams)
}

// TestE2EConfigErrorSpeaksTheSessionLanguage: with no model configured a
// turn cannot start; the error event (error_type config) and the turn_end
// (reason engine_unavailable) the sidecar records for it say so in the
// session's language (ja, zh). A JSON-RPC error meant for people carries
// data.message in the default language (initialize's locale), one meant for
// programs does not.
func TestE2EConfigErrorSpeaksTheSessionLanguage(t *testing.T) {
	dataDir, projDir := filepath.Join(t.TempDir(), "data"), t.TempDir()
	p := spawn(t, dataDir, "OPENAI_API_KEY=sk-config-e2e-0123", "OPENAI_MODEL=", "ZQAGENT_MODEL=", "ZQAGENT_SCRIPT=", noBus,
		"OPENAI_BASE_URL=http://127.0.0.1:9/v1", "LANG=en_US.UTF-8", "LC_ALL=")
	c, err := dialChecked(t, tctx(t), p.ready.URL, p.ready.Token, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.Call(tctx(t), "initialize", map[string]any{"protocolVersion": 1, "locale": "ja-JP"}, nil))
	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)

	for _, want := range []struct{ lang, noModel, cannotStart string }{
		{"ja", "このセッションにはモデルが設定されていません", "ターンを開始できませんでした"},
		{"zh", "此会话尚未设置模型", "本轮无法开始"},
	} {
		sid, err := c.CreateSession(tctx(t), pid, map[string]any{"lang": want.lang})
		require.NoError(t, err)
		_, err = c.Subscribe(tctx(t), sid, 0)
		require.NoError(t, err)
		_, err = c.StartTurn(tctx(t), sid, "hello")
		require.NoError(t, err)
		evs := untilType(t, c, sid, "turn_end")
		errs := ofType(evs, "error")
		require.Len(t, errs, 1, want.lang)
		d := dataOf(t, errs[0])
		require.Equal(t, "config", d["error_type"], want.lang)
		require.Contains(t, d["error"], "no model configured", "%s: error stays the English text", want.lang)
		require.Contains(t, d["message"], want.noModel, want.lang)
		end := dataOf(t, evs[len(evs)-1])
		require.Equal(t, "error", end["status"], want.lang)
		require.Equal(t, "engine_unavailable", end["reason"], want.lang)
		require.Contains(t, end["message"], want.cannotStart, want.lang)
	}

	// -32005 no_model (turn.retry loads the engine): data.message in the
	// default language (ja, initialize's locale), not the session's (zh),
	// beside the English message.
	sid, err := c.CreateSession(tctx(t), pid, map[string]any{"lang": "zh"})
	require.NoError(t, err)
	err = c.Call(tctx(t), "turn.retry", map[string]any{"sessionId": sid}, nil)
	var we *client.Error
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, client.CodeConfig, we.Code)
	require.NotNil(t, we.Data)
	require.Equal(t, protocol.KindNoModel, we.Data.Kind)
	require.Contains(t, we.Message, "no model configured", "message stays the English text")
	require.Contains(t, we.Data.Message, "このセッションにはモデルが設定されていません")
	// Invalid params are for programs: no data.message.
	err = c.Call(tctx(t), "session.create", map[string]any{"projectId": pid, "lang": "fr"}, nil)
	require.True(t, errors.As(err, &we), "%v", err)
	require.Equal(t, client.CodeInvalidParams, we.Code)
	require.Empty(t, we.Data.Message)
}

// TestE2ESuspendedInterruptSpeaksTheSessionLanguage: turn.interrupt of a
// zh session's suspended turn (the sidecar was killed while it waited for
// an approval) records a turn_end {reason: interrupted_while_suspended}
// whose message says it in Chinese.
func TestE2ESuspendedInterruptSpeaksTheSessionLanguage(t *testing.T) {
	first := writeScript(t, calls("", toolCall("c1", "run_shell", map[string]any{"command": "echo never"})))
	e := setup(t, first, map[string]any{"lang": "zh"})
	turnID, err := e.c.StartTurn(tctx(t), e.sid, "do it")
	require.NoError(t, err)
	untilType(t, e.c, e.sid, "permission_required")
	require.NoError(t, e.p.cmd.Process.Signal(syscall.SIGKILL))
	require.True(t, e.p.waitFor(10*time.Second))

	p2 := spawn(t, e.dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("new turn")), "LANG=en_US.UTF-8", "LC_ALL=")
	c := p2.connect(t)
	_, err = c.Subscribe(tctx(t), e.sid, 0)
	require.NoError(t, err)
	untilType(t, c, e.sid, "turn_suspended")
	require.NoError(t, c.Call(tctx(t), "turn.interrupt", map[string]string{"sessionId": e.sid}, nil))
	end := untilType(t, c, e.sid, "turn_end")
	require.Equal(t, turnID, end[len(end)-1].TurnID)
	d := dataOf(t, end[len(end)-1])
	require.Equal(t, "interrupted_while_suspended", d["reason"])
	require.Contains(t, d["message"], "本轮在等待回答时被停止")
}
