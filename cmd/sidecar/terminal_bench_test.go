//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/zqagent/sidecar/ipc/client"
)

// BenchmarkTerminalFloodToWebSocket measures terminal output from a flooding
// PTY (`yes LINE | head -c 64 MiB`) through the real sidecar to one WebSocket
// client on loopback: throughput, terminal.output notifications per second
// and their average size. The client is lean, as a browser is (JSON.parse
// and atob are native): it cuts seq and data out of each frame and decodes
// the base64. "lines" floods 63-byte lines (as the terminal package's own
// benchmarks); "y" floods `yes`'s 2-byte lines, where the kernel's tty line
// discipline (\n → \r\n, per line) is the limit, not the sidecar.
func BenchmarkTerminalFloodToWebSocket(b *testing.B) {
	b.Run("lines", func(b *testing.B) {
		benchTerminalFlood(b, "yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
	})
	b.Run("y", func(b *testing.B) { benchTerminalFlood(b, "yes") })
}

func benchTerminalFlood(b *testing.B, yes string) {
	const size = 64 << 20
	p, rd := spawnForTerminals(b)
	defer p.stop()
	ctx := bctx(b)
	c, err := client.Dial(ctx, rd.URL, rd.Token, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "bench", "1", false); err != nil {
		b.Fatal(err)
	}
	pid, err := c.OpenProject(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var (
		total, frames, drops int64
		elapsed              time.Duration
	)
	b.SetBytes(size)
	for b.Loop() {
		var info termInfo
		// The flood waits for a line: nothing is produced before the
		// subscription, and the clock starts at the line.
		if err := c.Call(ctx, "terminal.create", map[string]any{"projectId": pid, "cols": 200, "rows": 50,
			"command": []string{"sh", "-c", fmt.Sprintf("read go; %s | head -c %d", yes, size)}}, &info); err != nil {
			b.Fatal(err)
		}
		r, err := dialLean(ctx, rd.URL, rd.Token)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.subscribe(ctx, pid, info.ID, 0); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := c.Call(ctx, "terminal.write", map[string]any{"projectId": pid, "terminalId": info.ID, "data": "go\n"}, nil); err != nil {
			b.Fatal(err)
		}
		if err := r.untilExit(ctx, pid, info.ID); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		total, frames, drops = total+r.bytes, frames+r.frames, drops+r.drops
		r.ws.CloseNow()
		if err := c.Call(ctx, "terminal.kill", map[string]any{"projectId": pid, "terminalId": info.ID}, nil); err != nil {
			b.Fatal(err)
		}
	}
	sec := elapsed.Seconds()
	b.ReportMetric(float64(total)/1e6/sec, "MB/s")
	b.ReportMetric(float64(frames)/sec, "notifications/s")
	b.ReportMetric(float64(total)/float64(max(frames, 1))/1024, "KiB/notification")
	b.ReportMetric(float64(drops), "drops")
}

// spawnForTerminals starts the sidecar and returns it with its ready line.
func spawnForTerminals(b *testing.B) (*benchProc, client.Ready) {
	b.Helper()
	cmd := exec.Command(sidecarBin, "--data-dir", filepath.Join(b.TempDir(), "data"), "--log-level", "warn")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	rd, err := client.ReadReady(out)
	if err != nil {
		b.Fatal(err)
	}
	return &benchProc{cmd: cmd, stdin: stdin}, rd
}

// leanClient is a minimal protocol client for one terminal stream.
type leanClient struct {
	ws                   *websocket.Conn
	id                   int
	next                 int64
	bytes, frames, drops int64
	buf                  []byte
}

func dialLean(ctx context.Context, url, token string) (*leanClient, error) {
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + token}},
		Subprotocols: []string{"zqagent.v1"},
	})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(64 << 20)
	r := &leanClient{ws: ws}
	if _, err := r.call(ctx, "initialize", map[string]any{"client": map[string]string{"name": "lean", "version": "1"}, "protocolVersion": 1}); err != nil {
		ws.CloseNow()
		return nil, err
	}
	return r, nil
}

// call sends a request and reads frames up to its response (the stream
// only starts after a subscribe's response, so nothing is skipped).
func (r *leanClient) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	r.id++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if err := r.ws.Write(ctx, websocket.MessageText, req); err != nil {
		return nil, err
	}
	for {
		_, data, err := r.ws.Read(ctx)
		if err != nil {
			return nil, err
		}
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(data, &resp) != nil || resp.ID != r.id {
			continue
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, resp.Error)
		}
		return resp.Result, nil
	}
}

func (r *leanClient) subscribe(ctx context.Context, pid, tid string, afterSeq int64) error {
	r.next = afterSeq
	_, err := r.call(ctx, "terminal.subscribe", map[string]any{"projectId": pid, "terminalId": tid, "afterSeq": afterSeq})
	return err
}

var (
	outputPrefix  = []byte(`{"jsonrpc":"2.0","method":"terminal.output","params":{"terminalId":`)
	exitPrefix    = []byte(`{"jsonrpc":"2.0","method":"terminal.exit"`)
	droppedPrefix = []byte(`{"jsonrpc":"2.0","method":"terminal.dropped"`)
)

// untilExit reads the stream until terminal.exit, checking seq continuity
// (a gap only right after a re-subscribe) and re-subscribing after a drop.
func (r *leanClient) untilExit(ctx context.Context, pid, tid string) error {
	gapOK := false
	for {
		_, data, err := r.ws.Read(ctx)
		if err != nil {
			return err
		}
		switch {
		case bytes.HasPrefix(data, outputPrefix):
			_, rest, _ := bytes.Cut(data[len(outputPrefix):], []byte(`,"seq":`))
			seqText, rest, _ := bytes.Cut(rest, []byte(`,"data":"`))
			seq, err := strconv.ParseInt(string(seqText), 10, 64)
			if err != nil {
				return fmt.Errorf("seq: %w", err)
			}
			if seq != r.next && !(gapOK && seq > r.next) {
				return fmt.Errorf("output at seq %d, want %d", seq, r.next)
			}
			gapOK = false
			end := bytes.IndexByte(rest, '"')
			if end < 0 {
				return fmt.Errorf("bad frame")
			}
			if r.buf, err = base64.StdEncoding.AppendDecode(r.buf[:0], rest[:end]); err != nil {
				return err
			}
			r.next = seq + int64(len(r.buf))
			r.bytes += int64(len(r.buf))
			r.frames++
		case bytes.HasPrefix(data, exitPrefix):
			return nil
		case bytes.HasPrefix(data, droppedPrefix):
			var d struct {
				Params struct {
					Seq int64 `json:"seq"`
				} `json:"params"`
			}
			if err := json.Unmarshal(data, &d); err != nil {
				return err
			}
			r.drops++
			if err := r.subscribe(ctx, pid, tid, d.Params.Seq); err != nil {
				return err
			}
			gapOK = true
		}
	}
}
