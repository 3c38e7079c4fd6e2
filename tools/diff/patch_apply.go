package diff

import (
	"context"
	"strings"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools/conflict"
)

// ApplyPatch parses text (the apply_patch format) and applies it atomically
// inside ws.
func ApplyPatch(ctx context.Context, ws *confine.Workspace, guard *conflict.Guard, text string) (*Result, error) {
	plan, res, err := planPatch(ctx, ws, guard, text, false)
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

// PreviewPatch renders what ApplyPatch would change, as a unified diff
// of every file (Plan.Diff), writing nothing.
func PreviewPatch(ctx context.Context, ws *confine.Workspace, text string) (string, error) {
	plan, _, err := planPatch(ctx, ws, nil, text, true)
	if err != nil {
		return "", err
	}
	defer plan.Close()
	return plan.Diff(), nil
}

// planPatch parses text and plans it in memory (a preview reads files up
// to previewLimit); the caller closes the plan.
func planPatch(ctx context.Context, ws *confine.Workspace, guard *conflict.Guard, text string, preview bool) (*Plan, *Result, error) {
	patch, err := ParsePatch(text)
	if err != nil {
		return nil, nil, err
	}
	plan := newPlan(ws, guard)
	if preview {
		plan.limit = previewLimit
	}
	res := &Result{}
	for _, op := range patch.Ops {
		if err := ctx.Err(); err != nil {
			plan.Close()
			return nil, nil, err
		}
		if err := applyOp(plan, op, res); err != nil {
			plan.Close()
			return nil, nil, err
		}
	}
	return plan, res, nil
}

func applyOp(plan *Plan, op FileOp, res *Result) error {
	f, err := plan.file(op.Path)
	if err != nil {
		return err
	}
	name := f.t.Display
	switch op.Kind {
	case OpAdd:
		if f.exists {
			return toolErr(TypeExists, ErrExists, "*** Add File: %s: the file exists; use \"*** Update File:\" to change it", name)
		}
		f.after, f.exists = []byte(op.Content), true
		res.add(name, "added", "", lineCount(f.after), 0)
		return nil
	case OpDelete:
		if !f.exists {
			return toolErr(TypeHunk, ErrHunk, "*** Delete File: %s: the file does not exist", name)
		}
		res.add(name, "deleted", "", 0, lineCount(f.after))
		f.after, f.exists = nil, false
		return nil
	}
	if !f.exists {
		return toolErr(TypeHunk, ErrHunk, "*** Update File: %s: the file does not exist; use \"*** Add File:\" to create it", name)
	}
	before := f.after
	updated, err := applyChunks(name, string(before), op.Chunks)
	if err != nil {
		return err
	}
	added, removed := chunkCounts(op.Chunks)
	if op.MoveTo == "" {
		f.after = []byte(updated)
		res.add(name, "updated", "", added, removed)
		return nil
	}
	dst, err := plan.file(op.MoveTo)
	if err != nil {
		return err
	}
	if dst == f {
		f.after = []byte(updated)
		res.add(name, "updated", "", added, removed)
		return nil
	}
	if dst.exists {
		return toolErr(TypeExists, ErrExists, "*** Move to: %s: the target exists", dst.t.Display)
	}
	dst.after, dst.exists, dst.perm = []byte(updated), true, f.perm
	f.after, f.exists = nil, false
	res.add(dst.t.Display, "moved", name, added, removed)
	return nil
}

// applyChunks applies an Update section's hunks to content, in order, as
// Codex does: each hunk's "@@" context line is found first, then its old
// lines at or after it (exact, then ignoring trailing, then surrounding
// whitespace). The result ends with a newline.
func applyChunks(name, content string, chunks []Chunk) (string, error) {
	lines := splitLines(content)
	type repl struct {
		at, n int
		with  []string
	}
	var repls []repl
	next := 0
	for i, c := range chunks {
		if c.Context != "" {
			at := seekSequence(lines, []string{c.Context}, next, false)
			if at < 0 {
				return "", hunkErr(name, i, c, "its \"@@\" context line was not found")
			}
			next = at + 1
		}
		if len(c.Old) == 0 {
			at := len(lines) // a pure addition goes at the end ...
			if c.Context != "" && !c.EOF {
				at = next // ... or right after its context line
			}
			repls = append(repls, repl{at, 0, c.New})
			next = at
			continue
		}
		old, kinds := c.Old, c.Kinds
		at := seekSequence(lines, old, next, c.EOF)
		if at < 0 && strings.HasSuffix(kinds, " ") && old[len(old)-1] == "" && len(old) > 1 {
			// A trailing blank context line often stands for the end of
			// the file.
			old, kinds = old[:len(old)-1], kinds[:len(kinds)-1]
			at = seekSequence(lines, old, next, c.EOF)
		}
		if at < 0 {
			return "", hunkErr(name, i, c, "its lines were not found in the file (after the previous hunk)")
		}
		repls = append(repls, repl{at, len(old), rebuild(lines, at, c.New, kinds)})
		next = at + len(old)
	}
	for i := len(repls) - 1; i >= 0; i-- {
		r := repls[i]
		tail := append([]string(nil), lines[r.at+r.n:]...)
		lines = append(append(lines[:r.at], r.with...), tail...)
	}
	if len(lines) == 0 {
		return "", nil
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// rebuild returns the replacement for a hunk matched at lines[at:]: context
// lines keep the file's own text (which may differ in whitespace from the
// hunk's), added lines come from new.
func rebuild(lines []string, at int, new []string, kinds string) []string {
	out := make([]string, 0, len(new))
	k, n := at, 0
	for i := 0; i < len(kinds); i++ {
		switch kinds[i] {
		case ' ':
			out = append(out, lines[k])
			k++
			n++
		case '-':
			k++
		default:
			out = append(out, new[n])
			n++
		}
	}
	return out
}

func hunkErr(name string, i int, c Chunk, why string) error {
	return toolErr(TypeHunk, ErrHunk, "%s: hunk %d (patch line %d, first line %q): %s; no file was changed. Read the file again and make the hunk's context and \"-\" lines match it exactly",
		name, i+1, c.Line, clip(c.firstLine()), why)
}
