//go:build windows

package proc

import (
	"errors"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// jobs holds the job object of every command Attach put in one, by pid.
var (
	jobsMu sync.Mutex
	jobs   = map[int]windows.Handle{} // guarded by jobsMu
)

// SetGroup starts cmd in a new process group (CREATE_NEW_PROCESS_GROUP) so
// that console control events sent to the parent do not reach it. Call it
// before cmd.Start, and Attach after; it keeps the other fields of an
// existing SysProcAttr.
func SetGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
}

// Attach puts a started cmd in a job object that kills every process of the
// job when it is terminated or its handle closed; processes the command
// starts later join the job. KillGroup and ReleaseGroup then act on the job,
// which is immune to pid reuse. Without Attach they fall back to
// `taskkill /T /F`.
func Attach(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return ErrBadPID
	}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return err
	}
	ph, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		windows.CloseHandle(job)
		return err
	}
	defer windows.CloseHandle(ph)
	if err := windows.AssignProcessToJobObject(job, ph); err != nil {
		windows.CloseHandle(job)
		return err
	}
	jobsMu.Lock()
	jobs[cmd.Process.Pid] = job
	jobsMu.Unlock()
	return nil
}

// KillGroup ends the process tree of pid: the job object Attach made, else
// `taskkill /T /F` (which misses descendants whose parent already exited).
// Windows has no TERM for console programs, so grace only bounds how long
// taskkill may take.
func KillGroup(pid int, grace time.Duration) error {
	if pid <= 0 {
		return ErrBadPID
	}
	jobsMu.Lock()
	job, ok := jobs[pid]
	jobsMu.Unlock()
	if ok {
		return windows.TerminateJobObject(job, 1)
	}
	if grace < 5*time.Second {
		grace = 5 * time.Second
	}
	cmd := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid))
	cmd.SysProcAttr = &syscall.SysProcAttr{HideWindow: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) && !GroupAlive(pid) {
			return nil // the process was already gone
		}
		return err
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
		return ErrKillTimeout
	}
}

// ReleaseGroup is called once the command was reaped (cmd.Wait returned):
// it closes the job object, which kills whatever the command left running.
// Without a job it does nothing: the pid may already name another process.
func ReleaseGroup(pid int, grace time.Duration) error {
	jobsMu.Lock()
	job, ok := jobs[pid]
	delete(jobs, pid)
	jobsMu.Unlock()
	if !ok {
		return nil
	}
	return windows.CloseHandle(job)
}

// GroupAlive reports whether the process pid still runs.
func GroupAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	const stillActive = 259
	return code == stillActive
}
