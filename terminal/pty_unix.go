//go:build !windows

package terminal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

type unixPTY struct {
	f   *os.File // the PTY master; on Linux in Go's poller, so Close unblocks Read
	cmd *exec.Cmd
}

func startPTY(s spawnSpec) (ptyProcess, error) {
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	// pty.StartWithSize sets Setsid and Setctty: the shell leads a new
	// session and process group whose id is its pid.
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: s.Cols, Rows: s.Rows})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Path, err)
	}
	p := &unixPTY{cmd: cmd}
	if p.f, err = pollable(f); err != nil {
		// Without a master nobody can talk to the child: end it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, err
	}
	return p, nil
}

func (p *unixPTY) Read(b []byte) (int, error)  { return p.f.Read(b) }
func (p *unixPTY) Write(b []byte) (int, error) { return p.f.Write(b) }
func (p *unixPTY) Pid() int                    { return p.cmd.Process.Pid }
func (p *unixPTY) Close() error                { return p.f.Close() }

// Resize sets the window size; it goes through SyscallConn, because
// pty.Setsize would call File.Fd and put the master back in blocking mode.
func (p *unixPTY) Resize(cols, rows uint16) error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	if err := rc.Control(func(fd uintptr) {
		ierr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	}); err != nil {
		return err
	}
	return ierr
}

func (p *unixPTY) Wait() (int, error) {
	err := p.cmd.Wait()
	st := p.cmd.ProcessState
	if st == nil {
		return -1, err
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return st.ExitCode(), err
	}
	return st.ExitCode(), nil
}

// signalAll sends sig to the terminal's process group and to every other
// process of its session (job-control shells put jobs in groups of their
// own; sessionMembers finds them where the OS tells).
func (p *unixPTY) signalAll(sigs ...syscall.Signal) error {
	pid := p.Pid()
	members := sessionMembers(pid)
	var first error
	for _, sig := range sigs {
		if err := syscall.Kill(-pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) && first == nil {
			first = err
		}
		for _, m := range members {
			_ = syscall.Kill(m, sig) // best effort: it may be gone already
		}
	}
	return first
}

func (p *unixPTY) Terminate() error {
	return p.signalAll(syscall.SIGHUP, syscall.SIGCONT, syscall.SIGTERM)
}
func (p *unixPTY) KillAll() error { return p.signalAll(syscall.SIGKILL) }

func (p *unixPTY) Alive() bool { return sessionAlive(p.Pid()) }

// defaultShell is $SHELL, else bash, else sh.
func defaultShell() string {
	if sh := os.Getenv("SHELL"); sh != "" {
		if _, err := os.Stat(sh); err == nil {
			return sh
		}
	}
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash"
	}
	return "/bin/sh"
}

// shellArgs makes known shells start as login shells, the way terminal
// emulators do, so that the user's profile sets PATH and friends.
func shellArgs(shell string) []string {
	switch programName(shell) {
	case "bash", "zsh", "sh", "dash", "ksh", "mksh", "fish":
		return []string{"-l"}
	}
	return nil
}
