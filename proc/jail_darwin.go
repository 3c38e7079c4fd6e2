package proc

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// killWait bounds how long Kill waits for killed processes to be gone.
const killWait = 5 * time.Second

var jailSeq atomic.Int64

// jailPlatform: macOS has neither cgroups nor a child subreaper; a jail's
// processes carry a tag in their environment and Kill ends every process
// of this user that has it (orphans are re-parented to launchd, so no
// ancestry is left to check; the tag is 64 random bits).
type jailPlatform struct {
	tag string
}

func newJailPlatform(parent *jailPlatform) jailPlatform {
	if parent != nil {
		return jailPlatform{tag: parent.tag + "/" + strconv.FormatInt(jailSeq.Add(1), 10)}
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return jailPlatform{tag: hex.EncodeToString(b[:])}
}

func (*jailPlatform) backend() string { return BackendTag }

func (p *jailPlatform) start(cmd *exec.Cmd) error {
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], jailEnv+"="+p.tag)
	return cmd.Start()
}

func (p *jailPlatform) close() error { return p.kill() }

// kill sends SIGKILL to every tagged process until none is left.
func (p *jailPlatform) kill() error {
	deadline := time.Now().Add(killWait)
	for {
		found := p.tagged()
		if len(found) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrKillTimeout
		}
		for _, pid := range found {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(time.Millisecond) // let the kills land before the next scan
	}
}

// tagged lists the live processes whose environment holds the tag.
func (p *jailPlatform) tagged() []int {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for i := range procs {
		pid := int(procs[i].Proc.P_pid)
		if pid <= 1 || pid == self || procs[i].Proc.P_stat == 5 { // SZOMB
			continue
		}
		args, err := unix.SysctlRaw("kern.procargs2", pid)
		if err != nil {
			continue // another user's, or gone
		}
		if procargsEnvHas(args, p.tag) {
			out = append(out, pid)
		}
	}
	return out
}
