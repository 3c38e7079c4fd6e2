// Package git owns the read-only git tools: git_log, git_status and
// git_diff.
//
// They run the git binary in the workspace with an argv list (never a
// shell). Nothing the model supplies can become an option: refs and paths
// starting with '-' are refused, refs follow --end-of-options and paths
// follow "--" under --literal-pathspecs. Settings that make git run other
// programs are switched off for every call: pagers, external diff and
// textconv drivers, fsmonitor hooks, signature checks, and the clean/smudge
// filters the repository configures; the system config is skipped and GIT_*
// variables of the sidecar's environment are dropped.
//
// Concurrency: the tools keep no state; calls may run concurrently. Each call
// runs one or two git processes that end with the call (ctx cancels them).
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/confine"
	"github.com/zqagent/sidecar/tools/proc"
)

// Limits of one git call.
const (
	callTimeout    = 30 * time.Second
	maxOutputBytes = 64 << 10
	maxStderrBytes = 4 << 10
)

// runner runs git in one workspace.
type runner struct {
	ws  *confine.Workspace
	bin string // path of git; "" when not installed
}

func newRunner(ws *confine.Workspace) *runner {
	bin, _ := exec.LookPath("git")
	return &runner{ws: ws, bin: bin}
}

// hardening are the global options of every call.
var hardening = []string{
	"--no-pager",
	"--literal-pathspecs",
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "core.untrackedCache=false",
	"-c", "log.showSignature=false",
	"-c", "color.ui=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
}

// env is the sidecar's environment without secrets and without GIT_*
// variables (GIT_DIR, GIT_EXTERNAL_DIFF, GIT_CONFIG_PARAMETERS, ...), plus
// settings that keep git quiet and non-interactive.
func env() []string {
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "GIT_") {
			base = append(base, kv)
		}
	}
	return proc.Env(base,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_ASKPASS=",
		"SSH_ASKPASS=",
		"LC_ALL=C",
	)
}

// capWriter keeps up to max bytes and then fails, which ends git with
// SIGPIPE instead of letting it produce output nobody reads.
type capWriter struct {
	buf    bytes.Buffer
	max    int
	capped bool
}

var errCapped = errors.New("output cap reached")

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); len(p) > room {
		w.buf.Write(p[:max(room, 0)])
		w.capped = true
		return max(room, 0), errCapped
	}
	return w.buf.Write(p)
}

// output is what one git call produced.
type output struct {
	stdout []byte
	capped bool // stdout was cut at the cap
}

// git runs `git <hardening> <extra> args...` in the workspace root.
func (r *runner) git(ctx context.Context, args ...string) (output, error) {
	if r.bin == "" {
		return output{}, fmt.Errorf("git is not installed: %w", tools.ErrUnavailable)
	}
	filters, err := r.filterOverrides(ctx)
	if err != nil {
		return output{}, err
	}
	argv := append(append(append([]string{}, hardening...), filters...), args...)
	return r.exec(ctx, maxOutputBytes, argv)
}

func (r *runner) exec(ctx context.Context, maxOut int, argv []string) (output, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, argv...)
	cmd.Dir = r.ws.Root()
	cmd.Env = env()
	proc.SetGroup(cmd)
	cmd.Cancel = proc.GroupCancel(cmd, time.Second)
	stdout := &capWriter{max: maxOut}
	stderr := &capWriter{max: maxStderrBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	out := output{stdout: stdout.buf.Bytes(), capped: stdout.capped}
	if err == nil || stdout.capped {
		return out, nil
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("git %s: %w", firstCommand(argv), ctx.Err())
	}
	msg := strings.TrimSpace(stderr.buf.String())
	if strings.Contains(strings.ToLower(msg), "not a git repository") {
		return out, fmt.Errorf("%w (%s)", ErrNotRepo, r.ws.Root())
	}
	if msg == "" {
		msg = err.Error()
	}
	return out, fmt.Errorf("%w: git %s: %s", ErrGit, firstCommand(argv), msg)
}

// firstCommand names the git subcommand of argv (for messages).
func firstCommand(argv []string) string {
	for i := 0; i < len(argv); i++ {
		switch {
		case argv[i] == "-c":
			i++
		case !strings.HasPrefix(argv[i], "-"):
			return argv[i]
		}
	}
	return ""
}

// filterOverrides blanks every clean, smudge and process filter the
// repository's config defines: `git diff` and `git status` would otherwise
// run them on work tree files.
func (r *runner) filterOverrides(ctx context.Context) ([]string, error) {
	out, err := r.exec(ctx, maxOutputBytes, append(append([]string{}, hardening...),
		"config", "-z", "--name-only", "--get-regexp", `^filter\..*\.(clean|smudge|process)$`))
	if err != nil {
		if errors.Is(err, ErrGit) {
			return nil, nil // exit status 1: no such keys
		}
		return nil, err
	}
	var args []string
	for _, key := range strings.Split(string(out.stdout), "\x00") {
		if key = strings.TrimSpace(key); key != "" {
			args = append(args, "-c", key+"=")
		}
	}
	return args, nil
}

// checkRef refuses a ref that could be read as an option or that holds
// control characters.
func checkRef(field, ref string) error {
	switch {
	case strings.HasPrefix(ref, "-"):
		return fmt.Errorf("%w: %s %q starts with '-'", ErrUnsafeArg, field, ref)
	case strings.ContainsFunc(ref, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%w: %s %q holds control characters", ErrUnsafeArg, field, ref)
	case len(ref) > 256:
		return fmt.Errorf("%w: %s is too long", ErrUnsafeArg, field)
	}
	return nil
}

// pathspec checks a model-supplied path and returns it as an absolute,
// lexically clean path inside the workspace ("" for none).
func (r *runner) pathspec(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	if err := checkRef("path", p); err != nil {
		return "", err
	}
	if _, err := r.ws.Resolve(p, false); err != nil {
		return "", err
	}
	return r.ws.Abs(p), nil
}

// refused wraps an argument error for the model.
func refused(err error) error {
	if errors.Is(err, ErrUnsafeArg) {
		return fmt.Errorf("%w: %w", tools.ErrInvalidArgs, err)
	}
	return err
}
