package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zqagent/sidecar/ipc/client"
)

// BenchmarkColdStart measures spawn → ready line on a fresh data dir (the
// first start: the database is created).
func BenchmarkColdStart(b *testing.B) {
	benchStart(b, func(i int) string { return filepath.Join(b.TempDir(), strconv.Itoa(i)) })
}

// BenchmarkStartExistingDataDir measures spawn → ready line on a data dir
// that already holds a database (every start after the first).
func BenchmarkStartExistingDataDir(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "data")
	benchStart(b, func(int) string { return dir })
}

func benchStart(b *testing.B, dataDir func(i int) string) {
	var total, best time.Duration
	for i := 0; b.Loop(); i++ {
		cmd := exec.Command(sidecarBin, "--data-dir", dataDir(i), "--log-level", "warn")
		stdin, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		total += d
		if best == 0 || d < best {
			best = d
		}
		stdin.Close()
		_ = cmd.Wait()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-ready")
	b.ReportMetric(float64(best.Microseconds())/1000, "best-ms")
}

// rssMB reads VmRSS of a process (Linux).
func rssMB(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skip("no /proc:", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// BenchmarkIdleRSS measures the resident memory of a started sidecar with
// one initialized connection.
func BenchmarkIdleRSS(b *testing.B) {
	for b.Loop() {
		p, c := benchSpawn(b, "")
		time.Sleep(200 * time.Millisecond)
		b.ReportMetric(rssMB(b, p.cmd.Process.Pid), "idle-RSS-MB")
		c.Close()
		p.stop()
	}
}

// BenchmarkRSS20Sessions measures resident memory with 20 sessions whose
// engines are loaded (one turn each).
func BenchmarkRSS20Sessions(b *testing.B) {
	var resp []map[string]any
	for range 20 {
		resp = append(resp, map[string]any{"text": "ok"})
	}
	script := benchScript(b, resp...)
	for b.Loop() {
		p, c := benchSpawn(b, script)
		proj := b.TempDir()
		pid, err := c.OpenProject(bctx(b), proj)
		if err != nil {
			b.Fatal(err)
		}
		for range 20 {
			sid, err := c.CreateSession(bctx(b), pid, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Subscribe(bctx(b), sid, 0); err != nil {
				b.Fatal(err)
			}
			if _, err := c.StartTurn(bctx(b), sid, "hi"); err != nil {
				b.Fatal(err)
			}
			for {
				ev, err := c.NextEvent(bctx(b), sid)
				if err != nil {
					b.Fatal(err)
				}
				if ev.Type == "turn_end" {
					break
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
		b.ReportMetric(rssMB(b, p.cmd.Process.Pid), "RSS-MB")
		c.Close()
		p.stop()
	}
}

// BenchmarkDeltaEventsPerSecond measures delta events per second from the
// engine through the store to one WebSocket client: one turn streams a long
// text one rune per delta.
func BenchmarkDeltaEventsPerSecond(b *testing.B) {
	const deltas = 200_000
	script := benchScript(b, map[string]any{"text": strings.Repeat("x", deltas), "chunkSize": 1})
	p, c := benchSpawn(b, script)
	defer p.stop()
	defer c.Close()
	pid, err := c.OpenProject(bctx(b), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	sid, err := c.CreateSession(bctx(b), pid, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Subscribe(bctx(b), sid, 0); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	if _, err := c.StartTurn(bctx(b), sid, "stream"); err != nil {
		b.Fatal(err)
	}
	n, drops := 0, 0
	for notif := range c.Notifications() {
		if notif.Method == "session.dropped" {
			// Fell behind during the burst: continue from the last seq, as a
			// shell would (the catch-up is part of the figure).
			var d client.Dropped
			if err := json.Unmarshal(notif.Params, &d); err != nil {
				b.Fatal(err)
			}
			drops++
			go func() {
				if _, err := c.Subscribe(bctx(b), sid, d.LastSeq); err != nil {
					b.Error(err)
				}
			}()
			continue
		}
		if bytes.Contains(notif.Params, []byte(`"type":"assistant_delta"`)) {
			// One rune per model delta; several may share a frame.
			var ev struct {
				Data struct {
					Text string `json:"text"`
				} `json:"data"`
			}
			if err := json.Unmarshal(notif.Params, &ev); err != nil {
				b.Fatal(err)
			}
			n += len(ev.Data.Text)
		}
		if bytes.Contains(notif.Params, []byte(`"type":"turn_end"`)) {
			break
		}
	}
	el := time.Since(start)
	if n != deltas {
		b.Fatalf("got %d deltas, want %d", n, deltas)
	}
	b.ReportMetric(float64(n)/el.Seconds(), "deltas/s")
	b.ReportMetric(float64(drops), "drops")
}

func bctx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	b.Cleanup(cancel)
	return ctx
}

func benchScript(b *testing.B, responses ...map[string]any) string {
	data := []byte(`{"responses":[`)
	for i, r := range responses {
		if i > 0 {
			data = append(data, ',')
		}
		data = fmt.Appendf(data, `{"text":%q`, r["text"])
		if cs, ok := r["chunkSize"]; ok {
			data = fmt.Appendf(data, `,"chunkSize":%d`, cs)
		}
		data = append(data, '}')
	}
	data = append(data, "]}"...)
	path := filepath.Join(b.TempDir(), "script.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

type benchProc struct {
	cmd   *exec.Cmd
	stdin interface{ Close() error }
}

func (p *benchProc) stop() {
	p.stdin.Close()
	_ = p.cmd.Wait()
}

func benchSpawn(b *testing.B, script string) (*benchProc, *client.Client) {
	b.Helper()
	cmd := exec.Command(sidecarBin, "--data-dir", filepath.Join(b.TempDir(), "data"), "--log-level", "warn")
	if script != "" {
		cmd.Env = append(os.Environ(), "ZQAGENT_SCRIPT="+script)
	}
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	rd, err := client.ReadReady(out)
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.Dial(bctx(b), rd.URL, rd.Token, &client.Options{NotifyBuffer: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(bctx(b), "bench", "1", false); err != nil {
		b.Fatal(err)
	}
	return &benchProc{cmd: cmd, stdin: stdin}, c
}
