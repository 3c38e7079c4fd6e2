//go:build linux

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/ipc/wsrpc"
	"github.com/zqagent/sidecar/tools/media"
)

// memOf reads a process's VmRSS and VmHWM (KiB) from /proc.
func memOf(t *testing.T, pid int) (rss, hwm int) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		n, err := strconv.Atoi(strings.Fields(v)[0])
		require.NoError(t, err)
		if k == "VmRSS" {
			rss = n
		} else {
			hwm = n
		}
	}
	require.NotZero(t, rss)
	require.NotZero(t, hwm)
	return rss, hwm
}

// resetPeak makes VmHWM the current RSS (clear_refs 5), so that the next
// peak is one request's.
func resetPeak(t *testing.T, pid int) {
	t.Helper()
	require.NoError(t, os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0))
}

const mib = 1 << 10 // KiB in a MiB

// settledRSS waits until the RSS stays put (the sidecar is idle after
// setup) and returns it.
func settledRSS(t *testing.T, pid int) int {
	t.Helper()
	var last int
	require.Eventually(t, func() bool {
		rss, _ := memOf(t, pid)
		still := last != 0 && rss-last < 512 && last-rss < 512
		last = rss
		return still
	}, 10*time.Second, 200*time.Millisecond)
	return last
}

// settleTime reports how long the RSS takes to come within 5 MiB of idle
// (a figure for the README, not a check: it gives up after 10 s).
func settleTime(t *testing.T, pid, idle int) string {
	start := time.Now()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for rss, _ := memOf(t, pid); time.Since(start) < 10*time.Second; rss, _ = memOf(t, pid) {
		if rss <= idle+5*mib {
			return fmt.Sprintf("within 5 MiB (%.1f MiB) after %v", float64(rss)/mib, time.Since(start).Round(10*time.Millisecond))
		}
		<-tick.C
	}
	rss, _ := memOf(t, pid)
	return fmt.Sprintf("%.1f MiB after 10 s", float64(rss)/mib)
}

// pngBytes is n bytes of an image: a PNG signature, then random bytes (so
// that nothing compresses or dedups them).
func pngBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	copy(b, "\x89PNG\r\n\x1a\n")
	return b
}

// turnStartFrame is a turn.start frame with attachments.
func turnStartFrame(t *testing.T, id string, sid string, files [][]byte) []byte {
	t.Helper()
	atts := make([]map[string]string, len(files))
	for i, f := range files {
		atts[i] = map[string]string{"name": fmt.Sprintf("shot-%d.png", i), "mimeType": "image/png", "dataUrl": "data:image/png;base64," + base64.StdEncoding.EncodeToString(f)}
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "turn.start", "params": map[string]any{"sessionId": sid, "text": "look", "attachments": atts}})
	require.NoError(t, err)
	return b
}

// rawAnswer sends a frame and returns the response to it: the answer to a
// string id (or a null one) is the connection's only frame without a
// method (c subscribes to nothing).
func rawAnswer(t *testing.T, c *client.Client, frame []byte) json.RawMessage {
	t.Helper()
	require.NoError(t, c.WriteRaw(tctx(t), frame))
	for {
		select {
		case n := <-c.Notifications():
			if n.Method == "" {
				return n.Params
			}
		case <-tctx(t).Done():
			t.Fatal("no answer")
		}
	}
}

