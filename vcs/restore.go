package vcs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

// RestoreOptions narrows a restore.
type RestoreOptions struct {
	// Paths limits the restore to these files or directories (relative to
	// the workspace or absolute inside it); empty means the whole workspace.
	Paths []string `json:"paths,omitempty"`
	// DryRun reports what would change and changes nothing in the workspace
	// or the session's refs.
	DryRun bool `json:"dryRun,omitempty"`
}

// RestoreResult says what a restore changed (or, in a dry run, would
// change). Paths are relative to the workspace, with '/', sorted.
type RestoreResult struct {
	// Restored are the files written back from the turn's snapshot: they
	// were missing or differed.
	Restored []string `json:"restored"`
	// Overwritten are the Restored files that existed with other content,
	// which the restore replaced.
	Overwritten []string `json:"overwritten"`
	// Deleted are files that did not exist after the turn (created later)
	// and were removed.
	Deleted []string `json:"deleted"`
	// Missing are requested paths found neither in the turn's snapshot nor
	// in the workspace.
	Missing []string `json:"missing"`
	// Skipped are files left alone because a snapshot left them out
	// (Limits: too large or binary): one now, whose content no snapshot
	// holds, is not overwritten, and one the turn's snapshot left out is
	// not deleted.
	Skipped []string `json:"skipped"`
	// DryRun is set when nothing was changed.
	DryRun bool `json:"dryRun"`
}

// gitlinkMode is a nested repository entry; restore never touches those.
const gitlinkMode = "160000"

// change is one difference between the workspace's tree and the target.
type change struct {
	path    string
	status  byte   // 'A' only in target, 'D' only in workspace, 'M'/'T' both
	mode    string // target mode
	oid     string // target blob
	curMode string
}

// RestoreTurn brings the workspace (or opts.Paths) back to the state after
// turn n: files of the turn's snapshot that are missing or differ are
// written back, and files that did not exist after turn n are deleted.
// Ignored and excluded files (.agent/, node_modules/, .gitignore'd) are never
// touched. Before changing anything it records the current state as an
// unnumbered snapshot, so what the restore overwrites or deletes stays in the
// session's history. A turn whose snapshot expired is refused with
// ErrTurnExpired. Files a snapshot left out (Limits) are left alone
// (RestoreResult.Skipped). Paths that leave the workspace, lexically or through a
// symlink, are refused with an error wrapping tools.ErrOutsideWorkspace.
func (s *SessionVCS) RestoreTurn(ctx context.Context, n int, opts RestoreOptions) (RestoreResult, error) {
	res, err := s.restoreTurn(ctx, n, opts)
	if err == nil && !opts.DryRun {
		// The snapshot taken before the restore may put the project over
		// its cap; the restore itself is done either way.
		if err := s.collect(ctx); err != nil {
			slog.Warn("vcs collect after restore", "session", s.id, "err", err)
		}
	}
	return res, err
}

func (s *SessionVCS) restoreTurn(ctx context.Context, n int, opts RestoreOptions) (RestoreResult, error) {
	return s.restore(ctx, n, opts, restoreSpec{})
}

// restoreSpec is what a rewind (RestoreBefore) asks of a restore besides
// RestoreOptions.
type restoreSpec struct {
	// before: the target is turn n's pre-turn snapshot (its commit's
	// parent), not the snapshot after it.
	before bool
	// guard: refuse with a *ClobberError when a file the restore would
	// touch changed after the session's last snapshot; force overrides.
	guard, force bool
	// clobbered gets the files the guard found (dry runs and forced
	// restores report them).
	clobbered *[]string
}

