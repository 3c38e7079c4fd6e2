package fs

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/atomicfile"
	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
	"github.com/zqagent/sidecar/tools/fs/textdiff"
)

//go:embed replace_in_file.md
var replaceInFileDescription string

const maxEditFileBytes = 16 << 20

type replaceArgs struct {
	Path       string  `json:"path" jsonschema:"required" jsonschema_description:"File to edit, relative to the workspace root or absolute inside it (or inside a writable granted directory)."`
	OldString  string  `json:"old_string" jsonschema:"required" jsonschema_description:"The exact text to replace, including whitespace and indentation. Must occur exactly once unless replace_all is true."`
	NewString  *string `json:"new_string" jsonschema:"required" jsonschema_description:"The text to put in its place."`
	ReplaceAll bool    `json:"replace_all" jsonschema_description:"Replace every occurrence instead of requiring exactly one. Default false."`
}

func replaceInFileSpec(ws *confine.Workspace, guard *conflict.Guard) tools.Spec {
	return tools.Spec{
		Name: "replace_in_file",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Name:        "replace_in_file",
			Description: replaceInFileDescription,
			Parameters:  tools.ParamsOf[replaceArgs](),
		}},
		Meta: writeMeta("replace_in_file"),
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var a replaceArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			if a.NewString == nil {
				return nil, fmt.Errorf("%w: new_string is required (use \"\" to delete the text)", tools.ErrInvalidArgs)
			}
			return ReplaceInFile(ctx, ws, guard, a.Path, a.OldString, *a.NewString, a.ReplaceAll)
		},
		Preview: func(ctx context.Context, args tools.Args) (string, error) {
			var a replaceArgs
			if err := tools.DecodeArgs(args.Canonical, &a); err != nil {
				return "", err
			}
			if a.NewString == nil {
				return "", fmt.Errorf("%w: new_string is required", tools.ErrInvalidArgs)
			}
			return PreviewReplace(ctx, ws, a.Path, a.OldString, *a.NewString, a.ReplaceAll)
		},
	}
}

// PreviewReplace renders what ReplaceInFile would change, as a unified
// diff (textdiff.Change), writing nothing; it fails where ReplaceInFile
// would (no match, several without all, a binary or too large file).
func PreviewReplace(ctx context.Context, ws *confine.Workspace, p, old, new string, all bool) (string, error) {
	if err := checkReplace(old, new); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	t, err := Open(ws, p, true)
	if err != nil {
		return "", err
	}
	defer t.Close()
	content, updated, _, err := planReplace(ctx, t, nil, p, old, new, all)
	if err != nil {
		return "", err
	}
	return textdiff.Change(t.Display, []byte(content), []byte(updated), true, true), nil
}

// ReplaceInFile replaces old with new in the file at p: exactly one
// occurrence, or all of them when all is set.
func ReplaceInFile(ctx context.Context, ws *confine.Workspace, guard *conflict.Guard, p, old, new string, all bool) (*WriteResult, error) {
	if err := checkReplace(old, new); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := Open(ws, p, true)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	content, updated, n, err := planReplace(ctx, t, guard, p, old, new, all)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(t.Root, t.Rel, []byte(updated), 0o644, atomicfile.KeepMode); err != nil {
		return nil, mapFSError("edit", p, err)
	}
	guard.RecordWrite(t.Real, []byte(updated))
	res := &WriteResult{Path: t.Display, Bytes: len(updated), Replacements: n}
	res.Added, res.Removed = textdiff.Count(content, updated)
	res.Diff = textdiff.Unified(t.Display, content, updated, previewContext, previewLines)
	return res, nil
}

// checkReplace refuses what no file can make right.
func checkReplace(old, new string) error {
	if old == "" {
		return fmt.Errorf("%w: old_string is empty; use write_file to create or overwrite a file", tools.ErrInvalidArgs)
	}
	if old == new {
		return fmt.Errorf("%w: old_string and new_string are the same", tools.ErrInvalidArgs)
	}
	return nil
}

