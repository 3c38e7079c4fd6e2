package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/zqagent/sidecar/ipc/client"
)

// newProject makes a small git repository to open as the project.
func newProject(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string]string{
		"notes.txt": strings.Repeat("a line of notes for the read_file rounds\n", 40),
		"main.go":   "package main\n\nfunc main() {}\n",
		"README.md": "# bench project\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@example.com",
			"GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %w: %s", args, err, out)
		}
	}
	return nil
}

// session is one subscribed session of a sidecar.
type session struct {
	p   *sidecar
	m   *fakeModel
	id  string
	seq int64 // last seq seen
}

func openSession(ctx context.Context, p *sidecar, m *fakeModel, projDir string) (*session, error) {
	pid, err := p.c.OpenProject(ctx, projDir)
	if err != nil {
		return nil, fmt.Errorf("project.open: %w", err)
	}
	// A title given up front: no naming call after the first turn.
	sid, err := p.c.CreateSession(ctx, pid, map[string]any{"title": "bench"})
	if err != nil {
		return nil, fmt.Errorf("session.create: %w", err)
	}
	res, err := p.c.Subscribe(ctx, sid, 0)
	if err != nil {
		return nil, fmt.Errorf("session.subscribe: %w", err)
	}
	return &session{p: p, m: m, id: sid, seq: res.LastSeq}, nil
}

// turnStats is what one turn looked like from the client.
type turnStats struct {
	wall       time.Duration // turn.start sent → turn_end received
	toRequest  time.Duration // turn.start sent → the model's first request arrived
	streaming  time.Duration // first assistant_delta → last assistant_delta received
	cpu        time.Duration // server CPU over the turn
	deltas     int           // assistant_delta events received
	text       string        // their text, concatenated
	status     string        // turn_end's status
	iterations int           // iteration_end events
}

type wireEvent struct {
	SessionID string `json:"sessionId"`
	Seq       int64  `json:"seq"`
	Type      string `json:"type"`
	Data      struct {
		Text   string `json:"text"`
		Status string `json:"status"`
	} `json:"data"`
}

// turn runs one turn and reads its events to turn_end.
func (s *session) turn(ctx context.Context, text string, keepText bool) (turnStats, error) {
	var st turnStats
	c := s.p.c
	cpu0 := s.p.cpu()
	start := time.Now()
	turnID, err := c.StartTurn(ctx, s.id, text)
	if err != nil {
		return st, fmt.Errorf("turn.start: %w", err)
	}
	var sb strings.Builder
	var firstDelta, lastDelta time.Time
	for {
		var n client.Notification
		select {
		case n = <-c.Notifications():
		case <-c.Done():
			return st, fmt.Errorf("connection closed: %w", c.Err())
		case <-ctx.Done():
			return st, fmt.Errorf("turn %s: %w", turnID, ctx.Err())
		}
		now := time.Now()
		switch n.Method {
		case "session.dropped":
			var d client.Dropped
			if err := json.Unmarshal(n.Params, &d); err != nil {
				return st, err
			}
			// Fell behind: continue from the last seq, as a shell would.
			go func() { _, _ = c.Subscribe(ctx, s.id, d.LastSeq) }()
			continue
		case "session.event":
		default:
			continue
		}
		var ev wireEvent
		if err := json.Unmarshal(n.Params, &ev); err != nil {
			return st, err
		}
		if ev.SessionID != s.id || ev.Seq <= s.seq {
			continue
		}
		if ev.Seq != s.seq+1 {
			return st, fmt.Errorf("gap: seq %d after %d", ev.Seq, s.seq)
		}
		s.seq = ev.Seq
		switch ev.Type {
		case "assistant_delta":
			if firstDelta.IsZero() {
				firstDelta = now
			}
			lastDelta = now
			st.deltas++
			if keepText {
				sb.WriteString(ev.Data.Text)
			}
		case "iteration_end":
			st.iterations++
		case "turn_end":
			st.wall = now.Sub(start)
			if r := s.m.requestAfter(start); !r.IsZero() {
				st.toRequest = r.Sub(start)
			}
			st.cpu = s.p.cpu() - cpu0
			st.status = ev.Data.Status
			st.streaming = lastDelta.Sub(firstDelta)
			st.text = sb.String()
			if st.status != "completed" {
				return st, fmt.Errorf("turn ended %q", st.status)
			}
			return st, nil
		}
	}
}