func (s *SessionVCS) restore(ctx context.Context, n int, opts RestoreOptions, spec restoreSpec) (RestoreResult, error) {
	res := RestoreResult{Restored: []string{}, Overwritten: []string{}, Deleted: []string{}, Missing: []string{}, Skipped: []string{}, DryRun: opts.DryRun}
	if !s.Enabled() {
		return res, ErrDisabled
	}
	rels, err := s.relPaths(opts.Paths)
	if err != nil {
		return res, fmt.Errorf("restore turn %d: %w", n, err)
	}
	defer s.lock()()
	if err := s.loadLocked(ctx); err != nil {
		return res, fmt.Errorf("restore turn %d: %w", n, err)
	}
	target, err := s.turnCommitLocked(ctx, n)
	if err != nil {
		return res, fmt.Errorf("restore turn %d: %w", n, err)
	}
	if spec.before {
		if target, err = s.parentLocked(ctx, n, target); err != nil {
			return res, fmt.Errorf("restore before turn %d: %w", n, err)
		}
	}
	headTree := s.st.headTree
	cur, omitted, err := s.snapshotLocked(ctx)
	if err != nil {
		return res, fmt.Errorf("restore turn %d: %w", n, err)
	}
	changes, err := s.diffLocked(ctx, cur, target, rels)
	if err != nil {
		return res, fmt.Errorf("restore turn %d: %w", n, err)
	}
	if spec.guard {
		clobbered, err := s.clobberedLocked(ctx, headTree, cur, changes)
		if err != nil {
			return res, fmt.Errorf("restore before turn %d: %w", n, err)
		}
		if spec.clobbered != nil {
			*spec.clobbered = clobbered
		}
		if len(clobbered) > 0 && !spec.force && !opts.DryRun {
			return res, &ClobberError{Files: clobbered}
		}
	}
	if !opts.DryRun {
		// What the restore overwrites or deletes stays in the session's
		// history.
		if err := s.recordBaseLocked(ctx, cur, omitted, fmt.Sprintf("snapshot before restoring turn %d", n), "restore"); err != nil {
			return res, fmt.Errorf("restore turn %d: %w", n, err)
		}
	}
	if len(rels) > 0 {
		if res.Missing, err = s.missingLocked(ctx, cur, target, rels); err != nil {
			return res, fmt.Errorf("restore turn %d: %w", n, err)
		}
	}
	body, err := s.git().output(ctx, nil, "cat-file", "commit", target)
	if err != nil {
		return res, fmt.Errorf("restore turn %d: %w", n, err)
	}
	leftOut := map[string]bool{} // omitted now: never overwritten
	for _, o := range omitted {
		leftOut[o.Path] = true
	}
	wasLeftOut := map[string]bool{} // omitted by the turn: never deleted
	targetOmitted, more := parseOmitted(string(body))
	for _, o := range targetOmitted {
		wasLeftOut[o.Path] = true
	}
	root, err := os.OpenRoot(s.plan.Workspace)
	if err != nil {
		return res, fmt.Errorf("restore turn %d: %w", n, err)
	}
	defer root.Close()
	var writes, deletes []change
	for _, c := range changes {
		switch {
		case c.mode == gitlinkMode || c.curMode == gitlinkMode:
			continue
		case leftOut[c.path] || c.status == 'D' && (wasLeftOut[c.path] || more > 0):
			res.Skipped = append(res.Skipped, c.path)
		case c.status == 'D':
			deletes = append(deletes, c)
			res.Deleted = append(res.Deleted, c.path)
		default:
			writes = append(writes, c)
			res.Restored = append(res.Restored, c.path)
			if c.status != 'A' || exists(root, c.path) {
				res.Overwritten = append(res.Overwritten, c.path)
			}
		}
	}
	slices.Sort(res.Restored)
	slices.Sort(res.Overwritten)
	slices.Sort(res.Deleted)
	slices.Sort(res.Missing)
	slices.Sort(res.Skipped)
	if opts.DryRun {
		return res, nil
	}
	for _, c := range deletes {
		if err := removeFile(root, c.path); err != nil {
			return res, fmt.Errorf("restore turn %d: delete %s: %w", n, c.path, err)
		}
	}
	if err := s.writeBlobsLocked(ctx, root, writes); err != nil {
		return res, fmt.Errorf("restore turn %d: %w", n, err)
	}
	return res, nil
}

// relPaths confines the requested paths to the workspace and makes them
// relative, with '/'. The last component is not followed (restoring a
// symlink restores the link), but every directory on the way must stay
// inside the workspace. A path naming the workspace itself means everything.
func (s *SessionVCS) relPaths(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	ws, err := confine.New(s.plan.Workspace)
	if err != nil {
		return nil, err
	}
	var rels []string
	for _, p := range paths {
		abs := ws.Abs(p)
		if !confine.Within(ws.Root(), abs) {
			return nil, fmt.Errorf("%w: %s", tools.ErrOutsideWorkspace, p)
		}
		if abs == ws.Root() {
			return nil, nil
		}
		dir, err := ws.Resolve(filepath.Dir(abs), false)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(ws.Root(), filepath.Join(dir, filepath.Base(abs)))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("%w: %s", tools.ErrOutsideWorkspace, p)
		}
		rel = filepath.ToSlash(rel)
		if !slices.Contains(rels, rel) {
			rels = append(rels, rel)
		}
	}
	return rels, nil
}

