package backend

import (
	"context"
	"log/slog"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/store"
)

// newTestBackend is a backend over a real store in a temp dir, answered by
// p; it is closed when the test ends.
func newTestBackend(t *testing.T, p llm.Provider) *Backend {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(t.Context(), filepath.Join(dir, "data"), store.Options{})
	require.NoError(t, err)
	b, err := New(Options{Store: st, DataDir: filepath.Join(dir, "data"), Provider: p, Logger: slog.New(slog.DiscardHandler), Envelope: wsrpc.NotificationEnvelope})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, b.Close(ctx))
		require.NoError(t, st.Close())
	})
	return b
}

// FuzzProfileURLs: the base URL and proxy checks never panic, and what they
// accept is an http(s) (socks5) URL with a host and no credentials.
func FuzzProfileURLs(f *testing.F) {
	for _, s := range []string{"https://api.deepseek.com/v1", "http://127.0.0.1:11434/v1", "socks5://127.0.0.1:1080", "socks5h://u@h:1", "http://u:p@h", "ftp://x", "", "::", "http://", "socks5://u:p@h:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if checkBaseURL(raw) == nil {
			u, err := url.Parse(raw)
			require.NoError(t, err)
			require.Contains(t, []string{"http", "https"}, u.Scheme)
			require.NotEmpty(t, u.Host)
			require.Nil(t, u.User)
		}
		if raw != "" && checkProxy(raw) == nil {
			u, err := url.Parse(raw)
			require.NoError(t, err)
			require.Contains(t, []string{"socks5", "socks5h"}, u.Scheme)
			_, hasPass := u.User.Password()
			require.False(t, hasPass)
		}
	})
}

// The OCR preset's model fallback asks the default profile's model, with the
// image attached.
func TestOCRVisionFallbackUsesTheDefaultModel(t *testing.T) {
	p := scripted.New()
	p.AppendChat("HELLO FROM THE IMAGE")
	b := newTestBackend(t, p)
	text, err := b.ocrVision(t.Context(), "data:image/png;base64,iVBORw0KGgo=")
	require.NoError(t, err)
	require.Equal(t, "HELLO FROM THE IMAGE", text)
	reqs := p.ChatRequests()
	require.Len(t, reqs, 1)
	atts := reqs[0].Messages[0].Attachments
	require.Len(t, atts, 1)
	require.Equal(t, "image/png", atts[0].MimeType)
}
