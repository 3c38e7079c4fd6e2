package vcs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/zqagent/sidecar/tools/proc"
)

// Identity of every snapshot commit; it never comes from the user's config.
const (
	authorName  = "zqagent"
	authorEmail = "agent@zqagent.invalid"
)

// waitDelay bounds how long a cancelled git call may hold its pipes.
const waitDelay = 2 * time.Second

// runner runs git as an argv list (never through a shell) against one
// repository. The zero gitDir means "discover from dir" (only findRepo).
type runner struct {
	bin       string
	dir       string // working directory: the work tree
	gitDir    string // GIT_DIR; "" = discover
	workTree  string // GIT_WORK_TREE
	indexFile string // GIT_INDEX_FILE
	excludes  string // core.excludesFile
}

// configArgs are the -c overrides that keep the repository's configuration
// from running code or changing the snapshot: no hooks (not even
// reference-transaction), no fsmonitor, no auto gc, no signing, no line-ending
// conversion, no sparse checkout limiting what is added, raw paths.
func (g *runner) configArgs() []string {
	args := []string{
		"--no-pager", "--literal-pathspecs",
		"-c", "core.hooksPath=" + os.DevNull,
		"-c", "core.fsmonitor=false",
		"-c", "core.autocrlf=false",
		"-c", "core.safecrlf=false",
		"-c", "core.quotePath=false",
		"-c", "core.symlinks=true",
		"-c", "core.sparseCheckout=false",
		"-c", "index.sparse=false",
		"-c", "gc.auto=0",
		"-c", "maintenance.auto=false",
		"-c", "commit.gpgSign=false",
		"-c", "advice.addEmbeddedRepo=false",
		"-c", "color.ui=false",
	}
	if g.excludes != "" {
		args = append(args, "-c", "core.excludesFile="+g.excludes)
	}
	return args
}

// env is the child environment: the sidecar's without secrets and without
// any inherited GIT_* variable, plus the repository, the private index, no
// system or global config, no prompts and a fixed identity.
func (g *runner) env(extra ...string) []string {
	base := make([]string, 0, 64)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(name), "GIT_") {
			continue
		}
		base = append(base, kv)
	}
	vars := []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"LC_ALL=C",
		"GIT_AUTHOR_NAME=" + authorName,
		"GIT_AUTHOR_EMAIL=" + authorEmail,
		"GIT_COMMITTER_NAME=" + authorName,
		"GIT_COMMITTER_EMAIL=" + authorEmail,
	}
	if g.gitDir != "" {
		vars = append(vars, "GIT_DIR="+g.gitDir)
	}
	if g.workTree != "" {
		vars = append(vars, "GIT_WORK_TREE="+g.workTree)
	}
	if g.indexFile != "" {
		vars = append(vars, "GIT_INDEX_FILE="+g.indexFile)
	}
	return proc.Env(base, append(vars, extra...)...)
}

// command builds the git command for args.
func (g *runner) command(ctx context.Context, stdin io.Reader, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, g.bin, append(g.configArgs(), args...)...)
	cmd.Dir = g.dir
	cmd.Env = g.env(env...)
	cmd.Stdin = stdin
	cmd.WaitDelay = waitDelay
	return cmd
}

// output runs git and returns its stdout; a failure wraps ErrGit with stderr.
func (g *runner) output(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	return g.outputEnv(ctx, stdin, nil, args...)
}

// outputEnv is output with extra environment variables.
func (g *runner) outputEnv(ctx context.Context, stdin io.Reader, env []string, args ...string) ([]byte, error) {
	var stdout bytes.Buffer
	if err := g.run(ctx, stdin, env, &stdout, args...); err != nil {
		return nil, err
	}
	return stdout.Bytes(), nil
}

// run runs git with its stdout going to stdout.
func (g *runner) run(ctx context.Context, stdin io.Reader, env []string, stdout io.Writer, args ...string) error {
	var stderr bytes.Buffer
	cmd := g.command(ctx, stdin, env, args...)
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Run(); err != nil {
		return runError(ctx, args[0], err, stderr.String())
	}
	return nil
}

// capWriter keeps the first max bytes written to it and counts the rest.
type capWriter struct {
	buf     bytes.Buffer
	max     int
	dropped int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := min(max(w.max-w.buf.Len(), 0), len(p))
	w.buf.Write(p[:room])
	w.dropped += int64(len(p) - room)
	return len(p), nil
}

// gitError is a failed git command; it matches ErrGit.
type gitError struct {
	command string // the git subcommand
	stderr  string // trimmed, at most 2000 bytes
	err     error
}

func (e *gitError) Error() string {
	return fmt.Sprintf("git %s: %v: %s", e.command, e.err, e.stderr)
}

func (e *gitError) Unwrap() []error { return []error{ErrGit, e.err} }

// runError describes a failed run: the context's error when it was
// cancelled, else a gitError.
func runError(ctx context.Context, command string, err error, stderr string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("git %s: %w", command, ctxErr)
	}
	msg := strings.TrimSpace(stderr)
	if len(msg) > 2000 {
		msg = msg[:2000] + "…"
	}
	return &gitError{command: command, stderr: msg, err: err}
}

// trimmed runs git and returns its stdout without surrounding space.
func (g *runner) trimmed(ctx context.Context, args ...string) (string, error) {
	out, err := g.output(ctx, nil, args...)
	return strings.TrimSpace(string(out)), err
}