// diffLocked lists the differences from tree cur to commit target.
func (s *SessionVCS) diffLocked(ctx context.Context, cur, target string, rels []string) ([]change, error) {
	args := append([]string{"diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-ext-diff", cur, target, "--"}, rels...)
	out, err := s.git().output(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	return parseRaw(string(out)), nil
}

// parseRaw parses `git diff-tree -z --raw` output:
// ":srcmode dstmode srcoid dstoid status NUL path NUL" per change.
func parseRaw(out string) []change {
	var changes []change
	tok := strings.Split(out, "\x00")
	for i := 0; i+1 < len(tok); i += 2 {
		f := strings.Fields(strings.TrimPrefix(tok[i], ":"))
		if len(f) != 5 || f[4] == "" {
			continue
		}
		changes = append(changes, change{
			path: tok[i+1], status: f[4][0], mode: f[1], oid: f[3], curMode: f[0],
		})
	}
	return changes
}

// missingLocked returns the requested paths that match nothing in either
// tree.
func (s *SessionVCS) missingLocked(ctx context.Context, cur, target string, rels []string) ([]string, error) {
	found := map[string]bool{}
	for _, tree := range []string{cur, target} {
		args := append([]string{"ls-tree", "-r", "-z", "--name-only", tree, "--"}, rels...)
		out, err := s.git().output(ctx, nil, args...)
		if err != nil {
			return nil, err
		}
		for name := range strings.SplitSeq(string(out), "\x00") {
			for _, r := range rels {
				if name == r || strings.HasPrefix(name, r+"/") {
					found[r] = true
				}
			}
		}
	}
	missing := []string{}
	for _, r := range rels {
		if !found[r] {
			missing = append(missing, r)
		}
	}
	return missing, nil
}

// exists reports whether rel exists (as anything) in root.
func exists(root *os.Root, rel string) bool {
	_, err := root.Lstat(filepath.FromSlash(rel))
	return err == nil
}

// removeFile deletes rel and then its parent directories that became empty.
func removeFile(root *os.Root, rel string) error {
	if err := root.Remove(filepath.FromSlash(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for dir := path.Dir(rel); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if root.Remove(filepath.FromSlash(dir)) != nil {
			break
		}
	}
	return nil
}

// writeBlobsLocked streams the target blobs out of one `git cat-file
// --batch` and writes them into the workspace through root.
func (s *SessionVCS) writeBlobsLocked(ctx context.Context, root *os.Root, writes []change) error {
	if len(writes) == 0 {
		return nil
	}
	var in strings.Builder
	for _, c := range writes {
		in.WriteString(c.oid)
		in.WriteByte('\n')
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := s.git().command(ctx, strings.NewReader(in.String()), nil, "cat-file", "--batch")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: git cat-file: %v", ErrGit, err)
	}
	werr := writeBatch(bufio.NewReader(stdout), root, writes)
	if werr != nil {
		cancel()
	}
	if err := cmd.Wait(); err != nil && werr == nil {
		werr = runError(ctx, "cat-file", err, stderr.String())
	}
	return werr
}

// writeBatch reads one cat-file --batch record per write and writes it.
func writeBatch(r *bufio.Reader, root *os.Root, writes []change) error {
	for _, c := range writes {
		header, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("%w: git cat-file: %v", ErrGit, err)
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[0] != c.oid {
			return fmt.Errorf("%w: git cat-file: unexpected %q for %s", ErrGit, strings.TrimSpace(header), c.path)
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("%w: git cat-file: bad size in %q", ErrGit, strings.TrimSpace(header))
		}
		if err := writeEntry(root, c, io.LimitReader(r, size), size); err != nil {
			return fmt.Errorf("write %s: %w", c.path, err)
		}
		if _, err := r.Discard(1); err != nil { // the newline after the content
			return fmt.Errorf("%w: git cat-file: %v", ErrGit, err)
		}
	}
	return nil
}
