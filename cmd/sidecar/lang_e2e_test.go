package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// TestE2ESessionLanguageFromOSAndShell: the real binary takes a session's
// default language from the OS locale (LANG) when the shell names none, from
// initialize {locale} when it does, and session.create {lang} over both;
// session.get shows it and session.setLang changes it.
func TestE2ESessionLanguageFromOSAndShell(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	projDir := t.TempDir()
	p := spawn(t, dataDir, "ZQAGENT_SCRIPT="+writeScript(t, text("hi")), "LC_ALL=", "LC_MESSAGES=", "LANG=ko_KR.UTF-8")
	langOf := func(c *client.Client, sid string) string {
		var got struct {
			Session struct {
				Lang string `json:"lang"`
			} `json:"session"`
		}
		require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &got))
		return got.Session.Lang
	}
	type initResult struct {
		Capabilities struct {
			DefaultLang string `json:"defaultLang"`
		} `json:"capabilities"`
	}
	dial := func(params map[string]any) (*client.Client, initResult) {
		c, err := dialChecked(t, tctx(t), p.ready.URL, p.ready.Token, nil)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		var res initResult
		require.NoError(t, c.Call(tctx(t), "initialize", params, &res))
		return c, res
	}

	c, res := dial(map[string]any{"protocolVersion": 1})
	require.Equal(t, "ko", res.Capabilities.DefaultLang, "the OS locale")
	pid, err := c.OpenProject(tctx(t), projDir)
	require.NoError(t, err)
	sidOS, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	require.Equal(t, "ko", langOf(c, sidOS))

	c2, res := dial(map[string]any{"protocolVersion": 1, "locale": "es-MX"})
	require.Equal(t, "es", res.Capabilities.DefaultLang, "the shell's locale")
	sid, err := c2.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	require.Equal(t, "es", langOf(c2, sid))
	require.Equal(t, "ko", langOf(c2, sidOS), "a session keeps its language")
	sidJA, err := c2.CreateSession(tctx(t), pid, map[string]any{"lang": "ja"})
	require.NoError(t, err)
	require.Equal(t, "ja", langOf(c2, sidJA))
	require.NoError(t, c2.Call(tctx(t), "session.setLang", map[string]any{"sessionId": sidJA, "lang": "zh-TW"}, nil))
	require.Equal(t, "zh-TW", langOf(c2, sidJA))
	err = c2.Call(tctx(t), "session.create", map[string]any{"projectId": pid, "lang": "fr"}, nil)
	require.Equal(t, client.CodeInvalidParams, client.Code(err))
}
