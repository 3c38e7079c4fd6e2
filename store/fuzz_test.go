package store

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzAppendData: whatever bytes a client sends as event data are either
// refused as ErrInvalid or stored and replayed byte for byte.
func FuzzAppendData(f *testing.F) {
	for _, seed := range []string{`{}`, `{"text":"hé\u0000"}`, `[1,2]`, `"s"`, `{bad`, ``, `null`, "\xff\xfe", `{"a":1}{"b":2}`} {
		f.Add([]byte(seed))
	}
	s, err := Open(context.Background(), f.TempDir(), Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	sid := newSession(f, s).ID
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := s.Append(context.Background(), sid, EventInput{Type: "x", Data: data})
		if len(data) > 0 && !json.Valid(data) {
			require.ErrorIs(t, err, ErrInvalid)
			return
		}
		require.NoError(t, err)
		got, err := s.EventsAfter(context.Background(), sid, evs[0].Seq-1, 1)
		require.NoError(t, err)
		require.Len(t, got, 1)
		want := data
		if len(data) == 0 {
			want = []byte(`{}`)
		}
		require.True(t, bytes.Equal(want, got[0].Data), "replayed %q, stored %q", got[0].Data, want)
	})
}

// FuzzSessionDir: an id accepted for a session always names a folder
// directly under <dir>/sessions.
func FuzzSessionDir(f *testing.F) {
	for _, seed := range []string{"abc", "..", "../x", "a/b", `a\b`, ".hidden", "ok-1_2.3", ""} {
		f.Add(seed)
	}
	s := &Store{dir: filepath.FromSlash("/data")}
	f.Fuzz(func(t *testing.T, id string) {
		if !validID(id) {
			return
		}
		got := s.SessionDir(id)
		require.Equal(t, filepath.Join(s.dir, sessionsDir), filepath.Dir(got))
		require.Equal(t, id, filepath.Base(got))
	})
}
