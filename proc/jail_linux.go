package proc

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// killWait bounds how long Kill waits for killed processes to be gone.
const killWait = 5 * time.Second

var (
	jailSeq atomic.Int64

	cgroupOnce sync.Once
	cgroupRoot string // written once by cgroupOnce; the sidecar's own cgroup v2 dir, "" = none

	staleOnce sync.Once

	cloneOnce sync.Once
	cloneErr  error // written once by cloneOnce; why a child cannot be born in a cgroup here

	subreaperOnce sync.Once
	subreaperErr  error // written once by subreaperOnce
)

// forceSubreaper makes new jails skip cgroups (tests of the fallback).
var forceSubreaper atomic.Bool

// jailPlatform is the Linux state of a Jail: a cgroup dir, or a tag.
type jailPlatform struct {
	cg     string // the jail's cgroup dir; "" under the subreaper backend
	shared bool   // cg is the parent's (a sub-cgroup could not be made): kill and close leave it alone
	tag    string // the subreaper tag; "" under cgroups

	mu    sync.Mutex
	owned map[int]bool // guarded by mu; direct children exec.Cmd.Wait reaps (subreaper)
}

func newJailPlatform(parent *jailPlatform) jailPlatform {
	n := strconv.FormatInt(jailSeq.Add(1), 10)
	if parent == nil {
		if root := ownCgroup(); root != "" && !forceSubreaper.Load() {
			staleOnce.Do(func() { removeStale(root) })
			dir := filepath.Join(root, "zqagent-"+strconv.Itoa(os.Getpid())+"-"+n)
			if err := os.Mkdir(dir, 0o755); err == nil {
				cloneOnce.Do(func() { cloneErr = probeCloneInto(dir) })
				if cloneErr == nil {
					return jailPlatform{cg: dir}
				}
				_ = unix.Rmdir(dir)
			}
		}
		subreaperOnce.Do(func() { subreaperErr = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
		var b [8]byte
		_, _ = rand.Read(b[:])
		return jailPlatform{tag: hex.EncodeToString(b[:]), owned: map[int]bool{}}
	}
	if parent.cg != "" {
		dir := filepath.Join(parent.cg, "t"+n)
		if err := os.Mkdir(dir, 0o755); err == nil {
			return jailPlatform{cg: dir}
		}
		return jailPlatform{cg: parent.cg, shared: true}
	}
	return jailPlatform{tag: parent.tag + "/" + n, owned: map[int]bool{}}
}

func (p *jailPlatform) backend() string {
	switch {
	case p.cg != "":
		return BackendCgroup
	case subreaperErr == nil:
		return BackendSubreaper
	}
	return BackendGroup
}

// ownCgroup finds the sidecar's cgroup v2 directory, once.
func ownCgroup() string {
	cgroupOnce.Do(func() { cgroupRoot = findOwnCgroup() })
	return cgroupRoot
}

func findOwnCgroup() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var rel string
	for line := range strings.SplitSeq(string(b), "\n") {
		if r, ok := strings.CutPrefix(line, "0::"); ok {
			rel = r
		}
	}
	if rel == "" {
		return ""
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint options ... - fstype source superoptions
		fields := strings.Fields(sc.Text())
		for i, fd := range fields {
			if fd == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 && fields[3] == "/" {
				dir := filepath.Join(fields[4], rel)
				if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil {
					return dir
				}
			}
		}
	}
	return ""
}

// probeCloneInto starts a trivial child in the cgroup dir the way start
// does: clone3(CLONE_INTO_CGROUP) needs Linux 5.7, and some seccomp
// profiles refuse clone3. A failed Start cannot be retried, so the check
// is made once, up front.
func probeCloneInto(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	cmd := exec.Command("/bin/sh", "-c", ":")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	return cmd.Run()
}

func (p *jailPlatform) start(cmd *exec.Cmd) error {
	if p.cg != "" {
		fd, err := unix.Open(p.cg, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return cmd.Start() // the cgroup went away: the group still holds it
		}
		defer unix.Close(fd)
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		// clone3(CLONE_INTO_CGROUP): the child is born in the cgroup, so
		// not even its first fork can be outside.
		cmd.SysProcAttr.UseCgroupFD = true
		cmd.SysProcAttr.CgroupFD = fd
		return cmd.Start()
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], jailEnv+"="+p.tag)
	if err := cmd.Start(); err != nil {
		return err
	}
	p.mu.Lock()
	p.owned[cmd.Process.Pid] = true
	p.mu.Unlock()
	return nil
}