// TestE2ELargeFrameCostsItsSizeOnce: a frame of up to the maximum size
// costs at most twice its size over idle at the peak (VmHWM), and within
// 10 s of its answer the RSS is back within 30 MiB of idle — for a valid
// turn with 4 attachments at the 10 MB limit (decoded straight to their
// files), 4 × 10 MB attachments (refused: over the total), a text of the
// frame's size (refused) and a frame of garbage (refused).
func TestE2ELargeFrameCostsItsSizeOnce(t *testing.T) {
	e := setup(t, writeScript(t, text("one"), text("two")), nil)
	pid := e.p.cmd.Process.Pid
	raw := e.p.connect(t)
	// Warm up: a turn with a small attachment.
	small := pngBytes(t, 1000)
	ans := rawAnswer(t, raw, turnStartFrame(t, "warm", e.sid, [][]byte{small}))
	require.Contains(t, string(ans), `"turnId"`)
	untilType(t, e.c, e.sid, "turn_end")
	idle := settledRSS(t, pid)

	quarter := make([][]byte, 4)
	for i := range quarter {
		quarter[i] = pngBytes(t, media.MaxAttachmentBytes/4)
	}
	tens := make([][]byte, 4)
	for i := range tens {
		tens[i] = pngBytes(t, 10_000_000)
	}
	textFrame := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"text","method":"turn.start","params":{"sessionId":%q,"text":"%s"}}`, e.sid, strings.Repeat("a", wsrpc.MaxFrame-200))
	garbage := bytes.Repeat([]byte("{[garbage"), wsrpc.MaxFrame/9)
	cases := []struct {
		name  string
		frame []byte
		want  string // in the answer
	}{
		{"4 attachments, 10 MB together", turnStartFrame(t, "valid", e.sid, quarter), `"turnId"`},
		{"4 × 10 MB attachments", turnStartFrame(t, "tens", e.sid, tens), `attachments total more than`},
		{"oversized text", textFrame, `text: 58720056 bytes; at most 1048576`},
		{"garbage", garbage, `"code":-32700`},
	}
	for _, tc := range cases {
		resetPeak(t, pid)
		ans := rawAnswer(t, raw, tc.frame)
		require.Contains(t, string(ans), tc.want, tc.name)
		_, hwm := memOf(t, pid)
		frameKiB := len(tc.frame) >> 10
		t.Logf("%s: frame %.1f MiB, idle %.1f MiB, peak %.1f MiB (+%.1f MiB, %.2f× the frame)", tc.name,
			float64(frameKiB)/mib, float64(idle)/mib, float64(hwm)/mib, float64(hwm-idle)/mib, float64(hwm-idle)/float64(frameKiB))
		require.LessOrEqual(t, hwm-idle, 2*frameKiB, "%s: the peak over idle is at most twice the frame", tc.name)
		start := time.Now()
		require.Eventually(t, func() bool {
			rss, _ := memOf(t, pid)
			return rss <= idle+30*mib
		}, 10*time.Second, 50*time.Millisecond, "%s: the memory comes back", tc.name)
		t.Logf("%s: within 30 MiB of idle after %v; %s", tc.name, time.Since(start).Round(10*time.Millisecond), settleTime(t, pid, idle))
		if tc.want == `"turnId"` {
			// The turn ran with the attachments, stored as files; history and
			// events carry refs.
			evs := untilType(t, e.c, e.sid, "turn_end")
			var start struct {
				Attachments []struct {
					Name string `json:"name"`
					Size int    `json:"size"`
					Path string `json:"path"`
				} `json:"attachments"`
			}
			require.NoError(t, json.Unmarshal(evs[0].Data, &start))
			require.Len(t, start.Attachments, 4)
			for i, a := range start.Attachments {
				require.Equal(t, fmt.Sprintf("shot-%d.png", i), a.Name)
				require.Equal(t, len(quarter[i]), a.Size)
				b, err := os.ReadFile(filepath.Join(e.dataDir, "sessions", e.sid, filepath.FromSlash(a.Path)))
				require.NoError(t, err)
				require.True(t, bytes.Equal(quarter[i], b), "attachment %d is stored as sent", i)
			}
		}
	}
}

// TestE2EParallelLargeFramesStayInBudget: four connections send a frame
// of the maximum size at once; the sidecar holds at most the documented
// budget of large frames (wsrpc.LargeFrameSlots × MaxFrame) at a time —
// the others wait to be read — and a fifth connection's small requests are
// answered all along.
func TestE2EParallelLargeFramesStayInBudget(t *testing.T) {
	e := setup(t, writeScript(t, text("one")), nil)
	pid := e.p.cmd.Process.Pid
	conns := make([]*client.Client, 4)
	for i := range conns {
		conns[i] = e.p.connect(t)
	}
	idle := settledRSS(t, pid)
	frame := func(i int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"big-%d","method":"turn.start","params":{"sessionId":%q,"text":"%s"}}`, i, e.sid, strings.Repeat("a", wsrpc.MaxFrame-200))
	}
	frames := [][]byte{frame(0), frame(1), frame(2), frame(3)}

	resetPeak(t, pid)
	var wg sync.WaitGroup
	answers := make([]string, len(conns))
	var pending atomic.Int32
	pending.Store(int32(len(conns)))
	for i, c := range conns {
		wg.Go(func() {
			defer pending.Add(-1)
			if err := c.WriteRaw(tctx(t), frames[i]); err != nil {
				answers[i] = err.Error()
				return
			}
			for n := range c.Notifications() {
				if n.Method == "" {
					answers[i] = string(n.Params)
					return
				}
			}
		})
	}
	// Small requests on a fifth connection, while the large frames are in
	// flight: each is answered.
	var during, total int
	var slowest time.Duration
	for pending.Load() > 0 {
		start := time.Now()
		var got json.RawMessage
		require.NoError(t, e.c.Call(tctx(t), "session.get", map[string]string{"sessionId": e.sid}, &got))
		require.Contains(t, string(got), e.sid)
		slowest = max(slowest, time.Since(start))
		total++
		if pending.Load() > 0 {
			during++
		}
	}
	wg.Wait()
	for i, a := range answers {
		require.Contains(t, a, `text: 58720056 bytes; at most 1048576`, "connection %d", i)
	}
	require.Positive(t, during, "small requests were answered while the large frames were in flight")
	_, hwm := memOf(t, pid)
	budget := wsrpc.LargeFrameSlots * wsrpc.MaxFrame >> 10
	t.Logf("4 × %.1f MiB frames at once: idle %.1f MiB, peak %.1f MiB (+%.1f MiB; budget %d MiB); %d small requests answered meanwhile, the slowest in %v",
		float64(len(frames[0])>>10)/mib, float64(idle)/mib, float64(hwm)/mib, float64(hwm-idle)/mib, budget/mib, during, slowest.Round(time.Millisecond))
	require.LessOrEqual(t, hwm-idle, budget+16*mib, "at most the budget of large frames at a time")
	require.Eventually(t, func() bool {
		rss, _ := memOf(t, pid)
		return rss <= idle+30*mib
	}, 10*time.Second, 50*time.Millisecond, "the memory comes back")
}

