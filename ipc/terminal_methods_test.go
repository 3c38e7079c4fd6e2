//go:build !windows

package ipc

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/terminal"
)

func TestTerminalEchoWriteAndResize(t *testing.T) {
	ts, _ := startTermServer(t)
	c := ts.dial(t)
	pid, _ := ts.openDir(t, c, "proj")
	info := createTerm(t, c, map[string]any{"projectId": pid, "cols": 120, "rows": 40, "name": "main"})
	require.Equal(t, "main", info.Name)
	require.True(t, info.Alive)
	require.EqualValues(t, 120, info.Cols)

	w := newTermWatch(t, c)
	res := termSubscribe(t, c, pid, info.ID, 0)
	require.True(t, res.Alive)
	w.from(info.ID, 0, false)

	// UTF-8 text, then raw bytes.
	termCall(t, c, "terminal.write", pid, info.ID, map[string]any{"data": "echo hello-$((6*7)) ünï\n"})
	w.untilText(info.ID, "hello-42 ünï")
	termCall(t, c, "terminal.write", pid, info.ID, map[string]any{"dataBase64": base64.StdEncoding.EncodeToString([]byte("echo raw-$((1+1))\n"))})
	w.untilText(info.ID, "raw-2")

	// The size given at creation, then a resize, as the PTY reports them.
	termCall(t, c, "terminal.write", pid, info.ID, map[string]any{"data": "stty size\n"})
	w.untilText(info.ID, "40 120")
	var resized terminal.Info
	require.NoError(t, c.Call(tctx(t), "terminal.resize", map[string]any{"projectId": pid, "terminalId": info.ID, "cols": 101, "rows": 33}, &resized))
	require.EqualValues(t, 101, resized.Cols)
	require.EqualValues(t, 33, resized.Rows)
	termCall(t, c, "terminal.write", pid, info.ID, map[string]any{"data": "stty size\n"})
	w.untilText(info.ID, "33 101")

	// list shows it, alive, with the output offset.
	var list struct{ Terminals []terminal.Info }
	require.NoError(t, c.Call(tctx(t), "terminal.list", map[string]any{"projectId": pid}, &list))
	require.Len(t, list.Terminals, 1)
	require.Equal(t, info.ID, list.Terminals[0].ID)
	require.GreaterOrEqual(t, list.Terminals[0].LastSeq, int64(w.data[info.ID].Len()))

	// exit through the shell: the code arrives after all output.
	termCall(t, c, "terminal.write", pid, info.ID, map[string]any{"data": "echo bye; exit 3\n"})
	require.Equal(t, 3, w.untilExit(info.ID))
	require.Contains(t, w.text(info.ID), "bye")
	waitFor(t, "the exited subscription to be forgotten", func() bool { return ts.srv.b.TerminalStreams() == 0 })
}

