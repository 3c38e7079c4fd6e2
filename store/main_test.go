package store

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		runCrashChild() // never returns: the parent kills it
		os.Exit(2)
	}
	goleak.VerifyTestMain(m)
}

// openTest opens a store in a fresh temp dir, closed at the end of the test.
func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), t.TempDir(), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// newSession creates a project and a session in s.
func newSession(t testing.TB, s *Store) Session {
	t.Helper()
	ctx := context.Background()
	p, err := s.UpsertProject(ctx, t.TempDir())
	require.NoError(t, err)
	ss, err := s.CreateSession(ctx, Session{ProjectID: p.ID, Model: "m"})
	require.NoError(t, err)
	return ss
}

// allEvents pages through a session's whole log.
func allEvents(t testing.TB, s *Store, sid string) []Event {
	t.Helper()
	var out []Event
	var after int64
	for {
		page, err := s.EventsAfter(context.Background(), sid, after, 500)
		require.NoError(t, err)
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].Seq
	}
}

// requireGapFree checks that evs have seqs 1..n in order.
func requireGapFree(t testing.TB, evs []Event) {
	t.Helper()
	for i, e := range evs {
		require.Equal(t, int64(i+1), e.Seq, "seq at index %d", i)
	}
}

func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
