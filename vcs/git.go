package vcs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/zqagent/sidecar/gitenv"
	"github.com/zqagent/sidecar/proc"
)

// Identity of every snapshot commit; it never comes from the user's config.
const (
	authorName  = "zqagent"
	authorEmail = "agent@zqagent.invalid"
)

// waitDelay bounds how long a cancelled git call may hold its pipes.
const waitDelay = 2 * time.Second

// runner runs git as an argv list (never through a shell) against one
// repository, with gitenv's inert environment.
type runner struct {
	bin       string
	dir       string      // working directory: the work tree
	repo      gitenv.Repo // pinned GIT_DIR and GIT_WORK_TREE; none for init
	indexFile string      // GIT_INDEX_FILE
	excludes  string      // core.excludesFile
}

// snapshotConfig are the settings that keep the repository's configuration
// from changing what a snapshot holds, on top of gitenv's inert ones (no
// hooks, filters, fsmonitor or signing): no line-ending conversion, no
// sparse checkout limiting what is added, raw paths, real symlinks.
var snapshotConfig = []string{
	"core.autocrlf=false",
	"core.safecrlf=false",
	"core.quotePath=false",
	"core.symlinks=true",
	"core.sparseCheckout=false",
	"index.sparse=false",
	"advice.addEmbeddedRepo=false",
	"color.ui=false",
}

// env is the child environment: the sidecar's without secrets, made inert
// and pinned by gitenv, plus the private index, literal pathspecs and a
// fixed identity.
func (g *runner) env(extra ...string) []string {
	config := snapshotConfig
	if g.excludes != "" {
		config = append(config[:len(config):len(config)], "core.excludesFile="+g.excludes)
	}
	vars := []string{
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_LITERAL_PATHSPECS=1",
		"LC_ALL=C",
		"GIT_AUTHOR_NAME=" + authorName,
		"GIT_AUTHOR_EMAIL=" + authorEmail,
		"GIT_COMMITTER_NAME=" + authorName,
		"GIT_COMMITTER_EMAIL=" + authorEmail,
	}
	if g.indexFile != "" {
		vars = append(vars, "GIT_INDEX_FILE="+g.indexFile)
	}
	return append(append(g.repo.Env(proc.Env(nil), config...), vars...), extra...)
}

// command builds the git command for args.
func (g *runner) command(ctx context.Context, stdin io.Reader, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, g.bin, args...)
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
