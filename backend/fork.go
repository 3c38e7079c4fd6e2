package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// A fork (session.fork) is a new session whose history is another's up to
// and including one of its finished turns:
//   - the store copies, in one transaction, the history the turn's mark
//     names, the events up to the turn's turn_end (with their seqs: a
//     replay and session.get show the same log), the grants, the settings,
//     the compaction state and the usage totals of the last copied usage
//     event (store.ForkSession); pending requests and queued turns are not
//     copied, the fork is at rest;
//   - the files the copied history names under the source's session
//     folder are linked (or copied) into the fork's first: its
//     attachments (refs are relative to the session folder) and its
//     spilled tool results (their paths in tool messages are rewritten to
//     the fork's folder, which its engine may read). A crash between the
//     files and the commit leaves a folder without a session, which the
//     store sweeps at the next start;
//   - the workspace, the source session and its snapshots are not
//     touched; the fork has no snapshots of the copied turns.

// forkSuffix is appended to the source's title.
const forkSuffix = "(fork)"

// ForkSession is session.fork.
func (b *Backend) ForkSession(ctx context.Context, p protocol.SessionForkParams) (protocol.SessionCreateResult, error) {
	st := b.opts.Store
	src, err := st.Session(ctx, p.SessionID)
	if err != nil {
		return protocol.SessionCreateResult{}, err
	}
	turnID := p.TurnID
	if turnID == "" {
		if turnID, err = b.lastFinishedLiveTurn(ctx, src.ID); err != nil { // not one a rewind dropped
			return protocol.SessionCreateResult{}, err
		}
		if turnID == "" {
			return protocol.SessionCreateResult{}, fmt.Errorf("%w: session %s has no finished turn to fork", ErrConflict, src.ID)
		}
	}
	mark, err := b.forkableTurn(ctx, src.ID, turnID)
	if err != nil {
		return protocol.SessionCreateResult{}, err
	}
	id := uuid.NewString()
	srcDir, dir := st.SessionDir(src.ID), st.SessionDir(id)
	srcSpill, spill := toolResultDir(srcDir, src.ID), toolResultDir(dir, id)
	msgs, err := st.Messages(ctx, src.ID)
	if err != nil {
		return protocol.SessionCreateResult{}, err
	}
	if len(msgs) < mark.Messages {
		// The history was cut after the check: the store refuses it below.
		msgs = msgs[:0]
	}
	if err := linkForkFiles(srcDir, dir, srcSpill, spill, msgs[:min(len(msgs), mark.Messages)]); err != nil {
		cleanForkFiles(dir, spill)
		return protocol.SessionCreateResult{}, fmt.Errorf("fork session: %w", err)
	}
	in := store.ForkInput{SourceID: src.ID, TurnID: turnID, ID: id, Title: forkTitle(src.Title), Usage: sessionUsageOf,
		Rewrite: func(m llm.Message) llm.Message { return rewriteSpillPaths(m, srcSpill, spill) }}
	ss, _, err := st.ForkSession(ctx, in)
	if err != nil {
		cleanForkFiles(dir, spill)
		if errors.Is(err, store.ErrNoMark) {
			return protocol.SessionCreateResult{}, notForkable(turnID)
		}
		return protocol.SessionCreateResult{}, err
	}
	return protocol.SessionCreateResult{SessionID: ss.ID, Session: b.sessionInfo(ctx, ss)}, nil
}

// forkableTurn returns the mark of a turn a fork may end with: an unknown
// turn is not found; a queued, running, waiting or suspended one has not
// finished; a finished one whose history was rewritten since (compacted,
// rewound) has no mark left.
func (b *Backend) forkableTurn(ctx context.Context, sessionID, turnID string) (store.TurnMark, error) {
	st := b.opts.Store
	f, err := st.Turn(ctx, sessionID, turnID)
	if err != nil {
		return store.TurnMark{}, err
	}
	if !f.Started && !f.Ended {
		queued, err := st.QueuedTurns(ctx, sessionID)
		if err != nil {
			return store.TurnMark{}, err
		}
		for _, q := range queued {
			if q.TurnID == turnID {
				return store.TurnMark{}, fmt.Errorf("%w: turn %s is queued: only a finished turn can be forked", ErrConflict, turnID)
			}
		}
		return store.TurnMark{}, fmt.Errorf("turn %q of session %s: %w", turnID, sessionID, ErrNotFound)
	}
	if !f.Started {
		return store.TurnMark{}, fmt.Errorf("%w: turn %s never started (it left the queue unstarted): only a finished turn can be forked", ErrConflict, turnID)
	}
	if !f.Ended {
		return store.TurnMark{}, fmt.Errorf("%w: turn %s has not finished (it is running or waiting for an answer): only a finished turn can be forked", ErrConflict, turnID)
	}
	if f.Mark == nil {
		return store.TurnMark{}, notForkable(turnID)
	}
	return *f.Mark, nil
}

