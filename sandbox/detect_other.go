//go:build !linux && !darwin && !windows

package sandbox

import "runtime"

// detect: no sandbox is implemented for this system.
func detect() Status {
	return Status{Kind: KindNone, Reason: "no OS sandbox is implemented for " + runtime.GOOS}
}
