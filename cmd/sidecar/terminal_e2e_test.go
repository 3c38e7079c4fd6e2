//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// termInfo is the part of a terminal.create answer the tests use.
type termInfo struct {
	ID  string `json:"id"`
	Pid int    `json:"pid"`
}

// termStream reads one connection's terminal notifications: it checks that
// each terminal's stream is gapless, re-subscribes after a terminal.dropped
// (from the first missed seq, as a UI does) and keeps the tail of each
// output.
type termStream struct {
	c      *client.Client
	pid    string
	next   map[string]int64 // the seq the next output must have
	gapOK  map[string]bool  // the next output may start past next
	bytes  map[string]int64 // bytes received
	tail   map[string][]byte
	exit   map[string]int
	frames int
	drops  int
}

func newTermStream(c *client.Client, projectID string) *termStream {
	return &termStream{c: c, pid: projectID, next: map[string]int64{}, gapOK: map[string]bool{},
		bytes: map[string]int64{}, tail: map[string][]byte{}, exit: map[string]int{}}
}

func (s *termStream) subscribe(ctx context.Context, id string, afterSeq int64) error {
	s.next[id] = afterSeq
	s.gapOK[id] = afterSeq > 0
	return s.c.Call(ctx, "terminal.subscribe", map[string]any{"projectId": s.pid, "terminalId": id, "afterSeq": afterSeq}, nil)
}

func (s *termStream) write(ctx context.Context, id, data string) error {
	return s.c.Call(ctx, "terminal.write", map[string]any{"projectId": s.pid, "terminalId": id, "data": data}, nil)
}

// step handles one notification.
func (s *termStream) step(ctx context.Context) error {
	var n client.Notification
	select {
	case got, ok := <-s.c.Notifications():
		if !ok {
			return fmt.Errorf("connection closed: %v", s.c.Err())
		}
		n = got
	case <-ctx.Done():
		return ctx.Err()
	}
	switch n.Method {
	case "terminal.output":
		var o struct {
			TerminalID string `json:"terminalId"`
			Seq        int64  `json:"seq"`
			Data       string `json:"data"`
		}
		if err := json.Unmarshal(n.Params, &o); err != nil {
			return err
		}
		data, err := base64.StdEncoding.DecodeString(o.Data)
		if err != nil {
			return err
		}
		if want := s.next[o.TerminalID]; o.Seq != want && !(s.gapOK[o.TerminalID] && o.Seq > want) {
			return fmt.Errorf("terminal %s: output at seq %d, want %d", o.TerminalID, o.Seq, want)
		}
		s.gapOK[o.TerminalID] = false
		s.next[o.TerminalID] = o.Seq + int64(len(data))
		s.bytes[o.TerminalID] += int64(len(data))
		t := append(s.tail[o.TerminalID], data...)
		if len(t) > 4096 {
			t = append([]byte(nil), t[len(t)-4096:]...)
		}
		s.tail[o.TerminalID] = t
		s.frames++
	case "terminal.exit":
		var e struct {
			TerminalID string `json:"terminalId"`
			ExitCode   int    `json:"exitCode"`
		}
		if err := json.Unmarshal(n.Params, &e); err != nil {
			return err
		}
		s.exit[e.TerminalID] = e.ExitCode
	case "terminal.dropped":
		var d struct {
			TerminalID string `json:"terminalId"`
			Seq        int64  `json:"seq"`
		}
		if err := json.Unmarshal(n.Params, &d); err != nil {
			return err
		}
		if d.Seq < s.next[d.TerminalID] {
			return fmt.Errorf("dropped at %d, but %d was delivered", d.Seq, s.next[d.TerminalID])
		}
		s.drops++
		return s.subscribe(ctx, d.TerminalID, d.Seq)
	}
	return nil
}

