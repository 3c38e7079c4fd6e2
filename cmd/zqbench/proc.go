package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zqagent/sidecar/ipc/client"
)

// sidecar is one spawned sidecar process and its connection.
type sidecar struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	pid   int
	c     *client.Client
	ready time.Duration // spawn → ready line
}

// spawnOpts says how to start a sidecar.
type spawnOpts struct {
	dataDir  string
	modelURL string
	env      []string // extra environment (profiles)
	noDial   bool     // stop after the ready line
}

func spawn(ctx context.Context, bin string, o spawnOpts) (*sidecar, error) {
	// Spawned as the README tells a shell to: the key on stdin
	// (--secrets-stdin), none in the environment (a secret in the
	// environment costs a re-exec that scrubs it, ~9 ms).
	cmd := exec.Command(bin, "--data-dir", o.dataDir, "--log-level", "warn", "--keyring-service", "zqagent-bench", "--secrets-stdin")
	cmd.Env = append(withoutKeys(os.Environ()),
		"ZQAGENT_SCRIPT=",
		"OPENAI_BASE_URL="+o.modelURL,
		"OPENAI_FORCE_API_MODE=chat",
		"ZQAGENT_MODEL=bench-model",
	)
	cmd.Env = append(cmd.Env, o.env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start sidecar: %w", err)
	}
	p := &sidecar{cmd: cmd, stdin: stdin, pid: cmd.Process.Pid}
	if _, err := io.WriteString(stdin, `{"keys":{"openai":"sk-bench"}}`+"\n"); err != nil {
		p.stop()
		return nil, fmt.Errorf("secrets line: %w", err)
	}
	rd, err := client.ReadReady(out)
	p.ready = time.Since(start)
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("ready line: %w", err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	if o.noDial {
		return p, nil
	}
	p.c, err = client.Dial(ctx, rd.URL, rd.Token, &client.Options{NotifyBuffer: 1 << 17})
	if err != nil {
		p.stop()
		return nil, err
	}
	if _, err := p.c.Initialize(ctx, "zqbench", "1", false); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// stop closes the connection and stdin (the sidecar exits at EOF, writing
// its profiles) and waits for the process.
func (p *sidecar) stop() {
	if p.c != nil {
		_ = p.c.Close()
	}
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// cpu is the process's CPU time so far: the sum of its threads' run time
// from /proc/<pid>/task/*/schedstat (nanoseconds), or utime+stime from
// /proc/<pid>/stat (clock ticks) where schedstat is missing.
func (p *sidecar) cpu() time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p.pid))
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		sum += time.Duration(ns)
	}
	if sum > 0 {
		return sum
	}
	return statCPU(p.pid)
}

// statCPU reads utime+stime of /proc/<pid>/stat (in USER_HZ = 100 ticks).
func statCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// status reads a kB field of /proc/<pid>/status (VmRSS, VmHWM) in MiB.
func (p *sidecar) status(field string) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				return 0, err
			}
			return float64(kb) / 1024, nil
		}
	}
	return 0, errors.New("no " + field + " in /proc/<pid>/status")
}

func (p *sidecar) rss() float64 {
	v, _ := p.status("VmRSS")
	return v
}

// withoutKeys drops the API key and token variables of env.
func withoutKeys(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "ZQAGENT_TOKEN" || strings.HasSuffix(k, "_API_KEY") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
