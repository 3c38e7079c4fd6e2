package ipc

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
)

func TestTurnWithAttachmentStoresRefsOnly(t *testing.T) {
	prov := scripted.New(scripted.Response{Text: "nice picture"})
	ts := startServer(t, withProvider(prov))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	payload := []byte("\x89PNG\r\n\x1a\nfake image bytes")
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(payload)
	err = c.Call(tctx(t), "turn.start", map[string]any{"sessionId": sid, "text": "look", "attachments": []map[string]string{{"name": "../shot.png", "mimeType": "image/png", "dataUrl": url}}}, nil)
	require.NoError(t, err)
	evs := collectTurn(t, c, sid)
	require.Contains(t, string(evs[0].Data), `"attachments":[{"name":"shot.png","mimeType":"image/png","size":24,"path":"attachments/`)
	for _, ev := range evs {
		require.NotContains(t, string(ev.Data), "base64", ev.Type)
	}
	var raw json.RawMessage
	require.NoError(t, c.Call(tctx(t), "session.get", map[string]string{"sessionId": sid}, &raw))
	require.NotContains(t, string(raw), "dataUrl", "history carries refs, never inline attachments")
	var got protocol.SessionGetResult
	require.NoError(t, json.Unmarshal(raw, &got))
	var ref string
	for _, m := range got.Messages {
		if len(m.AttachmentRefs) > 0 {
			ref = m.AttachmentRefs[0].Path
		}
	}
	require.True(t, strings.HasPrefix(ref, "attachments/"), ref)
	require.NotContains(t, ref, "..")
	b, err := os.ReadFile(filepath.Join(ts.st.SessionDir(sid), filepath.FromSlash(ref)))
	require.NoError(t, err)
	require.Equal(t, payload, b)

	png := "data:image/png;base64," + base64.StdEncoding.EncodeToString(payload)
	ok := map[string]string{"name": "ok.png", "mimeType": "image/png", "dataUrl": png}
	cases := []struct {
		atts any
		msg  string
	}{
		{[]map[string]string{{"name": "a", "dataUrl": "not a data url"}}, `attachments[0] ("a"): invalid attachment: not a data URL`},
		{[]map[string]string{{"name": "a", "dataUrl": "data:image/png;base64,!!!"}}, `attachments[0] ("a"): invalid attachment: bad base64`},
		{[]map[string]string{{}, {}, {}, {}, {}}, "at most 4"},
		// The manual's rules (seed §13), as the library normalizes:
		{[]map[string]string{ok, {"name": "run.sh", "mimeType": "application/x-sh", "dataUrl": "data:application/x-sh;base64," + base64.StdEncoding.EncodeToString([]byte("rm -rf ~"))}}, `attachments[1] ("run.sh"): invalid attachment: type "application/x-sh" is not an image, audio or video type`},
		{[]map[string]string{{"name": "empty.png", "mimeType": "image/png", "dataUrl": "data:image/png;base64,"}}, `attachments[0] ("empty.png"): invalid attachment: empty`},
		{[]map[string]string{{"name": "x.png", "mimeType": "image/png", "dataUrl": "data:video/mp4;base64," + base64.StdEncoding.EncodeToString(payload)}}, `attachments[0] ("x.png"): invalid attachment: mimeType "image/png" does not match the data URL's type "video/mp4"`},
		{[]map[string]string{{"mimeType": "text/html", "dataUrl": "data:text/html;base64," + base64.StdEncoding.EncodeToString([]byte("<script>"))}}, `attachments[0]: invalid attachment: type "text/html"`},
	}
	for _, tc := range cases {
		ce := callErr(t, c, "turn.start", map[string]any{"sessionId": sid, "text": "x", "attachments": tc.atts})
		require.Equal(t, wsrpc.CodeInvalidParams, ce.Code)
		require.Contains(t, ce.Message, tc.msg)
	}
	// Nothing refused reached the model or the session folder.
	require.Len(t, prov.Requests(), 1)
	files, err := os.ReadDir(filepath.Join(ts.st.SessionDir(sid), "attachments"))
	require.NoError(t, err)
	require.Len(t, files, 1)
}
