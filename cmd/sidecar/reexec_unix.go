//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// handoverFDEnv names the inherited pipe on which a re-executed sidecar
// reads the secret variables its first image removed from the environment.
// It is internal to the re-exec.
const handoverFDEnv = "ZQAGENT_HANDOVER_FD"

// handover is what the first image writes on the pipe.
type handover struct {
	Env map[string]string `json:"env"`
}

// handedOverSecrets returns the secret variables handed over by the image
// that re-executed this one; ok is false when this is the first image.
func handedOverSecrets() (env map[string]string, ok bool, err error) {
	v, set := os.LookupEnv(handoverFDEnv)
	if !set {
		return nil, false, nil
	}
	os.Unsetenv(handoverFDEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, false, fmt.Errorf("%s=%q is not an inherited descriptor", handoverFDEnv, v)
	}
	f := os.NewFile(uintptr(fd), "handover")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, secretsLineMax+1))
	if err != nil {
		return nil, false, fmt.Errorf("read the secrets handed over by the re-exec: %w", err)
	}
	var h handover
	if len(b) > secretsLineMax || json.Unmarshal(b, &h) != nil {
		return nil, false, fmt.Errorf("the secrets handed over by the re-exec are malformed (%d bytes)", len(b))
	}
	if h.Env == nil {
		h.Env = map[string]string{}
	}
	return h.Env, true, nil
}

// reexecWithout re-executes the sidecar (same pid, arguments, stdio) with
// the variables of secret removed from its environment, and hands them
// over on a pipe: the new image's /proc/<pid>/environ holds no secret. It
// returns only when it could not; the secrets then stay in this image's
// initial environment, and the caller still removes them from the live one.
func reexecWithout(log *slog.Logger, secret map[string]string) {
	err := reexec(secret)
	log.Warn("could not re-execute without the secret environment variables; pass them on stdin (--secrets-stdin) instead", "err", err)
}

func reexec(secret map[string]string) error {
	exe := "/proc/self/exe" // the running binary, even when its path was replaced
	if runtime.GOOS != "linux" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	b, err := json.Marshal(handover{Env: secret})
	if err != nil {
		return err
	}
	r, w, err := os.Pipe() // both close-on-exec
	if err != nil {
		return err
	}
	defer r.Close()
	// The pipe buffer holds the hand-over until the new image reads it; a
	// write that does not fit at once would block forever.
	if err := w.SetWriteDeadline(time.Now().Add(time.Second)); err != nil {
		w.Close()
		return err
	}
	_, err = w.Write(b)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("hand-over pipe: %w", err)
	}
	fd := int(r.Fd())
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil { // inherit the read end
		return err
	}
	env := []string{handoverFDEnv + "=" + strconv.Itoa(fd)}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, isSecret := secret[name]; !isSecret && name != handoverFDEnv {
			env = append(env, kv)
		}
	}
	return syscall.Exec(exe, os.Args, env)
}
