package proc

import (
	"os/exec"
	"sync"
)

// Backends of a Jail.
const (
	// BackendCgroup: a cgroup v2 subtree per jail, killed as a whole
	// (cgroup.kill); nothing started in it can leave it.
	BackendCgroup = "cgroup"
	// BackendSubreaper: the sidecar is a child subreaper, so processes that
	// leave their group and lose their parent (setsid, double fork) are
	// re-parented to it; the jail's processes carry a tag in their
	// environment and Kill ends every descendant of the sidecar that has
	// it. A process that clears its own environment escapes the tag, and one
	// that exits on its own before its jail closes stays a zombie of the
	// sidecar until the sidecar exits.
	BackendSubreaper = "subreaper"
	// BackendTag (macOS, which has neither): the jail's processes carry a
	// tag in their environment, and Kill ends every process of the user
	// that has it. A process that clears its own environment escapes.
	BackendTag = "tag"
	// BackendGroup: no more than the process group (others); Windows job
	// objects already hold a command's descendants.
	BackendGroup = "group"
)

// jailEnv names the environment variable that tags a jail's processes
// under the subreaper and tag backends.
const jailEnv = "ZQAGENT_JAIL"

// A Jail holds every process the commands started through it spawn,
// including ones that leave their process group (setsid, double fork), so
// that none outlives the jail. A session has one jail; each command runs in
// a sub-jail of it (Sub), killed when the command ends; closing the
// session's jail kills what is left.
//
// Concurrency: a Jail is safe for concurrent use.
type Jail struct {
	parent *Jail
	plat   jailPlatform // the backend's state

	mu     sync.Mutex
	closed bool // guarded by mu
}

// NewJail returns a new top-level jail, using the best backend this
// process can have (Backend says which).
func NewJail() *Jail {
	return &Jail{plat: newJailPlatform(nil)}
}

// Sub returns a jail inside j: killing j kills it too.
func (j *Jail) Sub() *Jail {
	return &Jail{parent: j, plat: newJailPlatform(&j.plat)}
}

// Backend names the mechanism that holds the jail's processes.
func (j *Jail) Backend() string { return j.plat.backend() }

// Start starts cmd inside the jail; use it in place of cmd.Start. A closed
// jail starts nothing.
func (j *Jail) Start(cmd *exec.Cmd) error {
	j.mu.Lock()
	defer j.mu.Unlock() // held across the start so that Close sees it
	if j.closed {
		return ErrJailClosed
	}
	return j.plat.start(cmd)
}

// Kill ends every process in the jail (SIGKILL) and waits until they are
// gone; the jail stays usable.
func (j *Jail) Kill() error { return j.plat.kill() }

// Close kills every process in the jail and releases it; later Starts fail.
func (j *Jail) Close() error {
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	return j.plat.close()
}
