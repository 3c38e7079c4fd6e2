//go:build !windows

package ipc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/terminal"
)

// startTermServer runs a test server with a real terminal manager, closed
// after the server.
func startTermServer(t testing.TB, opts ...serverOpt) (*testServer, *terminal.Manager) {
	t.Helper()
	m := terminal.NewManager(terminal.Options{KillGrace: 500 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { require.NoError(t, m.Close()) }) // runs after the server's cleanup
	opts = append([]serverOpt{func(o *Options) { o.Terminals = m }}, opts...)
	return startServer(t, opts...), m
}

// openDir makes a project folder named name and opens it.
func (ts *testServer) openDir(t testing.TB, c *client.Client, name string) (id, dir string) {
	t.Helper()
	dir = filepath.Join(ts.dir, name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	id, err := c.OpenProject(tctx(t), dir)
	require.NoError(t, err)
	return id, dir
}

// createTerm calls terminal.create; a plain /bin/sh unless params say
// otherwise (no login rc files in tests).
func createTerm(t testing.TB, c *client.Client, params map[string]any) terminal.Info {
	t.Helper()
	p := map[string]any{"cols": 80, "rows": 24, "shell": "/bin/sh"}
	for k, v := range params {
		p[k] = v
	}
	var info terminal.Info
	require.NoError(t, c.Call(tctx(t), "terminal.create", p, &info))
	require.NotEmpty(t, info.ID)
	return info
}

func termCall(t testing.TB, c *client.Client, method, pid, tid string, extra map[string]any) {
	t.Helper()
	p := map[string]any{"projectId": pid, "terminalId": tid}
	for k, v := range extra {
		p[k] = v
	}
	require.NoError(t, c.Call(tctx(t), method, p, nil), method)
}

func termSubscribe(t testing.TB, c *client.Client, pid, tid string, afterSeq int64) protocol.TerminalSubscribeResult {
	t.Helper()
	var res protocol.TerminalSubscribeResult
	require.NoError(t, c.Call(tctx(t), "terminal.subscribe", map[string]any{"projectId": pid, "terminalId": tid, "afterSeq": afterSeq}, &res))
	return res
}

// termWatch demultiplexes one connection's terminal notifications and checks
// that each terminal's output is gapless and without duplicates.
type termWatch struct {
	t       testing.TB
	c       *client.Client
	src     <-chan client.Notification // c.Notifications() unless set
	data    map[string]*bytes.Buffer
	next    map[string]int64 // the seq the next output must have
	exit    map[string]int
	dropped map[string]int64
	mayGap  map[string]bool  // the next output may start past next (the gap rule)
	gapAt   map[string]int64 // where the output resumed after a gap
	frames  int
}

func newTermWatch(t testing.TB, c *client.Client) *termWatch {
	return &termWatch{t: t, c: c, src: c.Notifications(), data: map[string]*bytes.Buffer{}, next: map[string]int64{},
		exit: map[string]int{}, dropped: map[string]int64{}, mayGap: map[string]bool{}, gapAt: map[string]int64{}}
}

// from sets where the stream of id starts (the afterSeq just subscribed
// with); allowGap accepts a first output past it (the gap rule).
func (w *termWatch) from(id string, afterSeq int64, allowGap bool) {
	w.next[id] = afterSeq
	w.mayGap[id] = allowGap
	delete(w.gapAt, id)
	if w.data[id] == nil {
		w.data[id] = &bytes.Buffer{}
	}
}

func (w *termWatch) text(id string) string {
	if b := w.data[id]; b != nil {
		return b.String()
	}
	return ""
}

// handle applies one notification.
func (w *termWatch) handle(n client.Notification) {
	t := w.t
	switch n.Method {
	case "terminal.output":
		var o struct {
			TerminalID string `json:"terminalId"`
			Seq        int64  `json:"seq"`
			Data       string `json:"data"`
		}
		require.NoError(t, json.Unmarshal(n.Params, &o))
		data, err := base64.StdEncoding.DecodeString(o.Data)
		require.NoError(t, err)
		require.NotEmpty(t, data)
		want, ok := w.next[o.TerminalID]
		require.True(t, ok, "output of a terminal not subscribed: %s", o.TerminalID)
		if w.mayGap[o.TerminalID] {
			require.GreaterOrEqual(t, o.Seq, want, "terminal %s: duplicate", o.TerminalID)
			if o.Seq > want {
				w.gapAt[o.TerminalID] = o.Seq
			}
			w.mayGap[o.TerminalID] = false
		} else {
			require.Equal(t, want, o.Seq, "terminal %s: gap or duplicate", o.TerminalID)
		}
		w.data[o.TerminalID].Write(data)
		w.next[o.TerminalID] = o.Seq + int64(len(data))
		w.frames++
	case "terminal.exit":
		var e terminal.Exit
		require.NoError(t, json.Unmarshal(n.Params, &e))
		w.exit[e.TerminalID] = e.ExitCode
	case "terminal.dropped":
		var d protocol.TerminalDropped
		require.NoError(t, json.Unmarshal(n.Params, &d))
		if w.mayGap[d.TerminalID] { // dropped before its first output: past the gap
			require.GreaterOrEqual(t, d.Seq, w.next[d.TerminalID])
			w.mayGap[d.TerminalID] = false
		} else {
			require.Equal(t, w.next[d.TerminalID], d.Seq, "dropped names the first seq not delivered")
		}
		w.dropped[d.TerminalID] = d.Seq
	}
}

// until reads notifications until cond holds.
func (w *termWatch) until(what string, cond func() bool) {
	w.t.Helper()
	ctx := tctx(w.t)
	for !cond() {
		select {
		case n, ok := <-w.src:
			require.True(w.t, ok, "connection closed while waiting for %s", what)
			w.handle(n)
		case <-ctx.Done():
			w.t.Fatalf("timed out waiting for %s; have %v", what, w.next)
		}
	}
}

func (w *termWatch) untilText(id, sub string) {
	w.t.Helper()
	w.until("output "+sub, func() bool { return bytes.Contains(w.data[id].Bytes(), []byte(sub)) })
}

func (w *termWatch) untilExit(id string) int {
	w.t.Helper()
	w.until("exit of "+id, func() bool { _, ok := w.exit[id]; return ok })
	return w.exit[id]
}

// waitGone waits (up to a generous deadline) until pid no longer exists.
func waitGone(t testing.TB, pid int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("process %d to end", pid), func() bool { return !processAlive(pid) })
}

// waitFor polls cond (up to a generous deadline).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true // no /proc (macOS): kill(0) is all we know
	}
	i := bytes.LastIndexByte(st, ')')
	return i < 0 || i+2 >= len(st) || st[i+2] != 'Z'
}
