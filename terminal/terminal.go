package terminal

import (
	"runtime"
	"sync"
	"time"
)

// drainWait bounds how long output may keep coming after the shell exited
// (from processes it left holding the terminal) before they are told to go.
const drainWait = 500 * time.Millisecond

// terminal is one PTY and its scrollback. Its goroutines (readLoop,
// waitLoop, writeLoop, killLoop, one per subscription) are tracked by the Manager's WaitGroup.
type terminal struct {
	m           *Manager
	id          string
	projectID   string
	name        string
	cwd         string // absolute, symlinks resolved
	projectRoot string // the project directory, symlinks resolved
	command     string // what was started, for display
	createdAt   time.Time
	proc        ptyProcess
	pid         int

	readerDone chan struct{} // closed when the reader goroutine ends
	done       chan struct{} // closed when finished: exited and all output is in the ring
	inWake     chan struct{} // cap 1: input was queued
	killCh     chan struct{} // closed by kill
	killOnce   sync.Once

	mu       sync.Mutex // guards the fields below
	ring     *ring
	cols     uint16
	rows     uint16
	subs     map[*subscription]struct{}
	exited   bool // the shell (or command) exited
	exitCode int
	finished bool     // exited and the reader is done: Exit may be sent
	input    [][]byte // queued input, written by writeLoop
	inBytes  int      // bytes in input
	inErr    error    // set when the PTY refused input: later writes fail
}

// info snapshots the terminal.
func (t *terminal) info() Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := Info{
		ID: t.id, ProjectID: t.projectID, Name: t.name, Cwd: t.cwd, Command: t.command,
		Cols: t.cols, Rows: t.rows, Alive: !t.finished, Pid: t.pid,
		CreatedAt: t.createdAt, LastSeq: t.ring.end,
	}
	// Like the Exit notification, the exit shows once all output is in.
	if t.finished {
		code := t.exitCode
		in.ExitCode = &code
	}
	return in
}

// wakeLocked nudges every subscription; it never blocks. It reports
// whether a subscription lags by more than half of what it may.
func (t *terminal) wakeLocked() (lagging bool) {
	half := int64(t.m.opts.SubscriberBuffer / 2)
	for s := range t.subs {
		select {
		case s.wake <- struct{}{}:
		default:
		}
		lagging = lagging || t.ring.end-s.cursor > half
	}
	return lagging
}

// readLoop copies PTY output into the ring until the PTY fails or closes.
func (t *terminal) readLoop() {
	defer close(t.readerDone)
	buf := make([]byte, readBuf)
	for {
		n, err := t.proc.Read(buf)
		if n > 0 {
			t.mu.Lock()
			t.ring.write(buf[:n])
			lagging := t.wakeLocked()
			t.mu.Unlock()
			if lagging {
				// Fairness, not back-pressure: let the subscription
				// goroutines run before reading on.
				runtime.Gosched()
			}
		}
		if err != nil {
			return
		}
	}
}

// waitLoop reaps the shell, lets the output drain, makes sure nothing of the
// terminal is left running, closes the PTY and marks the terminal finished.
func (t *terminal) waitLoop() {
	code, err := t.proc.Wait()
	if err != nil {
		t.m.log.Warn("terminal wait", "terminal", t.id, "err", err)
	}
	t.mu.Lock()
	t.exited, t.exitCode = true, code
	t.mu.Unlock()

	grace := t.m.opts.KillGrace
	drain := time.NewTimer(min(grace, drainWait))
	select {
	case <-t.readerDone:
	case <-drain.C:
	}
	drain.Stop()
	if t.proc.Alive() {
		// Processes the shell left behind: ask, then force.
		_ = t.proc.Terminate()
		if !t.waitGone(grace) {
			_ = t.proc.KillAll()
		}
	}
	if err := t.proc.Close(); err != nil {
		t.m.log.Debug("terminal close", "terminal", t.id, "err", err)
	}
	<-t.readerDone

	t.mu.Lock()
	t.finished = true
	t.wakeLocked()
	t.mu.Unlock()
	close(t.done)
	t.m.log.Info("terminal exited", "terminal", t.id, "project", t.projectID, "exitCode", code)
}

// waitGone waits up to d for every process of the terminal to be gone and
// reports whether they are.
func (t *terminal) waitGone(d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for t.proc.Alive() {
		select {
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

// kill asks killLoop to terminate the terminal's processes; it returns at
// once.
func (t *terminal) kill() { t.killOnce.Do(func() { close(t.killCh) }) }

// killLoop waits for kill, then sends SIGHUP+SIGTERM and, unless everything
// is gone within the grace period, SIGKILL.
func (t *terminal) killLoop() {
	select {
	case <-t.killCh:
	case <-t.done: // reaped and cleaned up: its pid may belong to someone else now
		return
	}
	_ = t.proc.Terminate()
	grace := time.NewTimer(t.m.opts.KillGrace)
	defer grace.Stop()
	select {
	case <-t.done:
	case <-grace.C:
	}
	if t.proc.Alive() {
		_ = t.proc.KillAll()
	}
}

// queueInput adds data to the input queue without blocking.
func (t *terminal) queueInput(data []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.exited:
		return ErrExited
	case t.inErr != nil:
		return t.inErr
	case t.inBytes+len(data) > maxPendingInput:
		return ErrInputFull
	}
	t.input = append(t.input, append([]byte(nil), data...))
	t.inBytes += len(data)
	select {
	case t.inWake <- struct{}{}:
	default:
	}
	return nil
}

// writeLoop writes queued input to the PTY, in order, until the terminal is
// finished or the PTY refuses a write.
func (t *terminal) writeLoop() {
	for {
		select {
		case <-t.inWake:
		case <-t.done:
			return
		}
		for {
			t.mu.Lock()
			if len(t.input) == 0 {
				t.mu.Unlock()
				break
			}
			chunk := t.input[0]
			t.input[0] = nil
			t.input = t.input[1:]
			t.inBytes -= len(chunk)
			t.mu.Unlock()
			if _, err := t.proc.Write(chunk); err != nil {
				t.mu.Lock()
				t.inErr = ErrExited
				t.input, t.inBytes = nil, 0
				t.mu.Unlock()
				return
			}
		}
	}
}