func (p *jailPlatform) kill() error {
	if p.shared {
		return nil
	}
	if p.cg != "" {
		return killCgroup(p.cg)
	}
	return p.sweep()
}

func (p *jailPlatform) close() error {
	err := p.kill()
	if p.cg != "" && !p.shared {
		if rerr := removeCgroup(p.cg); err == nil {
			err = rerr
		}
	}
	return err
}

// removeStale ends the jails a sidecar killed with SIGKILL left in root:
// "zqagent-<pid>-<n>" cgroups whose sidecar pid no longer runs. A pid that
// runs again (reused) is left alone: better a leftover than a wrong kill.
func removeStale(root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "zqagent-")
		pidStr, _, ok2 := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || !ok2 || err != nil || !e.IsDir() || pid == os.Getpid() {
			continue
		}
		if _, _, alive := procStat(pid); alive {
			continue
		}
		dir := filepath.Join(root, e.Name())
		_ = killCgroup(dir)
		_ = removeCgroup(dir)
	}
}

// killCgroup kills every process of the cgroup subtree dir and waits until
// it is empty.
func killCgroup(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(dir); serr != nil {
				return nil // the cgroup is gone already
			}
			killCgroupProcs(dir) // a kernel before 5.14: no cgroup.kill
		} else {
			return err
		}
	}
	deadline := time.Now().Add(killWait)
	for wait := time.Millisecond; cgroupPopulated(dir); wait = min(2*wait, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			return ErrKillTimeout
		}
		killCgroupProcs(dir)
		time.Sleep(wait)
	}
	return nil
}

// killCgroupProcs sends SIGKILL to every process listed in the subtree.
func killCgroupProcs(dir string) {
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for f := range strings.FieldsSeq(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 && pid != os.Getpid() {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		return nil
	})
}

// cgroupPopulated reads "populated" from cgroup.events (it counts the
// whole subtree).
func cgroupPopulated(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return strings.TrimSpace(v) != "0"
		}
	}
	return false
}

// removeCgroup removes dir and the cgroups below it, deepest first.
func removeCgroup(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	for _, e := range ents {
		if e.IsDir() {
			_ = removeCgroup(filepath.Join(dir, e.Name()))
		}
	}
	if err := unix.Rmdir(dir); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}

