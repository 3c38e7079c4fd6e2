package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/zqagent/sidecar/llm"
)

// The session list benchmarks' fixture: 1,000 sessions of one project with
// 100 messages each (user and assistant, 10 turns of 10 checkpointed
// messages, ~30 words a message from a 5,000-word vocabulary with a Zipf
// spread), written through the store's real writes (CreateSession, Append
// with History: the triggers fill the full-text index as they would in
// use). "quasar" is in one message of every 100th session; "alpha", the
// vocabulary's first word, is in nearly every session.
const (
	benchSessions = 1000
	benchMessages = 100
)

func buildListFixture(b *testing.B) (*Store, string) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	s, err := Open(ctx, b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	p, err := s.UpsertProject(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "pe", "da", "gu", "zo"}
	vocab := []string{"alpha"}
	for len(vocab) < 5000 {
		w := ""
		for range 2 + r.IntN(3) {
			w += syl[r.IntN(len(syl))]
		}
		vocab = append(vocab, w)
	}
	zipf := rand.NewZipf(r, 1.1, 1, uint64(len(vocab)-1))
	text := func() string {
		ws := make([]string, 20+r.IntN(20))
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
	for i := range benchSessions {
		ss, err := s.CreateSession(ctx, Session{ProjectID: p.ID, Title: text()[:30]})
		if err != nil {
			b.Fatal(err)
		}
		h := make([]llm.Message, 0, benchMessages)
		for len(h) < benchMessages {
			for range 5 {
				h = append(h, llm.Message{Role: llm.RoleUser, Content: text()}, llm.Message{Role: llm.RoleAssistant, Content: text()})
			}
			if i%100 == 0 && len(h) == 50 {
				h[49].Content += " quasar"
			}
			if _, err := s.Append(ctx, ss.ID, EventInput{Type: "turn_end", History: h}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("fixture: %d sessions × %d messages in %v", benchSessions, benchMessages, time.Since(start).Round(time.Millisecond))
	return s, p.ID
}

// BenchmarkSessionList: the first page (50) of 1,000 sessions, and a page
// deep into the list through a cursor.
func BenchmarkSessionList(b *testing.B) {
	s, pid := buildListFixture(b)
	ctx := context.Background()
	b.Run("first_page", func(b *testing.B) {
		for b.Loop() {
			p, err := s.SessionPage(ctx, SessionQuery{ProjectID: pid, Limit: 50})
			if err != nil || len(p.Sessions) != 50 || p.NextCursor == "" {
				b.Fatal(err, len(p.Sessions))
			}
		}
	})
	b.Run("page_after_900", func(b *testing.B) {
		var p SessionPage
		for _, limit := range []int{200, 200, 200, 200, 100} { // to the 900th
			var err error
			if p, err = s.SessionPage(ctx, SessionQuery{ProjectID: pid, Limit: limit, Cursor: p.NextCursor}); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			p, err := s.SessionPage(ctx, SessionQuery{ProjectID: pid, Limit: 50, Cursor: p.NextCursor})
			if err != nil || len(p.Sessions) != 50 {
				b.Fatal(err, len(p.Sessions))
			}
		}
	})
}

// BenchmarkSessionSearch: a search's first page (50, with snippets) over
// 1,000 sessions × 100 messages, for a rare word (10 sessions), a common
// one (nearly every session) and a prefix of two words.
func BenchmarkSessionSearch(b *testing.B) {
	s, pid := buildListFixture(b)
	ctx := context.Background()
	for _, c := range []struct {
		name, query string
		min         int
	}{
		{"rare", "quasar", 10},
		{"common", "alpha", 50},
		{"two_prefixes", "alp ka", 50},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				p, err := s.SessionPage(ctx, SessionQuery{ProjectID: pid, Limit: 50, Search: c.query})
				if err != nil || len(p.Sessions) < c.min || p.Sessions[0].Snippet == nil {
					b.Fatal(err, len(p.Sessions), fmt.Sprint(c))
				}
			}
		})
	}
}