// notForkable is the refusal of a finished turn without a mark.
func notForkable(turnID string) error {
	return fmt.Errorf("%w: the history of turn %s was rewritten after it ended (compacted or rewound), so it cannot be forked: fork a later turn", ErrConflict, turnID)
}

// forkTitle is a fork's title: the source's with " (fork)".
func forkTitle(title string) string {
	if title = strings.TrimSpace(title); title == "" {
		return forkSuffix
	}
	return title + " " + forkSuffix
}

// forkedFrom is the session object's forkedFrom (nil: not a fork).
func forkedFrom(ss store.Session) *protocol.ForkedFrom {
	if ss.ForkedFrom == "" {
		return nil
	}
	return &protocol.ForkedFrom{SessionID: ss.ForkedFrom, TurnID: ss.ForkedTurn}
}

// rewriteSpillPaths points the spilled results a tool message names in
// from at the fork's folder to.
func rewriteSpillPaths(m llm.Message, from, to string) llm.Message {
	if m.Role == llm.RoleTool && from != "" && from != to {
		m.Content = strings.ReplaceAll(m.Content, from+string(filepath.Separator), to+string(filepath.Separator))
	}
	return m
}

// linkForkFiles gives the fork's folder dir the files msgs name under the
// source's folder srcDir (attachment refs) and the spilled results in
// srcSpill that their tool messages name (into spill). Every path is
// opened through an os.Root: a ref cannot lead outside its folder, and
// only regular files are taken.
func linkForkFiles(srcDir, dir, srcSpill, spill string, msgs []llm.Message) error {
	var refs []string
	var spilled []string
	var names []string // the spill folder's entries, read once
	for _, m := range msgs {
		for _, a := range m.AttachmentRefs {
			refs = append(refs, a.Path)
		}
		if m.Role != llm.RoleTool || !strings.Contains(m.Content, srcSpill+string(filepath.Separator)) {
			continue
		}
		if names == nil {
			ents, err := os.ReadDir(srcSpill)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("read spilled results: %w", err)
			}
			names = []string{}
			for _, e := range ents {
				if e.Type().IsRegular() {
					names = append(names, e.Name())
				}
			}
		}
		for _, n := range names {
			if strings.Contains(m.Content, filepath.Join(srcSpill, n)) {
				spilled = append(spilled, n)
			}
		}
	}
	if err := linkFiles(srcDir, dir, refs); err != nil {
		return fmt.Errorf("attachments: %w", err)
	}
	if err := linkFiles(srcSpill, spill, spilled); err != nil {
		return fmt.Errorf("spilled tool results: %w", err)
	}
	return nil
}

// linkFiles links (else copies) each relative path of from into to. A
// path that is not local, or not a regular file in from, is skipped: the
// history that names it names nothing the fork could read either.
func linkFiles(from, to string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	src, err := os.OpenRoot(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	dst, err := os.OpenRoot(to)
	if err != nil {
		return err
	}
	defer dst.Close()
	for _, p := range paths {
		if !filepath.IsLocal(p) {
			continue
		}
		fi, err := src.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if d := filepath.Dir(p); d != "." {
			if err := dst.MkdirAll(d, 0o700); err != nil {
				return err
			}
		}
		if _, err := dst.Lstat(p); err == nil {
			continue // named twice
		}
		// Both roots resolved the path to a regular file in their folder:
		// a hard link shares the bytes (attachments are never written
		// again); across filesystems, a copy.
		if os.Link(filepath.Join(from, p), filepath.Join(to, p)) == nil {
			continue
		}
		if err := copyInRoots(src, dst, p); err != nil {
			return err
		}
	}
	return nil
}

// copyInRoots copies the regular file p of src to p in dst (a new file).
func copyInRoots(src, dst *os.Root, p string) (err error) {
	in, err := src.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := dst.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}

// cleanForkFiles removes what a failed fork left of its folders.
func cleanForkFiles(dir, spill string) {
	_ = os.RemoveAll(dir)
	_ = os.RemoveAll(spill)
}