func TestTerminalParamErrors(t *testing.T) {
	ts, _ := startTermServer(t)
	c := ts.dial(t)
	pid, dir := ts.openDir(t, c, "proj")
	outside := t.TempDir()

	cases := []struct {
		method string
		params map[string]any
		code   int
		msg    string
	}{
		{"terminal.create", map[string]any{"projectId": pid, "rows": 24}, wsrpc.CodeInvalidParams, "cols: required"},
		{"terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": -1}, wsrpc.CodeInvalidParams, "rows: must be between 1 and 65535"},
		{"terminal.create", map[string]any{"projectId": pid, "cols": 70000, "rows": 5}, wsrpc.CodeInvalidParams, "cols: must be between"},
		{"terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24, "cwd": outside}, wsrpc.CodeForbidden, "outside the project"},
		{"terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24, "cwd": "../"}, wsrpc.CodeForbidden, "outside the project"},
		{"terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24, "cwd": "nope"}, wsrpc.CodeInvalidParams, "cwd"},
		{"terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24, "command": "ls"}, wsrpc.CodeInvalidParams, "command: expected array"},
		{"terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24, "command": []string{""}}, wsrpc.CodeInvalidParams, "command"},
		{"terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24, "command": []string{"no-such-program-zq"}}, wsrpc.CodeInvalidParams, "no-such-program-zq"},
		{"terminal.create", map[string]any{"projectId": "nope", "cols": 80, "rows": 24}, wsrpc.CodeNotFound, "nope"},
		{"terminal.list", map[string]any{"projectId": "nope"}, wsrpc.CodeNotFound, "nope"},
		{"terminal.write", map[string]any{"projectId": pid, "terminalId": "term_x"}, wsrpc.CodeInvalidParams, "data: required"},
		{"terminal.write", map[string]any{"projectId": pid, "terminalId": "term_x", "data": "a", "dataBase64": "YQ=="}, wsrpc.CodeInvalidParams, "not both"},
		{"terminal.write", map[string]any{"projectId": pid, "terminalId": "term_x", "dataBase64": "!!"}, wsrpc.CodeInvalidParams, "dataBase64"},
		{"terminal.write", map[string]any{"projectId": pid, "terminalId": "term_x", "data": "a"}, wsrpc.CodeNotFound, "term_x"},
		{"terminal.resize", map[string]any{"projectId": pid, "terminalId": "term_x", "cols": 0, "rows": 5}, wsrpc.CodeInvalidParams, "cols: required"},
		{"terminal.resize", map[string]any{"projectId": pid, "terminalId": "term_x", "cols": 5, "rows": 100000}, wsrpc.CodeInvalidParams, "rows: must be between"},
		{"terminal.subscribe", map[string]any{"projectId": pid, "terminalId": "term_x", "afterSeq": -1}, wsrpc.CodeInvalidParams, "afterSeq"},
		{"terminal.subscribe", map[string]any{"projectId": pid}, wsrpc.CodeInvalidParams, "terminalId: required"},
		{"terminal.kill", map[string]any{"terminalId": "term_x"}, wsrpc.CodeInvalidParams, "projectId: required"},
		{"terminal.unsubscribe", map[string]any{"projectId": pid, "terminalId": "term_x"}, wsrpc.CodeNotFound, "term_x"},
	}
	for _, tc := range cases {
		ce := callErr(t, c, tc.method, tc.params)
		require.Equal(t, tc.code, ce.Code, "%s %v: %s", tc.method, tc.params, ce.Message)
		require.Contains(t, ce.Message, tc.msg, "%s %v", tc.method, tc.params)
	}

	// A symlink that leaves the project is outside too.
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "escape")))
	ce := callErr(t, c, "terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24, "cwd": "escape"})
	require.Equal(t, wsrpc.CodeForbidden, ce.Code, ce.Message)

	// A closed project takes no new terminal.
	require.NoError(t, c.Call(tctx(t), "project.close", map[string]any{"projectId": pid}, nil))
	ce = callErr(t, c, "terminal.create", map[string]any{"projectId": pid, "cols": 80, "rows": 24})
	require.Equal(t, wsrpc.CodeNotFound, ce.Code, ce.Message)
	require.Contains(t, ce.Message, "not open")
}

func TestTerminalWithoutManagerIsConfigError(t *testing.T) {
	ts := startServer(t)
	c := ts.dial(t)
	pid := ts.project(t, c)
	ce := callErr(t, c, "terminal.list", map[string]any{"projectId": pid})
	require.Equal(t, wsrpc.CodeConfig, ce.Code, ce.Message)
}

func TestTerminalExitCodeAndSubscribeAfterExit(t *testing.T) {
	ts, m := startTermServer(t)
	c := ts.dial(t)
	pid, _ := ts.openDir(t, c, "proj")
	info := createTerm(t, c, map[string]any{"projectId": pid, "command": []string{"sh", "-c", "echo done-here; exit 7"}})
	w := newTermWatch(t, c)
	termSubscribe(t, c, pid, info.ID, 0)
	w.from(info.ID, 0, false)
	require.Equal(t, 7, w.untilExit(info.ID))
	require.Contains(t, w.text(info.ID), "done-here")

	// The exited terminal stays listed; a new subscription replays and exits.
	got, err := m.Get(pid, info.ID)
	require.NoError(t, err)
	require.False(t, got.Alive)
	c2 := ts.dial(t)
	res := termSubscribe(t, c2, pid, info.ID, 0)
	require.False(t, res.Alive)
	require.NotNil(t, res.ExitCode)
	require.Equal(t, 7, *res.ExitCode)
	w2 := newTermWatch(t, c2)
	w2.from(info.ID, 0, false)
	require.Equal(t, 7, w2.untilExit(info.ID))
	require.Equal(t, w.text(info.ID), w2.text(info.ID))

	// Writing to it is a conflict; kill forgets it.
	ce := callErr(t, c, "terminal.write", map[string]any{"projectId": pid, "terminalId": info.ID, "data": "x"})
	require.Equal(t, wsrpc.CodeConflict, ce.Code, ce.Message)
	require.Equal(t, protocol.KindTerminalUnavailable, ce.KindOf(), "error.data.kind")
	termCall(t, c, "terminal.kill", pid, info.ID, nil)
	ce = callErr(t, c, "terminal.kill", map[string]any{"projectId": pid, "terminalId": info.ID})
	require.Equal(t, wsrpc.CodeNotFound, ce.Code, ce.Message)
}

var bgPID = regexp.MustCompile(`BG=(\d+)`)

func TestTerminalKillTakesTheGroupWithABackgroundGrandchild(t *testing.T) {
	ts, _ := startTermServer(t)
	c := ts.dial(t)
	pid, _ := ts.openDir(t, c, "proj")
	info := createTerm(t, c, map[string]any{"projectId": pid})
	w := newTermWatch(t, c)
	termSubscribe(t, c, pid, info.ID, 0)
	w.from(info.ID, 0, false)
	// The shell starts sh, which starts sleep in the background: a grandchild.
	termCall(t, c, "terminal.write", pid, info.ID, map[string]any{"data": "sh -c 'sleep 31337 & echo BG=$!; wait'\n"})
	w.until("the grandchild's pid", func() bool { return bgPID.MatchString(w.text(info.ID)) })
	grand, err := strconv.Atoi(bgPID.FindStringSubmatch(w.text(info.ID))[1])
	require.NoError(t, err)
	require.True(t, processAlive(grand))

	termCall(t, c, "terminal.kill", pid, info.ID, nil)
	w.untilExit(info.ID) // subscribers still get the exit after a kill
	waitGone(t, grand)
	waitGone(t, info.Pid)
	var list struct{ Terminals []terminal.Info }
	require.NoError(t, c.Call(tctx(t), "terminal.list", map[string]any{"projectId": pid}, &list))
	require.Empty(t, list.Terminals)
}

func TestTerminalReplayAfterResubscribeNoGapNoDuplicate(t *testing.T) {
	ts, m := startTermServer(t)
	c := ts.dial(t)
	pid, _ := ts.openDir(t, c, "proj")
	info := createTerm(t, c, map[string]any{"projectId": pid})
	w := newTermWatch(t, c)
	termSubscribe(t, c, pid, info.ID, 0)
	w.from(info.ID, 0, false)
	termCall(t, c, "terminal.write", pid, info.ID, map[string]any{"data": "for i in 1 2 3; do echo first-$i; done\n"})
	w.untilText(info.ID, "first-3")
	have := w.next[info.ID]

	// Unsubscribed, the terminal keeps producing.
	var un struct{ Unsubscribed bool }
	require.NoError(t, c.Call(tctx(t), "terminal.unsubscribe", map[string]any{"projectId": pid, "terminalId": info.ID}, &un))
	require.True(t, un.Unsubscribed)
	termCall(t, c, "terminal.write", pid, info.ID, map[string]any{"data": "for i in 1 2 3 4 5; do echo second-$i; done\n"})
	waitFor(t, "second-5 in the scrollback", func() bool { return strings.Contains(mustRead(t, m, pid, info.ID), "second-5") })
	got, err := m.Get(pid, info.ID)
	require.NoError(t, err)
	require.Greater(t, got.LastSeq, have)

	// Re-subscribing from what we have continues exactly there.
	res := termSubscribe(t, c, pid, info.ID, have)
	require.Greater(t, res.LastSeq, have)
	w.from(info.ID, have, false)
	w.untilText(info.ID, "second-5")
	termCall(t, c, "terminal.write", pid, info.ID, map[string]any{"data": "echo third\n"})
	w.untilText(info.ID, "third")

	// A fresh subscription from 0 on another connection gets the same bytes.
	c2 := ts.dial(t)
	w2 := newTermWatch(t, c2)
	termSubscribe(t, c2, pid, info.ID, 0)
	w2.from(info.ID, 0, false)
	w2.until("the whole stream", func() bool { return w2.next[info.ID] >= w.next[info.ID] })
	require.Equal(t, w.text(info.ID), w2.text(info.ID)[:len(w.text(info.ID))])

	// Subscribing again on the same connection replaces the subscription:
	// from 0 again, the replay starts over and nothing of the old one follows.
	termSubscribe(t, c2, pid, info.ID, 0)
	old := w2.text(info.ID)
	w2.data[info.ID].Reset()
	w2.from(info.ID, 0, false)
	w2.until("the replay", func() bool { return w2.next[info.ID] >= int64(len(old)) })
	require.Equal(t, old, w2.text(info.ID)[:len(old)])
	require.Equal(t, 2, ts.srv.b.TerminalStreams())
}

func mustRead(t *testing.T, m *terminal.Manager, pid, id string) string {
	s, err := m.ReadTerminal(tctx(t), pid, id, 0, 0)
	require.NoError(t, err)
	return s
}

func TestTerminalProjectIsolation(t *testing.T) {
	prov := scripted.New() // the script names terminal ids: appended below
	ts, _ := startTermServer(t, withProvider(prov))
	c := ts.dial(t)
	pa, _ := ts.openDir(t, c, "a")
	pb, _ := ts.openDir(t, c, "b")
	ta := createTerm(t, c, map[string]any{"projectId": pa, "name": "in-a"})
	tb := createTerm(t, c, map[string]any{"projectId": pb, "name": "in-b"})
	termCall(t, c, "terminal.write", pb, tb.ID, map[string]any{"data": "echo secret-of-b\n"})

	// Every terminal.* call with the wrong project: not found, worded like
	// an unknown id, so nothing tells that the terminal exists.
	for _, method := range []string{"terminal.write", "terminal.resize", "terminal.kill", "terminal.subscribe", "terminal.unsubscribe"} {
		params := map[string]any{"projectId": pa, "terminalId": tb.ID, "data": "x", "cols": 10, "rows": 10}
		ce := callErr(t, c, method, params)
		require.Equal(t, wsrpc.CodeNotFound, ce.Code, "%s: %s", method, ce.Message)
		params["terminalId"] = "term_000000000000"
		unknown := callErr(t, c, method, params)
		require.Equal(t, strings.ReplaceAll(unknown.Message, "term_000000000000", tb.ID), ce.Message, method)
	}
	var list struct{ Terminals []terminal.Info }
	require.NoError(t, c.Call(tctx(t), "terminal.list", map[string]any{"projectId": pa}, &list))
	require.Len(t, list.Terminals, 1)
	require.Equal(t, ta.ID, list.Terminals[0].ID)
	// B's terminal was not touched: it is alive and still answers.
	w := newTermWatch(t, c)
	termSubscribe(t, c, pb, tb.ID, 0)
	w.from(tb.ID, 0, false)
	w.untilText(tb.ID, "secret-of-b")

	// The agent of a session in A sees only A's terminals and cannot read B's.
	prov.Append(
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "l1", Name: "terminal_list", Arguments: `{}`}}},
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "r1", Name: "terminal_read", Arguments: fmt.Sprintf(`{"terminal_id":%q}`, tb.ID)}}},
		scripted.Response{ToolCalls: []llm.ToolCall{{ID: "r2", Name: "terminal_read", Arguments: fmt.Sprintf(`{"terminal_id":%q}`, ta.ID)}}},
		scripted.Response{Text: "done"},
	)
	sid, err := c.CreateSession(tctx(t), pa, nil)
	require.NoError(t, err)
	_, err = c.Subscribe(tctx(t), sid, 0)
	require.NoError(t, err)
	_, err = c.StartTurn(tctx(t), sid, "look at my terminals")
	require.NoError(t, err)
	runTurnApproving(t, c, sid)
	reqs := prov.Requests()
	require.Len(t, reqs, 4)
	listOut := lastToolMessage(t, reqs[1])
	require.Contains(t, listOut, ta.ID)
	require.Contains(t, listOut, "in-a")
	require.NotContains(t, listOut, tb.ID)
	require.NotContains(t, listOut, "in-b")
	readB := lastToolMessage(t, reqs[2])
	require.Contains(t, readB, "not found")
	require.NotContains(t, readB, "secret-of-b")
	readA := lastToolMessage(t, reqs[3])
	require.NotContains(t, readA, "not found")
	require.NotContains(t, readA, "secret-of-b")
}

