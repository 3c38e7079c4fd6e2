//go:build darwin

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

// detect checks, once per process, that sandbox-exec runs a profile.
func detect() Status {
	probeOnce.Do(func() { probeStatus = probeSandboxExec() })
	return probeStatus
}

func probeSandboxExec() Status {
	path, err := exec.LookPath("sandbox-exec")
	if err != nil {
		return Status{Kind: KindNone, Reason: "sandbox-exec not found (it ships with macOS in /usr/bin)"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The strictest profile we build: protected paths and no network.
	argv := wrapSandboxExec(nil, []string{"/private/tmp/zqagent-probe/.git"}, []hidden{{path: "/private/tmp/zqagent-probe/.ssh", dir: true}}, false, []string{"/usr/bin/true"})
	out, err := exec.CommandContext(ctx, path, argv[1:]...).CombinedOutput()
	if err != nil {
		return Status{Kind: KindNone, Reason: "sandbox-exec cannot apply a profile here: " + strings.TrimSpace(string(out)+" "+err.Error())}
	}
	return Status{Kind: KindSandboxExec, Enforced: true}
}
