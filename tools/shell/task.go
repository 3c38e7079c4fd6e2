package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/zqagent/sidecar/proc"
	"github.com/zqagent/sidecar/shellcmd"
)

// endReason says why a task ended before its command finished on its own.
type endReason int

const (
	endNone      endReason = iota
	endTimeout             // the timeout fired
	endKilled              // shell_task_kill
	endCancelled           // the turn was interrupted (ctx)
	endClosed              // the session closed (Manager.Close)
)

func (r endReason) String() string {
	switch r {
	case endTimeout:
		return "timeout"
	case endKilled:
		return "killed"
	case endCancelled:
		return "interrupted"
	case endClosed:
		return "session_closed"
	}
	return ""
}

// task is one running or finished command, in its own process group.
type task struct {
	id      string
	command string
	cwd     string
	started time.Time
	out     *output
	grace   time.Duration
	pid     int
	done    chan struct{} // closed when the process exited and its output is drained
	// gitRefused says why the inert environment pinned no usable
	// repository (gitenv.Commands refused the workspace's); nil otherwise.
	gitRefused error

	mu       sync.Mutex
	reason   endReason // guarded by mu; the first kill reason
	exited   bool      // guarded by mu; the shell exited (Wait returned)
	exitCode int       // guarded by mu; valid once done is closed; -1 when killed by a signal
	runErr   error     // guarded by mu; why the command did not exit normally (a signal, a wait error)
	ended    time.Time // guarded by mu
}

// start launches argv in its own process group inside jail, writing
// combined stdout and stderr to t.out, and hands the goroutines that wait
// for it to wg. When the shell exits, whatever it left running in its group
// or its jail is killed.
func (t *task) start(wg *sync.WaitGroup, jail *proc.Jail, argv []string, env []string, timeout time.Duration) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start command: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = t.cwd
	cmd.Env = env
	cmd.Stdout = w // one *os.File for both: ordering kept, no copy goroutine in exec
	cmd.Stderr = w
	proc.SetGroup(cmd)
	shellcmd.Prepare(cmd)
	err = jail.Start(cmd)
	w.Close() // the child holds its own copy
	if err != nil {
		_ = jail.Close()
		r.Close()
		return fmt.Errorf("start command: %w", err)
	}
	t.pid = cmd.Process.Pid
	_ = proc.Attach(cmd) // Windows: job object; without it KillGroup falls back to taskkill
	if timeout > 0 {
		wg.Go(func() {
			timer := time.NewTimer(timeout)
			defer timer.Stop()
			select {
			case <-timer.C:
				t.kill(endTimeout)
			case <-t.done:
			}
		})
	}

	drained := make(chan struct{})
	wg.Go(func() {
		defer close(drained)
		defer r.Close()
		_, _ = io.Copy(t.out, r) // ends when every holder of the pipe is gone
	})
	wg.Go(func() {
		err := cmd.Wait()
		t.mu.Lock()
		t.exited = true
		t.mu.Unlock()
		// The shell is gone; end what it left behind (background jobs) so
		// that nothing outlives the command and the pipe reaches EOF.
		_ = proc.ReleaseGroup(t.pid, t.grace)
		_ = jail.Close() // and what left the group (setsid, double fork)
		<-drained
		t.finish(err)
	})
	return nil
}

// finish records the outcome and closes done.
func (t *task) finish(waitErr error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = time.Now()
	t.exitCode = 0
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &ee):
		t.exitCode = ee.ExitCode()
		if t.exitCode == -1 {
			t.runErr = ee // "signal: killed"
		}
	default:
		t.exitCode = -1
		t.runErr = waitErr
	}
	close(t.done)
}

// kill ends the task's process group for reason; the first reason wins. It
// returns once the group got its signals (TERM, then KILL after the grace).
func (t *task) kill(reason endReason) {
	t.mu.Lock()
	exited := t.exited
	if !exited && t.reason == endNone {
		t.reason = reason
	}
	t.mu.Unlock()
	if exited {
		return // it ended on its own; the wait goroutine cleans up the group
	}
	_ = proc.KillGroup(t.pid, t.grace)
}

// wait blocks until the task is done or ctx ends.
func (t *task) wait(ctx context.Context) error {
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// running reports whether the task has not finished yet.
func (t *task) running() bool {
	select {
	case <-t.done:
		return false
	default:
		return true
	}
}

// status is a snapshot of the task's state.
type status struct {
	Running  bool
	ExitCode *int
	Reason   endReason
	Err      error
	Duration time.Duration
}

func (t *task) status() status {
	run := t.running()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := status{Running: run, Reason: t.reason, Err: t.runErr}
	if run {
		s.Duration = time.Since(t.started)
	} else {
		code := t.exitCode
		s.ExitCode = &code
		s.Duration = t.ended.Sub(t.started)
	}
	return s
}
