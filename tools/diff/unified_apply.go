package diff

import (
	"context"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools/conflict"
)

// ApplyUnified parses text (a unified diff) and applies it atomically
// inside ws.
func ApplyUnified(ctx context.Context, ws *confine.Workspace, guard *conflict.Guard, text string) (*Result, error) {
	plan, res, err := planUnified(ctx, ws, guard, text, false)
	if err != nil {
		return nil, err
	}
	defer plan.Close()
	if err := plan.Commit(ctx); err != nil {
		return nil, err
	}
	res.summarize()
	return res, nil
}

// PreviewUnified renders what ApplyUnified would change, as a unified
// diff of every file (Plan.Diff: the result, not the model's text, so
// offsets and whitespace tolerance are applied), writing nothing.
func PreviewUnified(ctx context.Context, ws *confine.Workspace, text string) (string, error) {
	plan, _, err := planUnified(ctx, ws, nil, text, true)
	if err != nil {
		return "", err
	}
	defer plan.Close()
	return plan.Diff(), nil
}

// planUnified parses text and plans it in memory (a preview reads files
// up to previewLimit); the caller closes the
// plan.
func planUnified(ctx context.Context, ws *confine.Workspace, guard *conflict.Guard, text string, preview bool) (*Plan, *Result, error) {
	files, err := ParseUnified(text)
	if err != nil {
		return nil, nil, err
	}
	plan := newPlan(ws, guard)
	if preview {
		plan.limit = previewLimit
	}
	res := &Result{}
	for _, d := range files {
		if err := ctx.Err(); err != nil {
			plan.Close()
			return nil, nil, err
		}
		if err := applyFileDiff(plan, d, res); err != nil {
			plan.Close()
			return nil, nil, err
		}
	}
	return plan, res, nil
}

func applyFileDiff(plan *Plan, d *FileDiff, res *Result) error {
	if d.IsBinary {
		return toolErr(TypeBinary, ErrBinary, "%s%s", d.OldName, d.NewName)
	}
	switch {
	case d.IsNew:
		f, err := plan.file(d.NewName)
		if err != nil {
			return err
		}
		if f.exists && len(f.after) > 0 {
			return toolErr(TypeExists, ErrExists, "%s: the diff creates it (--- /dev/null) but it exists; diff against its current content instead", f.t.Display)
		}
		out, err := applyFragments(f.t.Display, "", d.Fragments)
		if err != nil {
			return err
		}
		f.after, f.exists = []byte(out), true
		res.add(f.t.Display, "added", "", lineCount(f.after), 0)
		return nil
	case d.IsDelete:
		f, err := plan.file(d.OldName)
		if err != nil {
			return err
		}
		if !f.exists {
			return toolErr(TypeHunk, ErrHunk, "%s: the diff deletes it but it does not exist", f.t.Display)
		}
		if len(d.Fragments) > 0 {
			out, err := applyFragments(f.t.Display, string(f.after), d.Fragments)
			if err != nil {
				return err
			}
			if strings.TrimSpace(out) != "" {
				return toolErr(TypeHunk, ErrHunk, "%s: the diff deletes it but does not remove all of its lines; read it again", f.t.Display)
			}
		}
		res.add(f.t.Display, "deleted", "", 0, lineCount(f.after))
		f.after, f.exists = nil, false
		return nil
	}
	src, err := plan.file(d.OldName)
	if err != nil {
		return err
	}
	if !src.exists {
		return toolErr(TypeHunk, ErrHunk, "%s: the file does not exist; a new file needs \"--- /dev/null\"", src.t.Display)
	}
	before := src.after
	out, err := applyFragments(src.t.Display, string(before), d.Fragments)
	if err != nil {
		return err
	}
	added, removed := fragmentCounts(d.Fragments)
	dst := src
	if d.NewName != "" && d.NewName != d.OldName {
		if dst, err = plan.file(d.NewName); err != nil {
			return err
		}
	}
	if dst == src {
		src.after = []byte(out)
		res.add(src.t.Display, "updated", "", added, removed)
		return nil
	}
	if dst.exists {
		return toolErr(TypeExists, ErrExists, "%s: the rename target exists", dst.t.Display)
	}
	dst.after, dst.exists, dst.perm = []byte(out), true, src.perm
	src.after, src.exists = nil, false
	res.add(dst.t.Display, "moved", src.t.Display, added, removed)
	return nil
}

// applyFragments applies hunks in order. Each is looked for near its stated
// line (shifted by what the earlier hunks added or removed), nearest first,
// at or after the end of the previous hunk: exact text first, then ignoring
// trailing whitespace, then surrounding whitespace.
func applyFragments(name, content string, frags []*gitdiff.TextFragment) (string, error) {
	lines := splitKeep(content)
	delta, min := 0, 0
	for i, f := range frags {
		var old, new []string
		for _, l := range f.Lines {
			if l.Op != gitdiff.OpAdd {
				old = append(old, l.Line)
			}
			if l.Op != gitdiff.OpDelete {
				new = append(new, l.Line)
			}
		}
		want := int(f.OldPosition) - 1 + delta
		if len(old) == 0 {
			want = int(f.OldPosition) + delta // "-5,0": insert after line 5
		}
		var at int
		if len(old) == 0 {
			at = clampInt(want, min, len(lines))
		} else if at = seekNear(lines, old, want, min); at < 0 {
			return "", fragErr(name, i, f, old)
		}
		// Context lines keep the file's own text (whitespace, a missing
		// final newline).
		k := at
		new = new[:0]
		for _, l := range f.Lines {
			switch l.Op {
			case gitdiff.OpContext:
				new = append(new, lines[k])
				k++
			case gitdiff.OpDelete:
				k++
			default:
				new = append(new, l.Line)
			}
		}
		tail := append([]string(nil), lines[at+len(old):]...)
		lines = append(append(lines[:at], new...), tail...)
		delta += len(new) - len(old)
		min = at + len(new)
	}
	// A line added after a last line that had no "\n" needs one between.
	for i := 0; i < len(lines)-1; i++ {
		if !strings.HasSuffix(lines[i], "\n") {
			lines[i] += "\n"
		}
	}
	return strings.Join(lines, ""), nil
}

func fragErr(name string, i int, f *gitdiff.TextFragment, old []string) error {
	first := ""
	for _, l := range old {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimRight(l, "\n")
			break
		}
	}
	return toolErr(TypeHunk, ErrHunk, "%s: hunk %d (@@ -%d,%d +%d,%d @@, first line %q) does not match the file near line %d; no file was changed. Read the file again and make the context and \"-\" lines match it exactly",
		name, i+1, f.OldPosition, f.OldLines, f.NewPosition, f.NewLines, clip(first), f.OldPosition)
}
