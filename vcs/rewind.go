package vcs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// ErrClobbered: a rewind would overwrite or delete files that changed
// after the session's last snapshot (edited by the user or another tool);
// the error is a *ClobberError naming them.
var ErrClobbered = errors.New("files changed since the session's last snapshot")

// ErrNoPreTurnSnapshot: the turn's snapshot has no snapshot before it, so
// there is no state to go back to.
var ErrNoPreTurnSnapshot = errors.New("no snapshot before the turn")

// ClobberError is RestoreBefore's refusal: Files (relative to the
// workspace, with '/', sorted) changed after the session's last snapshot
// and the rewind would overwrite or delete them.
type ClobberError struct {
	Files []string
}

// maxNamedFiles bounds the files a ClobberError's message names (its
// Files has them all).
const maxNamedFiles = 20

func (e *ClobberError) Error() string {
	names := e.Files
	more := ""
	if len(names) > maxNamedFiles {
		names, more = names[:maxNamedFiles], fmt.Sprintf(" and %d more", len(e.Files)-maxNamedFiles)
	}
	return fmt.Sprintf("%s: %s%s", ErrClobbered, strings.Join(names, ", "), more)
}

// Is makes errors.Is(err, ErrClobbered) hold.
func (e *ClobberError) Is(target error) bool { return target == ErrClobbered }

// ErrorFiles are the files the refusal names (the wire's error.data.files).
func (e *ClobberError) ErrorFiles() []string { return e.Files }

// RewindOptions are RestoreBefore's options.
type RewindOptions struct {
	// DryRun reports what would change (and what would be clobbered) and
	// changes nothing.
	DryRun bool
	// Force restores even over files changed after the last snapshot.
	Force bool
}

// RewindResult is what RestoreBefore changed (or would change).
type RewindResult struct {
	RestoreResult
	// Clobbered are the files the restore touches that changed after the
	// session's last snapshot: a dry run lists them, a forced restore
	// overwrote or deleted them (their content is kept in the snapshot the
	// restore records first).
	Clobbered []string
}

// RestoreBefore brings the whole workspace back to turn n's pre-turn
// snapshot (the state just before the turn changed anything) through the
// restore path of RestoreTurn: it records the current state first, never
// touches ignored files or files a snapshot left out, and refuses a turn
// whose snapshot expired (ErrTurnExpired). Unless opts.Force, it refuses
// with a *ClobberError when a file it would overwrite or delete changed
// after the session's last snapshot. A file already as it was before the
// turn is not touched, so running it again after an interrupted restore
// finishes that restore.
func (s *SessionVCS) RestoreBefore(ctx context.Context, n int, opts RewindOptions) (RewindResult, error) {
	var out RewindResult
	res, err := s.restore(ctx, n, RestoreOptions{DryRun: opts.DryRun},
		restoreSpec{before: true, guard: true, force: opts.Force, clobbered: &out.Clobbered})
	out.RestoreResult = res
	if out.Clobbered == nil {
		out.Clobbered = []string{}
	}
	if err != nil {
		return out, err
	}
	if !opts.DryRun {
		if err := s.collect(ctx); err != nil {
			slog.Warn("vcs collect after rewind", "session", s.id, "err", err)
		}
	}
	return out, nil
}

// parentLocked is the pre-turn snapshot of turn n (whose commit is
// commit): the commit's parent.
func (s *SessionVCS) parentLocked(ctx context.Context, n int, commit string) (string, error) {
	parents, err := s.git().trimmed(ctx, "rev-parse", commit+"^@")
	if err != nil {
		return "", err
	}
	f := strings.Fields(parents)
	if len(f) == 0 {
		return "", fmt.Errorf("%w: turn %d of session %s", ErrNoPreTurnSnapshot, n, s.id)
	}
	return f[0], nil
}

// clobberedLocked returns the paths of changes (a restore's) that differ
// between the session's last snapshot (headTree) and the workspace now
// (cur): files changed since, which the restore would overwrite or delete.
func (s *SessionVCS) clobberedLocked(ctx context.Context, headTree, cur string, changes []change) ([]string, error) {
	if headTree == "" || headTree == cur || len(changes) == 0 {
		return []string{}, nil
	}
	out, err := s.git().output(ctx, nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", "--no-ext-diff", headTree, cur, "--")
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	for name := range strings.SplitSeq(string(out), "\x00") {
		if name = strings.TrimLeft(name, "\n"); name != "" {
			changed[name] = true
		}
	}
	clobbered := []string{}
	for _, c := range changes {
		if c.mode == gitlinkMode || c.curMode == gitlinkMode {
			continue
		}
		if changed[c.path] {
			clobbered = append(clobbered, c.path)
		}
	}
	slices.Sort(clobbered)
	return clobbered, nil
}
