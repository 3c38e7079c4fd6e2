package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/zqagent/sidecar/llm"

	"github.com/stretchr/testify/require"
)

// TestFiftySessionsAtOnce: 50 sessions append events (group commit and
// synchronous appends), checkpoint history and read their logs at the same
// time. No call may fail (no SQLITE_BUSY), and every session's log must be
// gap-free with every seq handed out exactly once.
func TestFiftySessionsAtOnce(t *testing.T) {
	s := openTest(t)
	ctx := ctxT(t)
	const sessions, perSession = 50, 120
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = newSession(t, s).ID
	}

	var mu sync.Mutex
	seen := map[string]map[int64]bool{} // guarded by mu
	var errs []error                    // guarded by mu
	note := func(sid string, seq int64, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sid, err))
			return
		}
		if seen[sid] == nil {
			seen[sid] = map[int64]bool{}
		}
		if seen[sid][seq] {
			errs = append(errs, fmt.Errorf("%s: seq %d handed out twice", sid, seq))
		}
		seen[sid][seq] = true
	}

	var wg sync.WaitGroup
	for _, sid := range ids {
		wg.Go(func() { // writer of this session
			var history []llm.Message
			for i := range perSession {
				switch {
				case i%10 == 9: // a checkpoint, synchronous
					history = append(history, llm.Message{Role: llm.RoleAssistant, Content: fmt.Sprint(i)})
					evs, err := s.Append(ctx, sid, EventInput{TurnID: "t", Type: "iteration_end", History: history})
					if err == nil {
						note(sid, evs[0].Seq, nil)
					} else {
						note(sid, 0, err)
					}
				default:
					s.Enqueue(sid, EventInput{TurnID: "t", Type: "assistant_delta", Data: rawJSON(map[string]int{"i": i})},
						func(e Event, err error) { note(sid, e.Seq, err) })
				}
			}
		})
		wg.Go(func() { // a reader of the same session
			var after int64
			for range 20 {
				page, err := s.EventsAfter(ctx, sid, after, 50)
				if err != nil {
					note(sid, 0, err)
					return
				}
				for i, e := range page {
					if e.Seq != after+int64(i)+1 {
						note(sid, 0, fmt.Errorf("reader saw seq %d after %d", e.Seq, after+int64(i)))
						return
					}
				}
				if len(page) > 0 {
					after = page[len(page)-1].Seq
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Flush(ctx))

	mu.Lock()
	defer mu.Unlock()
	for _, err := range errs {
		if strings.Contains(err.Error(), "BUSY") || strings.Contains(err.Error(), "locked") {
			t.Errorf("busy: %v", err)
		} else {
			t.Error(err)
		}
	}
	for _, sid := range ids {
		require.Len(t, seen[sid], perSession, "seqs handed out for %s", sid)
		evs := allEvents(t, s, sid)
		require.Len(t, evs, perSession)
		requireGapFree(t, evs)
		msgs, err := s.Messages(context.Background(), sid)
		require.NoError(t, err)
		require.Len(t, msgs, perSession/10)
		require.Equal(t, fmt.Sprint(perSession-1), msgs[len(msgs)-1].Content)
	}
}