// vmRSS reads a process's resident set in bytes.
func vmRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// TestE2ETerminalFloodBoundedRSSWhileAnotherEchoes: the real binary streams
// 50 MB of `yes` (which runs until killed) to a WebSocket client while another terminal of the same
// connection answers an echo; the sidecar's resident memory stays bounded.
func TestE2ETerminalFloodBoundedRSSWhileAnotherEchoes(t *testing.T) {
	const flood = 50_000_000
	dataDir := filepath.Join(t.TempDir(), "data")
	proj := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	p := spawn(t, dataDir)
	c := p.connect(t)
	// A bound for the whole flood, not a timing assertion: on a loaded
	// 2-core machine under -race 50 MB can take over a minute.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pid, err := c.OpenProject(ctx, proj)
	require.NoError(t, err)
	sidecar := p.cmd.Process.Pid
	before, err := vmRSS(sidecar)
	require.NoError(t, err)

	var echo, yes termInfo
	require.NoError(t, c.Call(ctx, "terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24, "shell": "/bin/sh"}, &echo))
	// The flood waits for a line, so that nothing is produced before the
	// subscription.
	require.NoError(t, c.Call(ctx, "terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24,
		"command": []string{"sh", "-c", "read go; exec yes"}}, &yes))
	s := newTermStream(c, pid)
	require.NoError(t, s.subscribe(ctx, echo.ID, 0))
	require.NoError(t, s.subscribe(ctx, yes.ID, 0))
	require.NoError(t, s.write(ctx, yes.ID, "go\n"))

	var peak int64
	echoed := false
	asked := false
	// yes never ends: whatever the order, the echo comes while it floods.
	for !echoed || s.bytes[yes.ID] < flood {
		require.NoError(t, s.step(ctx))
		if s.frames%32 == 0 {
			rss, err := vmRSS(sidecar)
			require.NoError(t, err)
			peak = max(peak, rss)
		}
		if !asked && s.bytes[yes.ID] > 10<<20 {
			// Mid-flood: the other terminal still answers.
			require.NoError(t, s.write(ctx, echo.ID, "echo other-$((40+2))\n"))
			asked = true
		}
		if asked && !echoed && bytes.Contains(s.tail[echo.ID], []byte("other-42")) {
			echoed = true
		}
	}
	t.Logf("flood: %d MB received in %d frames, %d drops; sidecar RSS %d MB before, peak %d MB",
		s.bytes[yes.ID]>>20, s.frames, s.drops, before>>20, peak>>20)
	require.Less(t, peak, int64(150<<20), "sidecar RSS during the flood")

	require.NoError(t, c.Call(ctx, "terminal.kill", map[string]any{"projectId": pid, "terminalId": yes.ID}, nil))
	for _, ok := s.exit[yes.ID]; !ok; _, ok = s.exit[yes.ID] {
		if err := s.step(ctx); err != nil {
			// A drop notification queued before the kill makes step
			// re-subscribe to the killed, forgotten terminal: that ends
			// the stream too.
			require.Equal(t, -32002, client.Code(err), "%v", err)
			break
		}
	}
}

// TestE2ETerminalsDieWithTheirProjectAndTheSidecar: project.close kills the
// project's terminals (and their background children); the sidecar's
// shutdown (stdin closed) kills the others.
func TestE2ETerminalsDieWithTheirProjectAndTheSidecar(t *testing.T) {
	proj := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	other := filepath.Join(t.TempDir(), "other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	p := spawn(t, filepath.Join(t.TempDir(), "data"))
	c := p.connect(t)
	ctx := tctx(t)
	pid, err := c.OpenProject(ctx, proj)
	require.NoError(t, err)
	otherID, err := c.OpenProject(ctx, other)
	require.NoError(t, err)

	var closing termInfo
	require.NoError(t, c.Call(ctx, "terminal.create", map[string]any{"projectId": otherID, "cols": 80, "rows": 24,
		"command": []string{"sh", "-c", "sleep 525252 & wait"}}, &closing))
	s := newTermStream(c, otherID)
	require.NoError(t, s.subscribe(ctx, closing.ID, 0))
	require.NoError(t, c.Call(ctx, "project.close", map[string]any{"projectId": otherID}, nil))
	for _, ok := s.exit[closing.ID]; !ok; _, ok = s.exit[closing.ID] {
		require.NoError(t, s.step(ctx))
	}
	for deadline := time.Now().Add(20 * time.Second); len(processesWith(t, "525252")) > 0; {
		require.True(t, time.Now().Before(deadline), "the closed project's terminal child is still running")
		time.Sleep(20 * time.Millisecond)
	}
	require.False(t, pidAlive(closing.Pid))

	var info termInfo
	require.NoError(t, c.Call(ctx, "terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24,
		"command": []string{"sh", "-c", "sleep 424242 & wait"}}, &info))
	require.True(t, pidAlive(info.Pid))
	p.stdin.Close()
	require.True(t, p.waitFor(30e9), "sidecar exits on stdin EOF")
	require.False(t, pidAlive(info.Pid), "the terminal's shell outlived the sidecar")
	require.Empty(t, processesWith(t, "424242"), "the terminal's child outlived the sidecar")
}

// pidAlive reports whether pid exists and is not a zombie.
func pidAlive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i < 0 || i+2 >= len(st) || st[i+2] != 'Z'
}
