package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

// A checkpoint hashes only what the session's last committed one did not
// hold, and what it stores is always the history it was given: after
// growing, rewritten, failed and out-of-order checkpoints, and a restart,
// the stored messages are the last history appended.
func TestCheckpointsStoreTheLastHistory(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{})
	require.NoError(t, err)
	sid := newSession(t, s).ID
	msg := func(i int, tag string) llm.Message {
		return llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("m%d %s", i, tag)}
	}
	var hist []llm.Message
	checkpoint := func(h []llm.Message) {
		t.Helper()
		_, err := s.Append(ctx, sid, EventInput{Type: "iteration_end", History: h})
		require.NoError(t, err)
	}
	stored := func(s *Store) []llm.Message {
		t.Helper()
		got, err := s.Messages(ctx, sid)
		require.NoError(t, err)
		return got
	}
	for i := range 30 { // growing, as a session does
		hist = append(hist, msg(i, "v1"))
		checkpoint(hist)
	}
	require.Equal(t, hist, stored(s))

	// A rewrite in the middle and at the start (compaction, an edited
	// system prompt), then growth again.
	hist = append([]llm.Message{msg(0, "v2")}, hist[1:]...)
	hist[10] = msg(10, "v2")
	checkpoint(hist)
	require.Equal(t, hist, stored(s))
	hist = append(hist[:12:12], msg(12, "v3"))
	checkpoint(hist)
	require.Equal(t, hist, stored(s))

	// A checkpoint whose transaction fails after it was applied (its
	// encoding is the cache's now, not the store's): the next one is still
	// exact.
	failed := slices.Clone(hist)
	failed[5] = msg(5, "rolled back")
	pFailed, err := prepareEventWith(EventInput{Type: "iteration_end", History: failed}, &s.hist, sid)
	require.NoError(t, err)
	boom := errors.New("boom")
	require.ErrorIs(t, s.write(ctx, func(t *wtx) error {
		if _, err := t.appendEvents(sid, []preparedEvent{pFailed}); err != nil {
			return err
		}
		return boom
	}), boom)
	require.Equal(t, hist, stored(s))
	hist = append(failed, msg(13, "v4")) // the rolled-back change, now committed
	checkpoint(hist)
	require.Equal(t, hist, stored(s))

	// Two histories encoded before either is committed, committed in the
	// other order: the store ends with the one appended last.
	older := append(hist[:len(hist):len(hist)], msg(14, "older"))
	newer := append(slices.Clone(hist), msg(14, "newer"), msg(15, "newer"))
	newer[4] = msg(4, "newer")
	pOlder, err := prepareEventWith(EventInput{Type: "iteration_end", History: older}, &s.hist, sid)
	require.NoError(t, err)
	pNewer, err := prepareEventWith(EventInput{Type: "iteration_end", History: newer}, &s.hist, sid)
	require.NoError(t, err)
	commit := func(pe preparedEvent) {
		require.NoError(t, s.write(ctx, func(t *wtx) error {
			_, err := t.appendEvents(sid, []preparedEvent{pe})
			return err
		}))
	}
	commit(pNewer)
	commit(pOlder)
	require.Equal(t, older, stored(s))
	hist = append(older, msg(15, "after"))
	checkpoint(hist)
	require.Equal(t, hist, stored(s))

	// After a restart the writer knows no encoding: the first checkpoint
	// hashes everything, and is exact.
	require.NoError(t, s.Close())
	s, err = Open(ctx, dir, Options{})
	require.NoError(t, err)
	defer s.Close()
	hist[3] = msg(3, "after restart")
	checkpoint(hist)
	require.Equal(t, hist, stored(s))
}