// planReplace reads the file of t and computes its content after the
// replacement (n occurrences), checking guard (nil: none) before it.
func planReplace(ctx context.Context, t *Target, guard *conflict.Guard, p, old, new string, all bool) (content, updated string, n int, err error) {
	fi, err := t.Root.Stat(t.Rel)
	if err != nil {
		return "", "", 0, mapFSError("edit", p, err)
	}
	if fi.IsDir() {
		return "", "", 0, toolErr(TypeIsDir, ErrIsDir, "%s is a directory", t.Display)
	}
	if fi.Size() > maxEditFileBytes {
		return "", "", 0, toolErr(TypeTooLarge, ErrTooLarge, "%s is %d bytes; replace_in_file edits files up to %d MB", t.Display, fi.Size(), maxEditFileBytes>>20)
	}
	data, err := confine.ReadRegular(t.Root, t.Rel, maxEditFileBytes)
	if err != nil {
		return "", "", 0, mapFSError("edit", t.Display, err)
	}
	if looksBinary(data) {
		return "", "", 0, toolErr(TypeBinary, ErrBinary, "%s looks like a binary file", t.Display)
	}
	if err := guard.CheckWriteContext(ctx, t.Real); err != nil {
		return "", "", 0, err
	}
	content = string(data)
	n = strings.Count(content, old)
	if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") {
		// The model wrote LF; the file uses CRLF.
		crOld, crNew := strings.ReplaceAll(old, "\n", "\r\n"), strings.ReplaceAll(new, "\n", "\r\n")
		if m := strings.Count(content, crOld); m > 0 {
			old, new, n = crOld, crNew, m
		}
	}
	switch {
	case n == 0:
		return "", "", 0, toolErr(TypeNoMatch, ErrNoMatch, "in %s%s. Read the file again and copy the text exactly", t.Display, nearestHint(content, old))
	case n > 1 && !all:
		return "", "", 0, toolErr(TypeAmbiguous, ErrAmbiguous, "%d occurrences in %s (at lines %s); include more surrounding lines in old_string to make it unique, or set replace_all to true",
			n, t.Display, matchLines(content, old, 10))
	}
	if all {
		updated = strings.ReplaceAll(content, old, new)
	} else {
		updated = strings.Replace(content, old, new, 1)
	}
	return content, updated, n, nil
}

// matchLines lists the 1-based line numbers where old starts, at most max.
func matchLines(content, old string, max int) string {
	var lines []string
	off := 0
	for len(lines) < max {
		i := strings.Index(content[off:], old)
		if i < 0 {
			break
		}
		lines = append(lines, fmt.Sprint(strings.Count(content[:off+i], "\n")+1))
		off += i + len(old)
	}
	return strings.Join(lines, ", ")
}

// nearestHint points at the file line closest to old_string's first
// non-blank line.
func nearestHint(content, old string) string {
	var first string
	for _, l := range strings.Split(old, "\n") {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	if first == "" {
		return ""
	}
	lines := strings.Split(content, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == first {
			if strings.Contains(content, strings.TrimSpace(old)) {
				return fmt.Sprintf("; the text occurs with different leading or trailing whitespace or line breaks (first line at line %d: %q)", i+1, clip(l))
			}
			return fmt.Sprintf("; its first line matches line %d (%q) but the following lines differ", i+1, clip(l))
		}
	}
	best, bestScore := -1, 0.0
	if len(lines) <= 20000 {
		a := clip(first)
		for i, l := range lines {
			b := clip(strings.TrimSpace(l))
			if s := similarity(a, b); s > bestScore {
				best, bestScore = i, s
			}
		}
	}
	if best < 0 || bestScore < 0.5 {
		return ""
	}
	return fmt.Sprintf("; the closest line is %d: %q", best+1, clip(lines[best]))
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160]
	}
	return s
}

// similarity is 1 - levenshtein(a,b)/max(len): 1 for equal strings.
func similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return 1 - float64(prev[len(b)])/float64(max(len(a), len(b)))
}
