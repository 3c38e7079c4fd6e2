//go:build !linux && !darwin

package proc

import "os/exec"

// jailPlatform: outside Linux a jail holds no more than the process group
// (and, on Windows, the job object Attach makes).
type jailPlatform struct{}

func newJailPlatform(*jailPlatform) jailPlatform { return jailPlatform{} }

func (*jailPlatform) backend() string           { return BackendGroup }
func (*jailPlatform) start(cmd *exec.Cmd) error { return cmd.Start() }
func (*jailPlatform) kill() error               { return nil }
func (*jailPlatform) close() error              { return nil }
