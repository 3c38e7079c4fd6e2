package gitenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// ignorePattern selects the per-submodule ignore settings. Each beats
// diff.ignoreSubmodules=all for its submodule, so that ignore=none would
// make an inert git status or diff run git inside the submodule, which
// reads the submodule's own config (a clean filter Open never saw).
const ignorePattern = `^submodule\..+\.ignore$`

// scanSubmodules blanks (to "all") every submodule.<name>.ignore the
// repository sets, in its config or in .gitmodules as git reads it: the
// work tree's file when there is one, else the index's, else HEAD's.
func (r *Repo) scanSubmodules(ctx context.Context, bin string) error {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	names, err := r.configNames(ctx, bin)
	if err != nil {
		return err
	}
	file := filepath.Join(r.Project, ".gitmodules")
	sources := [][]string{{"--file", file}}
	if _, err := os.Stat(file); err != nil { // git follows a link, as here
		sources = [][]string{{"--blob", ":.gitmodules"}, {"--blob", "HEAD:.gitmodules"}}
	}
	for _, src := range sources {
		more, err := r.configNames(ctx, bin, src...)
		if errors.Is(err, errNoBlob) {
			continue
		}
		if err != nil {
			return err
		}
		names = append(names, more...)
		break
	}
	for _, key := range names {
		kv := key + "=all"
		if !slices.Contains(r.blank, kv) {
			r.blank = append(r.blank, kv)
		}
	}
	return nil
}

// errNoBlob: a --blob source names no object.
var errNoBlob = errors.New("no such blob")

// configNames lists the keys of ignorePattern in the repository's config,
// or in the source given (--file or --blob), read as the inert runs do.
func (r *Repo) configNames(ctx context.Context, bin string, source ...string) ([]string, error) {
	args := append([]string{"config", "-z", "--name-only"}, source...)
	cmd := exec.CommandContext(ctx, bin, append(args, "--get-regexp", ignorePattern)...)
	cmd.Dir = r.Project
	cmd.Env = r.Env(minimalEnv())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0:
		return nil, nil // no such setting
	case errors.As(err, &ee) && ee.ExitCode() == 1 && strings.Contains(stderr.String(), "unable to resolve config blob"):
		return nil, errNoBlob
	case ctx.Err() != nil:
		return nil, fmt.Errorf("git config %s: %w", strings.Join(source, " "), ctx.Err())
	default:
		return nil, fmt.Errorf("git config %s: %v: %s", strings.Join(source, " "), err, strings.TrimSpace(stderr.String()))
	}
	var keys []string
	for key := range strings.SplitSeq(stdout.String(), "\x00") {
		if key != "" {
			keys = append(keys, key)
		}
	}
	return keys, nil
}
