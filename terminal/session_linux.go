package terminal

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// sessionMembers lists the live processes of session sid (its leader's pid)
// from /proc, zombies excluded.
func sessionMembers(sid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, state, ok := procSession(pid); ok && s == sid && state != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// sessionAlive reports whether any process of session sid is left (zombies
// do not count: they are dead, waiting for a parent to reap them).
func sessionAlive(sid int) bool { return len(sessionMembers(sid)) > 0 }

// procSession reads the session id and state of pid from /proc/pid/stat.
func procSession(pid int) (sid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp session ...; comm may hold spaces and ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 || len(f[0]) != 1 {
		return 0, 0, false
	}
	sid, err = strconv.Atoi(f[3])
	if err != nil {
		return 0, 0, false
	}
	return sid, f[0][0], true
}

// Foreground names the foreground process of the terminal from its command
// line in /proc.
func (p *unixPTY) Foreground() string {
	var pgrp int
	var ierr error
	rc, err := p.f.SyscallConn()
	if err != nil {
		return ""
	}
	if err := rc.Control(func(fd uintptr) { pgrp, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }); err != nil || ierr != nil || pgrp <= 0 {
		return ""
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pgrp) + "/cmdline")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(string(bytes.TrimRight(b, "\x00")), "\x00", " "))
}