// sweep kills every descendant of the sidecar tagged with p.tag (or a
// sub-jail's tag under it), until none is left, and reaps those that were
// re-parented to the sidecar.
//
// One scan that finds nothing is not proof: a tagged process that forks
// and exits while /proc is being read leaves a child the listing missed,
// and one in the middle of an exec has no environment to read yet. So the
// sweep ends only after two clean scans in a row (the second lists what
// was born during the first), and a scan that met a descendant mid-exec is
// not clean.
func (p *jailPlatform) sweep() error {
	self := os.Getpid()
	deadline := time.Now().Add(killWait)
	var killed []int
	defer func() {
		// Parents killed in the same sweep re-parented their children to
		// the sidecar: reap every zombie that is now ours.
		for _, pid := range killed {
			p.reap(self, pid, deadline)
		}
	}()
	clean := 0
	for wait := time.Millisecond; ; {
		found, pending := p.tagged(self)
		switch {
		case len(found) == 0 && !pending:
			if clean++; clean == 2 {
				return nil
			}
			continue
		case time.Now().After(deadline):
			return ErrKillTimeout
		}
		clean = 0
		for _, pid := range found {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		for _, pid := range found {
			p.reap(self, pid, deadline)
		}
		killed = append(killed, found...)
		if len(found) == 0 { // only execs under way: give them time to finish
			time.Sleep(wait)
			wait = min(2*wait, 20*time.Millisecond)
		}
	}
}

// reap waits until pid is dead, and reaps it when it is the sidecar's
// child that exec.Cmd.Wait does not own (re-parented by the subreaper).
func (p *jailPlatform) reap(self, pid int, deadline time.Time) {
	p.mu.Lock()
	owned := p.owned[pid]
	p.mu.Unlock()
	for wait := time.Millisecond; ; wait = min(2*wait, 20*time.Millisecond) {
		state, ppid, ok := procStat(pid)
		if !ok {
			return
		}
		if state == "Z" || state == "X" {
			if ppid == self && !owned {
				_, _ = unix.Wait4(pid, nil, unix.WNOHANG, nil)
			}
			return
		}
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(wait)
	}
}

// tagged lists the live descendants of self whose environment carries the
// jail's tag. pending reports a descendant whose environment cannot be
// read yet (environ says why).
func (p *jailPlatform) tagged(self int) (out []int, pending bool) {
	names, err := readDirNames("/proc")
	if err != nil {
		return nil, false
	}
	exact := []byte(jailEnv + "=" + p.tag + "\x00")
	prefix := []byte(jailEnv + "=" + p.tag + "/")
	buf := make([]byte, 64<<10)
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self {
			continue
		}
		env, unknown := environ(pid, &buf)
		if unknown {
			pending = pending || descendantOf(pid, self)
			continue
		}
		env = append(env, 0)
		if !bytes.Contains(env, exact) && !bytes.Contains(env, prefix) {
			continue
		}
		if descendantOf(pid, self) {
			out = append(out, pid)
		}
	}
	return out, pending
}

// environ reads a process's environment into buf (grown as needed).
// pending reports that it cannot be known yet: the process is in the middle
// of an exec (between the kernel swapping in the new image and laying out
// its stack, /proc/<pid>/environ reads empty and stat shows env_end as 0),
// or the read met the old image after the exec had released it.
func environ(pid int, buf *[]byte) (env []byte, pending bool) {
	env, err := readOnce("/proc/"+strconv.Itoa(pid)+"/environ", buf)
	if err != nil || len(env) > 0 {
		return env, false // a process gone, exiting, or not ours to read has no tag
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	// Fields from the state (field 3 of proc_pid_stat(5)) on; env_start
	// and env_end are fields 50 and 51.
	f := statFields(b)
	const envStart, envEnd = 50 - 3, 51 - 3
	if len(f) <= envEnd || string(f[0]) == "Z" || string(f[0]) == "X" {
		return nil, false
	}
	start, _ := strconv.ParseUint(string(f[envStart]), 10, 64)
	end, _ := strconv.ParseUint(string(f[envEnd]), 10, 64)
	return nil, end == 0 || end > start // else an empty environment
}

// readOnce reads a /proc file in a single read(2): /proc/<pid>/environ
// holds on to the process's image only for the length of one read, so a
// process that execs between two reads would leave the environment cut
// short, its tag (appended last) missing.
func readOnce(path string, buf *[]byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Pread(fd, *buf, 0)
		if err != nil {
			return nil, err
		}
		if n < len(*buf) {
			return (*buf)[:n], nil
		}
		*buf = make([]byte, 4*len(*buf))
	}
}

func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// descendantOf walks pid's parents up to ancestor.
func descendantOf(pid, ancestor int) bool {
	for range 128 {
		_, ppid, ok := procStat(pid)
		if !ok || ppid <= 1 {
			return ppid == ancestor && ok
		}
		if ppid == ancestor {
			return true
		}
		pid = ppid
	}
	return false
}

// procStat reads a process's state and parent from /proc.
func procStat(pid int) (state string, ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	f := statFields(b)
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, _ = strconv.Atoi(string(f[1]))
	return string(f[0]), ppid, true
}

// statFields splits /proc/<pid>/stat after the command name (which may hold
// spaces and parentheses): the state first, then the parent, and so on.
func statFields(b []byte) [][]byte {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}
