//go:build zqprofile

package main

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiles writes the profiles `make bench` asks for: a CPU profile of the
// whole run (ZQAGENT_CPUPROFILE) and a heap profile taken when the exit is
// requested, before anything is closed (ZQAGENT_HEAPPROFILE). Both are off
// when their variable is unset; a profile that cannot be written is logged,
// never fatal.
//
// Only a build with -tags zqprofile has them (profile_off.go): linking
// runtime/pprof turns on the runtime's sampling of allocations (every
// 512 KiB allocated, a stack walk and a bucket), which costs an idle
// sidecar ~0.6 MiB of resident memory for a profiler nobody reads.
type profiles struct {
	log      *slog.Logger
	cpu      *os.File
	heapPath string
}

func startProfiles(log *slog.Logger) *profiles {
	p := &profiles{log: log, heapPath: os.Getenv("ZQAGENT_HEAPPROFILE")}
	path := os.Getenv("ZQAGENT_CPUPROFILE")
	if path == "" {
		return p
	}
	f, err := os.Create(path)
	if err != nil {
		log.Warn("cpu profile", "err", err)
		return p
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Warn("cpu profile", "err", err)
		f.Close()
		return p
	}
	p.cpu = f
	return p
}

// writeHeap writes the heap profile (live objects after a GC).
func (p *profiles) writeHeap() {
	if p.heapPath == "" {
		return
	}
	f, err := os.Create(p.heapPath)
	if err != nil {
		p.log.Warn("heap profile", "err", err)
		return
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		p.log.Warn("heap profile", "err", err)
	}
}

// stopCPU ends the CPU profile.
func (p *profiles) stopCPU() {
	if p.cpu == nil {
		return
	}
	pprof.StopCPUProfile()
	if err := p.cpu.Close(); err != nil {
		p.log.Warn("cpu profile", "err", err)
	}
}
