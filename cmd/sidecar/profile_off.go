//go:build !zqprofile

package main

import (
	"log/slog"
	"os"
)

// profiles is the release build's: no profiler is linked (profile.go). A
// profile asked for is refused with a warning, so that it is not silently
// missing.
type profiles struct{}

func startProfiles(log *slog.Logger) *profiles {
	for _, k := range []string{"ZQAGENT_CPUPROFILE", "ZQAGENT_HEAPPROFILE"} {
		if os.Getenv(k) != "" {
			log.Warn("this build has no profiler; build with -tags zqprofile (make bench does)", "var", k)
		}
	}
	return &profiles{}
}

func (*profiles) writeHeap() {}
func (*profiles) stopCPU()   {}
