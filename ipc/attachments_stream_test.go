package ipc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/backend"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools/media"
)

// TestTurnAttachmentsReachTheModelFromTheirFiles: attachments are decoded
// to their files, also when their JSON strings have escapes (a "\/" of an
// encoder that escapes slashes, a payload wrapped with "\r\n"); the engine's
// history names the files instead of holding the base64, and the model
// gets the same data URL from them.
func TestTurnAttachmentsReachTheModelFromTheirFiles(t *testing.T) {
	prov := scripted.New(scripted.Response{Text: "nice pictures"})
	ts := startServer(t, withProvider(prov))
	c := ts.dial(t)
	sid := ts.session(t, c, nil)
	_, err := c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)

	payloads := [][]byte{
		append([]byte("\x89PNG\r\n\x1a\n"), []byte(strings.Repeat("\xff\xfe?>", 40000))...), // base64 with '/' and '+'
		append([]byte("\x89PNG\r\n\x1a\n"), []byte(strings.Repeat("wrapped", 3000))...),
		[]byte("\x89PNG\r\n\x1a\nplain"),
	}
	b64 := make([]string, len(payloads))
	for i, p := range payloads {
		b64[i] = base64.StdEncoding.EncodeToString(p)
	}
	require.Contains(t, b64[0], "/")
	var wrapped strings.Builder
	for i := 0; i < len(b64[1]); i += 76 {
		wrapped.WriteString(b64[1][i:min(i+76, len(b64[1]))] + `\r\n`)
	}
	params := `{"sessionId":"` + sid + `","text":"look","attachments":[` +
		`{"name":"slashes.png","mimeType":"image/png","dataUrl":"data:image\/png;base64,` + strings.ReplaceAll(b64[0], "/", `\/`) + `"},` +
		`{"name":"wrapped.png","dataUrl":"data:image/png;base64,` + wrapped.String() + `"},` +
		`{"name":"plain.png","mimeType":"image/png","dataUrl":"data:image/png;base64,` + b64[2] + `"}]}`
	require.NoError(t, c.Call(tctx(t), "turn.start", json.RawMessage(params), nil))
	collectTurn(t, c, sid)

	reqs := prov.Requests()
	require.Len(t, reqs, 1)
	var user *llm.Message
	for i := range reqs[0].Messages {
		if m := &reqs[0].Messages[i]; m.Role == llm.RoleUser && len(m.Attachments) > 0 {
			user = m
		}
	}
	require.NotNil(t, user)
	require.Len(t, user.Attachments, 3)
	require.Len(t, user.AttachmentRefs, 3)
	for i, a := range user.Attachments {
		require.Empty(t, a.DataURL, "the history holds no base64")
		require.Equal(t, filepath.Join(ts.st.SessionDir(sid), filepath.FromSlash(user.AttachmentRefs[i].Path)), a.Path)
		stored, err := os.ReadFile(a.Path)
		require.NoError(t, err)
		require.Equal(t, payloads[i], stored, "attachment %d is stored as sent", i)
		url, err := a.URL()
		require.NoError(t, err)
		require.Equal(t, "data:image/png;base64,"+b64[i], url, "the model gets attachment %d's data URL", i)
	}
}

// TestDecodeTurnStartAsDecodeParams: turn.start's in-place decoding gives
// the values and the errors decodeParams gives (and then turnStart's own
// checks of the text).
func TestDecodeTurnStartAsDecodeParams(t *testing.T) {
	big := strings.Repeat("é", backend.MaxTurnText/2) + "x"
	cases := []string{
		``, `null`, `[]`, `"x"`, `{}`,
		`{"sessionId":"s1","text":"hi"}`,
		`{"SESSIONID":"s1","Text":"hi","unknown":{"a":[1,2]}}`,
		`{"sessionId":"a","sessionId":"s2","text":"last wins"}`,
		`{"sessionId":1}`, `{"sessionId":"s","text":true}`, `{"sessionId":"s","text":null}`,
		`{"sessionId":"s","text":"esc \" \\ \/ \n \u00e9 \ud83d\ude00 \ud800 end"}`,
		`{"sessionId":"s","text":"` + big + `"}`,
		`{"sessionId":"s","text":"` + strings.Repeat(`\n`, backend.MaxTurnText) + `"}`,
		`{"sessionId":"s","text":"` + strings.Repeat(`\n`, backend.MaxTurnText+1) + `"}`,
		`{"sessionId":"s","text":"` + strings.Repeat(`\ud83d\ude00`, backend.MaxTurnText/4) + `"}`,
		`{"sessionId":"s","text":"` + strings.Repeat(`\ud83d\ude00`, backend.MaxTurnText/4) + `x"}`,
		`{"sessionId":"s","attachments":{}}`, `{"sessionId":"s","attachments":[1]}`,
		`{"sessionId":"s","attachments":[{"dataUrl":1}]}`, `{"sessionId":"s","attachments":[{"name":[]}]}`,
		`{"sessionId":"s","attachments":[{"mimeType":false}]}`,
		`{"sessionId":"s","attachments":null}`, `{"sessionId":"s","attachments":[]}`,
		`{"sessionId":"s","attachments":[null,{"name":"a.png","mimeType":"image/png","dataUrl":"data:,x"}]}`,
		`{"sessionId":"s","attachments":[{"Name":"a","DATAURL":"data:image/png;base64,QQ=="}],"text":"t"}`,
		`{"sessionId":"s","attachments":[{"dataUrl":"data:image/png;base64,QQ\u003d\u003d"}]}`,
		"{\"sessionId\":\"s\",\"text\":\"bad \xff utf8\",\"attachments\":[{\"name\":\"\xfe.png\"}]}",
		`{"text":"no session"}`, `{"sessionId":"s"}`, `{"sessionId":"","text":"x"}`,
	}
	for _, raw := range cases {
		var want protocol.TurnStartParams
		wantErr := protocol.DecodeParams(json.RawMessage(raw), &want)
		if wantErr == nil && want.Text == "" && len(want.Attachments) == 0 {
			wantErr = protocol.InvalidField("text", "required (or attachments)")
		}
		if wantErr == nil && len(want.Text) > backend.MaxTurnText {
			wantErr = protocol.InvalidField("text", fmt.Sprintf("%d bytes; at most %d (attach large content as a file in the project instead)", len(want.Text), backend.MaxTurnText))
		}
		got, err := decodeTurnStart(json.RawMessage(raw))
		name := raw[:min(len(raw), 80)]
		if wantErr != nil {
			require.Error(t, err, name)
			require.Equal(t, wantErr.Error(), err.Error(), name)
			var wpe, gpe *protocol.ParamError
			if errors.As(wantErr, &wpe) {
				require.True(t, errors.As(err, &gpe), name)
				require.Equal(t, *wpe, *gpe, name)
			}
			continue
		}
		require.NoError(t, err, name)
		require.Equal(t, want.SessionID, got.SessionID, name)
		require.Equal(t, want.Text, got.Text, name)
		require.Len(t, got.Attachments, len(want.Attachments), name)
		for i, a := range want.Attachments {
			require.Equal(t, media.Upload{Name: a.Name, MimeType: a.MimeType, DataURL: []byte(a.DataURL)}, normUpload(got.Attachments[i]), name)
		}
	}
}

// normUpload makes an empty data URL nil, as []byte("") compares.
func normUpload(u media.Upload) media.Upload {
	if u.DataURL == nil {
		u.DataURL = []byte{}
	}
	return u
}