// TestE2EAttachmentTurnThroughTheModel: a turn with 4 attachments at the
// 10 MB limit, answered by an OpenAI-compatible model: the model gets each
// attachment's bytes as a data URL (read from its file when the request is
// built), and within 10 s of turn_end the RSS is back within 30 MiB of
// idle (the bar; on a quiet machine it is within 5 MiB in under a
// second): the history keeps the files' names, not their base64, and the
// garbage of building the request is given back (without that it stays
// ~30 MiB over idle until the runtime's periodic GC).
func TestE2EAttachmentTurnThroughTheModel(t *testing.T) {
	f := newFakeModel(t, "nice pictures")
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`"stream":true`)) {
			mu.Lock()
			bodies = append(bodies, b)
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		f.handle(w, r)
	}))
	t.Cleanup(srv.Close)
	e := setupEnv(t, append(f.env(), "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=sk-mem-e2e-0123", noBus), nil)
	pid := e.p.cmd.Process.Pid
	raw := e.p.connect(t)
	ans := rawAnswer(t, raw, turnStartFrame(t, "warm", e.sid, [][]byte{pngBytes(t, 1000)}))
	require.Contains(t, string(ans), `"turnId"`)
	untilType(t, e.c, e.sid, "turn_end")
	idle := settledRSS(t, pid)

	files := make([][]byte, 4)
	for i := range files {
		files[i] = pngBytes(t, media.MaxAttachmentBytes/4)
	}
	frame := turnStartFrame(t, "turn", e.sid, files)
	resetPeak(t, pid)
	ans = rawAnswer(t, raw, frame)
	require.Contains(t, string(ans), `"turnId"`)
	evs := untilType(t, e.c, e.sid, "turn_end")
	require.Equal(t, "completed", dataOf(t, evs[len(evs)-1])["status"])
	_, hwm := memOf(t, pid)
	start := time.Now()
	var last int
	if !assert.Eventually(t, func() bool {
		last, _ = memOf(t, pid)
		return last <= idle+30*mib
	}, 10*time.Second, 50*time.Millisecond) {
		t.Fatalf("the memory did not come back after the turn: idle %.1f MiB, last %.1f MiB", float64(idle)/mib, float64(last)/mib)
	}
	t.Logf("turn with 4 attachments (frame %.1f MiB) through the model: idle %.1f MiB, peak %.1f MiB (+%.1f MiB), within 30 MiB of idle after %v; %s",
		float64(len(frame)>>10)/mib, float64(idle)/mib, float64(hwm)/mib, float64(hwm-idle)/mib, time.Since(start).Round(10*time.Millisecond), settleTime(t, pid, idle))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bodies, 2, "one model request per turn")
	for i, data := range files {
		require.True(t, bytes.Contains(bodies[1], []byte(`"url":"data:image/png;base64,`+base64.StdEncoding.EncodeToString(data)+`"`)), "the model got attachment %d", i)
	}
}
