//go:build !windows

package proc

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// SetGroup makes cmd start as the leader of a new process group (Setpgid),
// so that KillGroup(cmd.Process.Pid, ...) reaches every process it spawns,
// grandchildren included, unless one of them deliberately leaves the group
// (setsid, setpgid). Call it before cmd.Start; it keeps the other fields of
// an existing SysProcAttr.
func SetGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
}

// KillGroup ends the process group led by pid: SIGTERM to the whole group,
// then, if any member is still there after grace, SIGKILL. A member that
// cannot get the TERM — on Linux, a pid namespace's init without a TERM
// handler, such as bubblewrap's while a sandbox starts — gets the KILL at
// once. It returns once
// the group is gone or the KILL was sent. A group that no longer exists is
// not an error. grace <= 0 sends SIGKILL at once.
//
// The caller should reap its own child concurrently (cmd.Wait in a
// goroutine): outside Linux an unreaped zombie still counts as a member, and
// the full grace passes before the KILL.
func KillGroup(pid int, grace time.Duration) error {
	if pid <= 0 {
		return ErrBadPID
	}
	if grace <= 0 {
		return signalGroup(pid, syscall.SIGKILL)
	}
	if err := signalGroup(pid, syscall.SIGTERM); err != nil {
		return err
	}
	// A stopped process never handles TERM; wake it so the TERM lands.
	_ = syscall.Kill(-pid, syscall.SIGCONT)
	deadline := time.Now().Add(grace)
	for wait := time.Millisecond; time.Now().Before(deadline); wait = min(2*wait, 50*time.Millisecond) {
		if !GroupAlive(pid) {
			return nil
		}
		// A pid namespace's init that cannot get the TERM is not waited for.
		killDeafInits(pid)
		time.Sleep(wait)
	}
	return signalGroup(pid, syscall.SIGKILL)
}

// Attach does nothing on Unix: SetGroup already made the group. It exists
// for Windows, where a started command is put in a job object.
func Attach(*exec.Cmd) error { return nil }

// ReleaseGroup is called once the command was reaped (cmd.Wait returned):
// it ends whatever the command left running in its group (background jobs,
// daemons that did not leave the group), like KillGroup. The group id stays
// reserved while any member lives, so this never reaches an unrelated
// process.
func ReleaseGroup(pid int, grace time.Duration) error {
	return KillGroup(pid, grace)
}

// GroupAlive reports whether any process is still running in the process
// group pid. On Linux zombies (exited, waiting to be reaped by a parent that
// may never do it, such as a container's init) do not count; elsewhere they
// do.
func GroupAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(-pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return groupHasLive(pid)
}

func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
