package proc

import (
	"errors"
	"os/exec"
	"time"
)

// Errors of the process-group helpers.
var (
	// ErrBadPID: KillGroup was given a pid <= 0 (which would signal the
	// caller's own group or every process).
	ErrBadPID = errors.New("invalid process id")
	// ErrKillTimeout: the tree kill did not finish in time (Windows).
	ErrKillTimeout = errors.New("process tree kill timed out")
	// ErrJailClosed: Jail.Start after Close.
	ErrJailClosed = errors.New("process jail closed")
)

// GroupCancel returns a function for exec.Cmd.Cancel that kills cmd's whole
// process group (see KillGroup) instead of only the direct child. The full
// pattern:
//
//	cmd := exec.CommandContext(ctx, name, args...)
//	proc.SetGroup(cmd)
//	cmd.Cancel = proc.GroupCancel(cmd, 2*time.Second)
//	if err := cmd.Start(); err != nil { ... }
//	_ = proc.Attach(cmd) // Windows: job object; Unix: no-op
//	err := cmd.Wait()
//	_ = proc.ReleaseGroup(cmd.Process.Pid, 2*time.Second) // end leftovers
func GroupCancel(cmd *exec.Cmd, grace time.Duration) func() error {
	return func() error {
		if cmd.Process == nil {
			return nil
		}
		return KillGroup(cmd.Process.Pid, grace)
	}
}
