package main

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// TestE2EExportImportSession: through the real binary, a turn with an
// attachment runs against the fake model; session.export writes one file
// that holds neither the API key nor an MCP server's env value;
// session.import reads it into another project: session.get has the
// original's messages, a replay has its events, and a new turn in the
// imported session sends the whole history to the model. A zip-slip file,
// an oversized one and one with bad JSON are refused with -32602 naming
// path, and nothing appears: no session, no folder, no file outside.
func TestE2EExportImportSession(t *testing.T) {
	f := newFakeModel(t, "a red square", "still a red square")
	var mu sync.Mutex
	var bodies [][]byte // the streamed requests the model received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`"stream":true`)) {
			mu.Lock()
			bodies = append(bodies, b)
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		f.handle(w, r)
	}))
	t.Cleanup(srv.Close)
	const apiKey = "sk-export-e2e-5f1c0a9b7d3e"
	const mcpSecret = "mcp-env-secret-8a2b4c6d"
	// A title of the user's: no naming request, the log is the turn's.
	e := setupEnv(t, append(f.env(), "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY="+apiKey, noBus), map[string]any{"title": "Red square"})
	pid, err := e.c.OpenProject(tctx(t), e.projDir)
	require.NoError(t, err)
	require.NoError(t, e.c.Call(tctx(t), "mcp.add", map[string]any{"projectId": pid,
		"config": map[string]any{"name": "vault", "command": "/nonexistent/vault-mcp", "env": map[string]string{"VAULT_TOKEN": mcpSecret}, "enabled": false}}, nil))

	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0xAB}, 2048)...)
	require.NoError(t, e.c.Call(tctx(t), "turn.start", map[string]any{"sessionId": e.sid, "text": "describe this",
		"attachments": []map[string]string{{"name": "red.png", "mimeType": "image/png", "dataUrl": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)}}}, nil))
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])

	out := filepath.Join(t.TempDir(), "shared", "red square.zqsession")
	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	var exp protocol.SessionExportResult
	require.NoError(t, e.c.Call(tctx(t), "session.export", map[string]any{"sessionId": e.sid, "path": out}, &exp))
	require.Equal(t, out, exp.Path)
	require.Equal(t, 1, exp.Attachments)
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, int64(len(raw)), exp.Bytes)
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	require.NoError(t, err)
	var names []string
	for _, zf := range zr.File {
		names = append(names, zf.Name)
		rc, err := zf.Open()
		require.NoError(t, err)
		member, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		for _, secret := range []string{apiKey, mcpSecret} {
			require.NotContains(t, string(member), secret, "%s of the export", zf.Name)
		}
		if strings.HasPrefix(zf.Name, "attachments/") {
			require.Equal(t, png, member)
		}
	}
	require.Subset(t, names, []string{"manifest.json", "events.jsonl", "history.jsonl"})
	for _, secret := range []string{apiKey, mcpSecret} {
		require.NotContains(t, string(raw), secret)
	}

	// Into another project of the same sidecar.
	otherDir := filepath.Join(t.TempDir(), "other")
	require.NoError(t, os.MkdirAll(otherDir, 0o755))
	other, err := e.c.OpenProject(tctx(t), otherDir)
	require.NoError(t, err)
	var imp protocol.SessionImportResult
	require.NoError(t, e.c.Call(tctx(t), "session.import", map[string]any{"projectId": other, "path": out}, &imp))
	require.NotEqual(t, e.sid, imp.SessionID)
	require.Equal(t, other, imp.Session.ProjectID)
	require.Equal(t, []string{}, imp.ResetSettings)
	var list protocol.SessionListResult
	require.NoError(t, e.c.Call(tctx(t), "session.list", map[string]any{"projectId": other}, &list))
	require.Len(t, list.Sessions, 1)
	require.Equal(t, imp.SessionID, list.Sessions[0].SessionID)

	var orig, got struct {
		Session  protocol.Session `json:"session"`
		Messages json.RawMessage  `json:"messages"`
	}
	require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]any{"sessionId": e.sid}, &orig))
	require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]any{"sessionId": imp.SessionID}, &got))
	require.JSONEq(t, string(orig.Messages), string(got.Messages), "the imported session's messages are the original's")
	require.Contains(t, string(got.Messages), `"attachmentRefs"`)
	require.Equal(t, orig.Session.Title, got.Session.Title)
	require.Equal(t, orig.Session.LastSeq, got.Session.LastSeq, "the log renumbered from 1, one for one")

	// A replay of the imported session is the original's log.
	c2 := e.p.connect(t)
	replay := func(sid string) (types []string, data []string) {
		t.Helper()
		sub, err := c2.Subscribe(tctx(t), sid, 0)
		require.NoError(t, err)
		for int64(len(types)) < sub.LastSeq {
			ev, err := c2.NextEvent(tctx(t), sid)
			require.NoError(t, err)
			require.Equal(t, int64(len(types)+1), ev.Seq)
			types, data = append(types, ev.Type), append(data, string(ev.Data))
		}
		return types, data
	}
	origTypes, origData := replay(e.sid)
	gotTypes, gotData := replay(imp.SessionID)
	require.Equal(t, origTypes, gotTypes)
	for i := range origData {
		require.JSONEq(t, origData[i], gotData[i], "event %d (%s)", i+1, gotTypes[i])
	}
	require.Contains(t, gotTypes, "turn_end")

	// A new turn in the imported session continues its history.
	mu.Lock()
	before := len(bodies)
	mu.Unlock()
	_, err = c2.StartTurn(tctx(t), imp.SessionID, "and now?")
	require.NoError(t, err)
	evs2 := untilType(t, c2, imp.SessionID, "turn_end")
	require.Equal(t, "completed", dataOf(t, evs2[len(evs2)-1])["status"])
	require.Equal(t, "still a red square", deltaText(t, evs2))
	mu.Lock()
	require.Len(t, bodies, before+1)
	sent := bodies[before]
	mu.Unlock()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(sent, &req))
	var convo []string
	for _, m := range req.Messages {
		if m.Role == "system" {
			continue
		}
		convo = append(convo, m.Role+": "+contentText(t, m.Content))
	}
	require.Equal(t, []string{"user: describe this", "assistant: a red square", "user: and now?"}, convo,
		"the model got the imported history, then the new input")

	// Hostile files: refused, nothing created.
	dir := t.TempDir()
	evil := "evil-" + randName(t)
	slip := hostileFile(t, dir, "slip.zqsession", raw, func(w *zip.Writer) {
		zw, err := w.Create("attachments/../../../../" + evil)
		require.NoError(t, err)
		_, err = zw.Write([]byte("pwned"))
		require.NoError(t, err)
	})
	badJSON := hostileFile(t, dir, "bad.zqsession", raw, func(w *zip.Writer) {}, "events.jsonl")
	cases := []struct{ path, msg string }{
		{slip, "unexpected entry"},
		{badJSON, "events.jsonl line 1"},
	}
	if runtime.GOOS != "windows" { // NTFS would write the zeros
		big := filepath.Join(dir, "big.zqsession")
		require.NoError(t, os.WriteFile(big, raw, 0o600))
		require.NoError(t, os.Truncate(big, 800<<20)) // sparse: no disk used
		cases = append(cases, struct{ path, msg string }{big, "the file has 838860800 bytes, at most 805306368"})
	}
	sessionsDir := filepath.Join(e.dataDir, "sessions")
	folders, err := os.ReadDir(sessionsDir)
	require.NoError(t, err)
	for _, tc := range cases {
		err := e.c.Call(tctx(t), "session.import", map[string]any{"projectId": other, "path": tc.path}, nil)
		var we *client.Error
		require.True(t, errors.As(err, &we), "%s: %v", tc.path, err)
		require.Equal(t, client.CodeInvalidParams, we.Code, we.Message)
		require.Equal(t, "path", we.Data.Field)
		require.Contains(t, we.Message, tc.msg)
	}
	require.NoError(t, e.c.Call(tctx(t), "session.list", map[string]any{"projectId": other}, &list))
	require.Len(t, list.Sessions, 1, "no session from a refused file")
	after, err := os.ReadDir(sessionsDir)
	require.NoError(t, err)
	require.Len(t, after, len(folders), "no folder from a refused file")
	for d := sessionsDir; d != filepath.Dir(d); d = filepath.Dir(d) {
		_, err := os.Stat(filepath.Join(d, evil))
		require.ErrorIs(t, err, os.ErrNotExist, "no file outside: %s", d)
	}
}

// hostileFile copies the session file valid into dir/name, leaving out the
// members named in drop (replaced by a line of bad JSON), then lets add
// write more entries.
func hostileFile(t *testing.T, dir, name string, valid []byte, add func(*zip.Writer), drop ...string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(valid), int64(len(valid)))
	require.NoError(t, err)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, zf := range zr.File {
		w, err := zw.Create(zf.Name)
		require.NoError(t, err)
		if strings.Contains(strings.Join(drop, "\n"), zf.Name) {
			_, err = w.Write([]byte("{\"seq\":1,\n"))
			require.NoError(t, err)
			continue
		}
		rc, err := zf.Open()
		require.NoError(t, err)
		_, err = io.Copy(w, rc)
		require.NoError(t, err)
		rc.Close()
	}
	add(zw)
	require.NoError(t, zw.Close())
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
	return p
}

// contentText is a Chat Completions message's content as text (a string,
// or the text parts of an array).
func contentText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	require.NoError(t, json.Unmarshal(raw, &parts), string(raw))
	var out []string
	for _, p := range parts {
		if p.Type == "text" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "")
}

func randName(t *testing.T) string {
	t.Helper()
	return strings.ReplaceAll(filepath.Base(t.TempDir()), string(filepath.Separator), "")
}