// runTurnApproving reads a turn to its end, approving what asks.
func runTurnApproving(t *testing.T, c *client.Client, sid string) {
	t.Helper()
	for {
		ev := nextEvent(t, c, sid)
		switch ev.Type {
		case "permission_required":
			var d struct {
				RequestID string `json:"requestId"`
			}
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			require.NoError(t, c.Respond(tctx(t), sid, d.RequestID, map[string]string{"outcome": "once"}))
		case "turn_end":
			return
		}
	}
}

func nextEvent(t *testing.T, c *client.Client, sid string) client.Event {
	t.Helper()
	ev, err := c.NextEvent(tctx(t), sid)
	require.NoError(t, err)
	return ev
}

func lastToolMessage(t *testing.T, r llm.Request) string {
	t.Helper()
	last := r.Messages[len(r.Messages)-1]
	require.Equal(t, llm.RoleTool, last.Role)
	return last.Content
}

func TestProjectCloseKillsItsTerminals(t *testing.T) {
	ts, _ := startTermServer(t)
	c := ts.dial(t)
	pa, _ := ts.openDir(t, c, "a")
	pb, _ := ts.openDir(t, c, "b")
	ta := createTerm(t, c, map[string]any{"projectId": pa})
	tb := createTerm(t, c, map[string]any{"projectId": pb})
	w := newTermWatch(t, c)
	termSubscribe(t, c, pa, ta.ID, 0)
	w.from(ta.ID, 0, false)
	termSubscribe(t, c, pb, tb.ID, 0)
	w.from(tb.ID, 0, false)

	require.NoError(t, c.Call(tctx(t), "project.close", map[string]any{"projectId": pa}, nil))
	w.untilExit(ta.ID)
	waitGone(t, ta.Pid)
	var list struct{ Terminals []terminal.Info }
	require.NoError(t, c.Call(tctx(t), "terminal.list", map[string]any{"projectId": pa}, &list))
	require.Empty(t, list.Terminals)
	// B's terminal lives on.
	termCall(t, c, "terminal.write", pb, tb.ID, map[string]any{"data": "echo still-$((2+3))\n"})
	w.untilText(tb.ID, "still-5")
	_, exited := w.exit[tb.ID]
	require.False(t, exited)
}

