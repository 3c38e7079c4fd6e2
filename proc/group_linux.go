package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// groupHasLive scans /proc for a member of process group pgid that is not a
// zombie. When /proc cannot be read it answers true (the caller already knows
// the group has members).
func groupHasLive(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	want := []byte(strconv.Itoa(pgid))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) >= 3 && bytes.Equal(f[2], want) && !bytes.Equal(f[0], []byte("Z")) && !bytes.Equal(f[0], []byte("X")) {
			return true
		}
	}
	return false
}

// sigtermBit is SIGTERM's bit in /proc/<pid>/status's signal masks.
const sigtermBit = 1 << (syscall.SIGTERM - 1)

// killDeafInits sends SIGKILL to the live members of process group pgid
// that are the first process (pid 1) of a pid namespace and have no
// SIGTERM handler: the kernel drops a SIGTERM sent to such a process from
// outside its namespace, so waiting a grace for it waits for nothing.
// Bubblewrap's init is one while the sandbox is set up: a command stopped
// in its first milliseconds leaves it in the group. Killing it ends its
// namespace, as the KILL after the grace would.
func killDeafInits(pgid int) {
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return
	}
	want := []byte(strconv.Itoa(pgid))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || !bytes.Equal(f[2], want) || bytes.Equal(f[0], []byte("Z")) || bytes.Equal(f[0], []byte("X")) {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil && deafInit(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// deafInit reports whether pid is a pid namespace's pid 1 (its NSpid ends
// in 1, after its pid in our namespace) that neither catches SIGTERM.
func deafInit(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	var nsInit, catches bool
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch string(k) {
		case "NSpid":
			ids := bytes.Fields(v)
			nsInit = len(ids) > 1 && bytes.Equal(ids[len(ids)-1], []byte("1"))
		case "SigCgt":
			m, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 16, 64)
			catches = err != nil || m&sigtermBit != 0
		}
	}
	return nsInit && !catches
}
