package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/zqagent/sidecar/proc"
)

// Caps of a child's stderr: how much is logged per connection and how much
// of its end is kept for error messages.
const (
	stderrLogCap  = 64 << 10
	stderrTailCap = 2 << 10
	stderrLineCap = 4 << 10
)

// child is a stdio server process: its pid (the leader of its own process
// group) and the reader of its stderr, which also tells when it is gone.
type child struct {
	pid  int
	r    *os.File      // read end of the stderr pipe
	dead chan struct{} // closed when stderr reached EOF: every holder exited

	mu   sync.Mutex
	tail []byte // guarded by mu; the end of stderr
}

// startStdio starts the server process with a sanitized environment plus
// the config's env, in its own process group, with stderr captured.
func (d *dialer) startStdio(ctx context.Context, cfg ServerConfig, c *conn) (*child, *client.Client, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	var cmd *exec.Cmd
	cmdFunc := func(_ context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
		// Not CommandContext: the process lives as long as the connection,
		// not as long as the handshake's context. close() ends it.
		cmd = exec.Command(command, args...)
		cmd.Env = env
		cmd.Dir = d.cwd(cfg)
		cmd.Stderr = w
		cmd.WaitDelay = 2 * time.Second
		proc.SetGroup(cmd)
		return cmd, nil
	}
	var extra []string
	keys := make([]string, 0, len(cfg.Env))
	for k := range cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		extra = append(extra, k+"="+cfg.Env[k])
	}
	tr := transport.NewStdioWithOptions(cfg.Command[0], proc.Env(nil, extra...), cfg.Command[1:],
		transport.WithCommandFunc(cmdFunc), transport.WithCommandLogger(d.logger))
	cl := client.NewClient(tr, c.clientOptions(d)...)
	err = cl.Start(ctx)
	_ = w.Close() // the child holds its own copy now
	if err != nil || cmd == nil || cmd.Process == nil {
		_ = r.Close()
		if err == nil {
			err = errors.New("the server process did not start")
		}
		_ = cl.Close()
		return nil, nil, fmt.Errorf("start %s: %w", cfg.Command[0], err)
	}
	ch := &child{pid: cmd.Process.Pid, r: r, dead: make(chan struct{})}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		ch.readStderr(d, cfg.Name)
		close(ch.dead)
		_ = r.Close()
		c.lost(d, fmt.Errorf("%w: the server process exited%s", ErrServerDied, ch.tailText()))
	}()
	return ch, cl, nil
}

// cwd is the config's cwd (relative ones from the workspace), else the
// workspace, else the sidecar's own directory.
func (d *dialer) cwd(cfg ServerConfig) string {
	switch {
	case cfg.Cwd == "":
		return d.workspace
	case filepath.IsAbs(cfg.Cwd) || d.workspace == "":
		return cfg.Cwd
	}
	return filepath.Join(d.workspace, cfg.Cwd)
}

// readStderr logs the child's stderr line by line up to stderrLogCap and
// keeps its last stderrTailCap bytes.
func (ch *child) readStderr(d *dialer, name string) {
	br := bufio.NewReaderSize(ch.r, stderrLineCap)
	logged := 0
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			ch.keep(line)
			text := strings.TrimRight(string(line), "\r\n")
			switch {
			case logged < stderrLogCap:
				logged += len(line)
				d.logger.Info("mcp server stderr", "server", name, "line", text)
			case logged != -1:
				logged = -1
				d.logger.Warn("mcp server stderr: log cap reached, the rest is dropped", "server", name, "cap", stderrLogCap)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				d.logger.Debug("mcp server stderr read", "server", name, "err", err)
			}
			return
		}
	}
}

func (ch *child) keep(p []byte) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.tail = append(ch.tail, p...)
	if over := len(ch.tail) - stderrTailCap; over > 0 {
		ch.tail = append(ch.tail[:0], ch.tail[over:]...)
	}
}

// tailText is ": " and the last lines of stderr, or "" when it was silent.
func (ch *child) tailText() string {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(ch.tail)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	t := strings.TrimSpace(strings.Join(lines, "\n"))
	if t == "" {
		return ""
	}
	return ": " + t
}

// stop kills what is left of the child's process group and waits (up to
// grace) for its stderr to close; then it stops reading regardless, so that
// a process that escaped the group cannot hold the reader forever.
func (ch *child) stop(grace time.Duration) {
	_ = proc.KillGroup(ch.pid, 0)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-ch.dead:
	case <-t.C:
		_ = ch.r.Close()
		<-ch.dead
	}
}
