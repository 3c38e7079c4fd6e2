//go:build linux

package sandbox

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"
)

var (
	probeOnce   sync.Once
	probeStatus Status // written once by probeOnce
)

// detect finds bwrap and checks, once per process, that it actually works:
// in containers user namespaces are often unavailable.
func detect() Status {
	probeOnce.Do(func() { probeStatus = probeBwrap() })
	return probeStatus
}

func probeBwrap() Status {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return Status{Kind: KindNone, Reason: "bubblewrap (bwrap) not found; apt-get install bubblewrap (or dnf install bubblewrap)"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The strictest command line we build: new pid and network namespaces.
	argv := wrapBwrap(nil, nil, nil, false, []string{"true"})
	out, err := exec.CommandContext(ctx, path, argv[1:]...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return Status{Kind: KindNone, Reason: "bubblewrap is installed but cannot create a sandbox here (user namespaces unavailable?): " + msg}
	}
	return Status{Kind: KindBwrap, Enforced: true}
}
