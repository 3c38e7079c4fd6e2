// Package git owns the read-only git tools: git_log, git_status and
// git_diff.
//
// They run the git binary in the workspace with an argv list (never a
// shell). Nothing the model supplies can become an option: refs and paths
// starting with '-' are refused, refs follow --end-of-options and paths
// follow "--" under literal pathspecs. Every call runs with gitenv's inert
// environment: no program the repository configures runs (filters,
// fsmonitor, hooks, pager, external diff, textconv, signing programs,
// aliases, credential helpers), and the sidecar's GIT_* variables, system
// and global config are left out. The repository is the workspace's own
// .git, pinned with GIT_DIR and GIT_WORK_TREE: a workspace inside someone
// else's repository is not a repository (ErrNotRepo), and one whose .git,
// commondir or core.worktree points outside it, or whose git directory
// leads outside through a link or an alternates entry (gitenv.CheckLayout,
// checked before every call), is refused (ErrForeignRepo). A worktree's or
// an enclosing repository the user confirmed (RegisterConfirmedGitTools,
// gitenv.OpenConfirmed) is used instead; in an enclosing one every call is
// limited to the workspace folder (pathspec ".", diff --relative, status
// paths made relative, refs naming a path refused). Until confirmed, the
// error says how to enable git (ErrNotEnabled).
//
// Concurrency: the tools keep no state; calls may run concurrently. Each call
// runs two git processes (gitenv.Open's, then its own) that end with the
// call (ctx cancels them).
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/gitenv"
	"github.com/zqagent/sidecar/proc"
	"github.com/zqagent/sidecar/tools"
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
	// confirmed is the worktree's or enclosing repository the user
	// confirmed for the workspace; nil: the workspace's own .git only.
	confirmed *gitenv.Candidate
}

func newRunner(ws *confine.Workspace, confirmed *gitenv.Candidate) *runner {
	bin, _ := exec.LookPath("git")
	return &runner{ws: ws, bin: bin, confirmed: confirmed}
}

// scoped reports whether the tools run in a folder of a larger
// (enclosing) repository, where every call is limited to the folder.
func (r *runner) scoped() bool { return r.confirmed != nil && r.confirmed.Prefix() != "" }

// toolConfig are the settings of the git tools on top of gitenv's inert
// ones: plain output, and no index or cache writes from a read.
var toolConfig = []string{
	"core.untrackedCache=false",
	"color.ui=false",
}

// toolVars keep git quiet, non-interactive and literal about paths.
var toolVars = []string{
	"GIT_OPTIONAL_LOCKS=0",
	"GIT_LITERAL_PATHSPECS=1",
	"LC_ALL=C",
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

// git runs `git args...` in the workspace's own repository with gitenv's
// inert, pinned environment. A workspace without its own .git is not a
// repository (a parent's does not count); one whose .git, commondir,
// core.worktree, links or alternates lead outside is refused.
func (r *runner) git(ctx context.Context, args ...string) (output, error) {
	if r.bin == "" {
		return output{}, fmt.Errorf("git is not installed: %w", tools.ErrUnavailable)
	}
	var (
		repo gitenv.Repo
		err  error
	)
	if r.confirmed != nil {
		repo, err = gitenv.OpenConfirmed(ctx, r.bin, *r.confirmed)
	} else {
		repo, err = gitenv.Open(ctx, r.bin, r.ws.Root())
	}
	how := ""
	if errors.Is(err, gitenv.ErrUnconfirmed) || errors.Is(err, gitenv.ErrNoRepo) || errors.Is(err, gitenv.ErrOutside) {
		how = r.howToEnable() // first: the part the model tells the user
	}
	switch {
	case errors.Is(err, gitenv.ErrNoRepo) && how != "":
		return output{}, fmt.Errorf("%w: %w: %s (%w)", ErrNotRepo, ErrNotEnabled, how, err)
	case errors.Is(err, gitenv.ErrNoRepo):
		return output{}, fmt.Errorf("%w (%s has no .git of its own)", ErrNotRepo, r.ws.Root())
	case how != "":
		return output{}, fmt.Errorf("%w: %w: %s (%w)", ErrForeignRepo, ErrNotEnabled, how, err)
	case errors.Is(err, gitenv.ErrOutside), errors.Is(err, gitenv.ErrUnconfirmed):
		return output{}, fmt.Errorf("%w: %w", ErrForeignRepo, err)
	case err != nil:
		return output{}, fmt.Errorf("%w: %w", ErrGit, err)
	}
	return r.exec(ctx, repo, maxOutputBytes, args)
}

// howToEnable says how git gets enabled for a workspace that a worktree's
// or an enclosing repository holds ("" when none does).
func (r *runner) howToEnable() string {
	c, err := gitenv.Discover(r.ws.Root())
	if err != nil || c == nil {
		return ""
	}
	what := "a git worktree of the repository " + c.Repository
	if c.Kind == gitenv.KindEnclosing {
		what = "a folder of the git repository " + c.Repository
	}
	return fmt.Sprintf("the workspace is %s; the git tools use it once the user enables git for the project in the app (project.trustGit)", what)
}

func (r *runner) exec(ctx context.Context, repo gitenv.Repo, maxOut int, argv []string) (output, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, argv...)
	cmd.Dir = r.ws.Root()
	cmd.Env = append(repo.Env(proc.Env(nil), toolConfig...), toolVars...)
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

// checkScopedRef refuses, in a folder of a larger repository, a ref that
// names a path (HEAD:../secret, :0:file): such a blob or tree is not
// limited by the folder's pathspec.
func (r *runner) checkScopedRef(ref string) error {
	if r.scoped() && strings.Contains(ref, ":") {
		return fmt.Errorf("%w: ref %q names a path; in a folder of a larger repository refs cannot hold ':'", ErrUnsafeArg, ref)
	}
	return nil
}

// scope is the pathspec of a call without a path: the project folder in
// an enclosing repository (git runs in the folder, so "." is the folder),
// else none.
func (r *runner) scope() []string {
	if r.scoped() {
		return []string{"."}
	}
	return nil
}

// refused wraps an argument error for the model.
func refused(err error) error {
	if errors.Is(err, ErrUnsafeArg) {
		return fmt.Errorf("%w: %w", tools.ErrInvalidArgs, err)
	}
	return err
}