func TestTerminalSubscriptionsEndWithTheConnection(t *testing.T) {
	ts, m := startTermServer(t)
	c := ts.dial(t)
	pid, _ := ts.openDir(t, c, "proj")
	info := createTerm(t, c, map[string]any{"projectId": pid})
	c2 := ts.dial(t)
	termSubscribe(t, c2, pid, info.ID, 0)
	termSubscribe(t, c, pid, info.ID, 0)
	require.Equal(t, 2, ts.srv.b.TerminalStreams())
	require.NoError(t, c2.Close())
	waitFor(t, "c2's subscription to end", func() bool { return ts.srv.b.TerminalStreams() == 1 })
	// The terminal and the other subscriber are unaffected.
	w := newTermWatch(t, c)
	w.from(info.ID, 0, false)
	termCall(t, c, "terminal.write", pid, info.ID, map[string]any{"data": "echo alive-$((3*3))\n"})
	w.untilText(info.ID, "alive-9")
	_, err := m.Get(pid, info.ID)
	require.NoError(t, err)
}

func TestTerminalSlowSubscriberIsDroppedAndResumesPastTheGap(t *testing.T) {
	ts, m := startTermServer(t, func(o *Options) {
		o.SendQueueBytes = 4 << 20       // a small queue to fill
		o.WriteTimeout = 5 * time.Minute // the client pauses; it must not be cut off
	})
	c, err := client.Dial(tctx(t), ts.url, ts.token, &client.Options{NotifyBuffer: 1})
	require.NoError(t, err)
	// Terminal output stops at the gate until it opens: the client's reader
	// then waits, and so does the server's writer.
	gate, done, gated, exited := make(chan struct{}), make(chan struct{}), make(chan client.Notification), make(chan struct{})
	go func() {
		defer close(exited)
		for n := range c.Notifications() {
			if n.Method == "terminal.output" {
				select {
				case <-gate:
				case <-done:
					return
				}
			}
			select {
			case gated <- n:
			case <-done:
				return
			}
		}
	}()
	t.Cleanup(func() {
		c.Close()
		close(done)
		<-exited
	})
	_, err = c.Initialize(tctx(t), "slow", "1", false)
	require.NoError(t, err)
	pid, _ := ts.openDir(t, c, "proj")
	flood := createTerm(t, c, map[string]any{"projectId": pid, "command": []string{"yes", "0123456789abcdef0123456789abcdef"}})
	termSubscribe(t, c, pid, flood.ID, 0)

	// The client reads nothing while the terminal produces far more than
	// the queue, the sockets and the ring hold together.
	waitFor(t, "40 MiB of output", func() bool {
		info, err := m.Get(pid, flood.ID)
		require.NoError(t, err)
		return info.LastSeq > 40<<20
	})
	w := newTermWatch(t, c)
	w.src = gated
	close(gate)
	w.from(flood.ID, 0, false)
	w.until("terminal.dropped", func() bool { _, ok := w.dropped[flood.ID]; return ok })
	missed := w.dropped[flood.ID] // the watch checked it is exactly what we had
	require.Positive(t, missed)
	waitFor(t, "the dropped subscription to be forgotten", func() bool { return ts.srv.b.TerminalStreams() == 0 })

	// Subscribing again from the first missed byte: the ring moved on, so
	// the output resumes past it (the gap marker) and is contiguous after.
	termSubscribe(t, c, pid, flood.ID, missed)
	w.from(flood.ID, missed, true)
	delete(w.dropped, flood.ID)
	w.until("the first output", func() bool { return !w.mayGap[flood.ID] })
	if again, ok := w.dropped[flood.ID]; ok {
		// The flood outran this client again before its first output: the
		// drop names where the new subscription started, past the gap.
		require.Greater(t, again, missed)
	} else {
		require.Greater(t, w.gapAt[flood.ID], missed, "the first output after the re-subscribe starts past the gap")
	}
	// Not a call: nobody reads this client any more, so no answer would come.
	require.NoError(t, m.Kill(pid, flood.ID))
}
