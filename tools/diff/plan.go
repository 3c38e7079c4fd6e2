package diff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zqagent/sidecar/atomicfile"
	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
	"github.com/zqagent/sidecar/tools/fs"
	"github.com/zqagent/sidecar/tools/fs/textdiff"
)

// Plan is the in-memory result of a patch: the new content (or deletion) of
// every file it touches, overlaid on the disk, written only by Commit.
type Plan struct {
	ws    *confine.Workspace
	guard *conflict.Guard
	files map[string]*planFile // by real path
	order []*planFile          // first-touch order
	limit int64                // the largest file read
}

// previewLimit is the largest file a preview reads (a patch of a larger
// one shows no diff on its approval card).
const previewLimit = 16 << 20

type planFile struct {
	t       *fs.Target
	before  []byte // content on disk when first touched
	existed bool
	after   []byte // planned content
	exists  bool   // planned existence
	perm    os.FileMode
	newDirs []string // parent directories Commit created for it, deepest first
}

func newPlan(ws *confine.Workspace, guard *conflict.Guard) *Plan {
	return &Plan{ws: ws, guard: guard, files: map[string]*planFile{}, limit: 1 << 40}
}

// Close releases every root the plan opened.
func (p *Plan) Close() {
	for _, f := range p.order {
		f.t.Close()
	}
}

// file confines path for writing, checks the guard and loads the file's
// current content on first touch.
func (p *Plan) file(path string) (*planFile, error) {
	t, err := fs.Open(p.ws, path, true)
	if err != nil {
		return nil, err
	}
	if f, ok := p.files[t.Real]; ok {
		t.Close()
		return f, nil
	}
	if err := p.guard.CheckWrite(t.Real); err != nil {
		t.Close()
		return nil, err
	}
	f := &planFile{t: t, perm: 0o644}
	if fi, err := t.Root.Stat(t.Rel); err == nil {
		if fi.IsDir() {
			t.Close()
			return nil, fmt.Errorf("%w: %s is a directory", tools.ErrInvalidArgs, t.Display)
		}
		f.perm = fi.Mode().Perm()
	}
	data, err := confine.ReadRegular(t.Root, t.Rel, p.limit) // never blocks on a FIFO
	switch {
	case err == nil:
		f.before, f.existed = data, true
	case errors.Is(err, os.ErrNotExist):
	default:
		t.Close()
		return nil, fmt.Errorf("read %s: %w", t.Display, err)
	}
	f.after, f.exists = f.before, f.existed
	p.files[t.Real] = f
	p.order = append(p.order, f)
	return f, nil
}

// Diff renders the plan as a unified diff of every file it changes, in
// first-touch order (textdiff.Change: a created file from /dev/null, a
// deleted one to /dev/null, a move as both); it writes nothing.
func (p *Plan) Diff() string {
	var b strings.Builder
	for _, f := range p.order {
		b.WriteString(textdiff.Change(f.t.Display, f.before, f.after, f.existed, f.exists))
	}
	return b.String()
}

// commitHook, when set by tests, runs before each file is written.
var commitHook func(display string) error

// Commit writes every changed file (temp file + rename, through the
// file's os.Root) and removes deleted ones, in first-touch order. On a
// failure it restores the files already changed and returns the error.
func (p *Plan) Commit(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var done []*planFile
	for _, f := range p.order {
		if f.exists == f.existed && string(f.after) == string(f.before) {
			continue
		}
		err := p.apply(f)
		if err != nil {
			removeDirs(f)
			rerr := p.rollback(done)
			return errors.Join(fmt.Errorf("write %s: %w; files already written were restored", f.t.Display, mapWriteErr(err)), rerr)
		}
		done = append(done, f)
	}
	for _, f := range done {
		if f.exists {
			p.guard.RecordWrite(f.t.Real, f.after)
		} else {
			p.guard.Forget(f.t.Real)
		}
	}
	return nil
}

func (p *Plan) apply(f *planFile) error {
	if commitHook != nil {
		if err := commitHook(f.t.Display); err != nil {
			return err
		}
	}
	if !f.exists {
		return f.t.Root.Remove(f.t.Rel)
	}
	for d := filepath.Dir(f.t.Rel); d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if _, err := f.t.Root.Lstat(d); err == nil {
			break
		}
		f.newDirs = append(f.newDirs, d)
	}
	return atomicfile.Write(f.t.Root, f.t.Rel, f.after, f.perm, atomicfile.KeepMode)
}

// removeDirs removes the directories Commit created for f, if empty.
func removeDirs(f *planFile) {
	for _, d := range f.newDirs {
		if f.t.Root.Remove(d) != nil {
			return
		}
	}
}

// rollback puts back the files in done, newest first.
func (p *Plan) rollback(done []*planFile) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		f := done[i]
		var err error
		if f.existed {
			err = atomicfile.Write(f.t.Root, f.t.Rel, f.before, f.perm, atomicfile.KeepMode)
		} else {
			err = f.t.Root.Remove(f.t.Rel)
			removeDirs(f)
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("roll back %s: %w", f.t.Display, err))
		}
	}
	return errors.Join(errs...)
}

func mapWriteErr(err error) error {
	if fs.IsEscape(err) {
		return fmt.Errorf("%w: %v", tools.ErrOutsideWorkspace, err)
	}
	return err
}
