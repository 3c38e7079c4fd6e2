package store

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A sealed event is made when the writer reaches it, keeps its place in the
// queue, and its done gets the stored event; one refused by seal fails
// only itself.
func TestEnqueueSealedSealsLateInOrder(t *testing.T) {
	s := openTest(t)
	sid := newSession(t, s).ID

	// Hold the writer inside a transaction while the events are queued.
	hold, held := make(chan struct{}), make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		wrote <- s.write(ctxT(t), func(*wtx) error {
			close(held)
			<-hold
			return nil
		})
	}()
	<-held

	var mu sync.Mutex
	text := "a"
	type result struct {
		ev  Event
		err error
	}
	results := make(chan result, 3)
	done := func(ev Event, err error) { results <- result{ev, err} }
	s.EnqueueSealed(sid, func() EventInput {
		mu.Lock()
		defer mu.Unlock()
		return EventInput{Type: "assistant_delta", Data: rawJSON(map[string]string{"text": text})}
	}, done)
	s.EnqueueSealed(sid, func() EventInput { return EventInput{} }, done) // no type: refused
	s.Enqueue(sid, EventInput{Type: "iteration_end"}, done)
	mu.Lock()
	text = "abc" // arrives while the event waits: it is in the event
	mu.Unlock()
	close(hold)
	require.NoError(t, <-wrote)

	first, refused, last := <-results, <-results, <-results
	require.NoError(t, first.err)
	require.ErrorIs(t, refused.err, ErrInvalid)
	require.NoError(t, last.err)
	require.Equal(t, int64(1), first.ev.Seq)
	require.JSONEq(t, `{"text":"abc"}`, string(first.ev.Data))
	require.Equal(t, int64(2), last.ev.Seq)

	evs := allEvents(t, s, sid)
	requireGapFree(t, evs)
	require.Len(t, evs, 2)
	require.JSONEq(t, `{"text":"abc"}`, string(evs[0].Data))
	require.Equal(t, "iteration_end", evs[1].Type)
}
