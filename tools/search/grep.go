// Package search owns the grep tool: a parallel, .gitignore-aware regex
// search over the workspace.
//
// Concurrency: Grep walks the tree on the caller's goroutine and searches
// files on a bounded pool of worker goroutines it starts and waits for; it
// keeps no state between calls, so any number of searches may run at once.
// Files are read whole; a literal that every match must contain is found with
// bytes.Index before the regexp ever runs, and only the line around a
// candidate is checked.
//
// Confinement: the search starts through an os.Root on the workspace (or
// the granted directory searched); from there each directory and file is
// opened relative to its parent directory's open descriptor, one name at a
// time and never following a link (openat with O_NOFOLLOW on Unix, the
// os.Root elsewhere), so a directory swapped for a link mid-walk cannot
// lead out. Opens are non-blocking, and FIFOs, sockets and devices are
// skipped (refused when named).
package search

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

//go:embed grep.md
var grepDescription string

// maxOutputBytes caps the text returned to the model.
const maxOutputBytes = 96 << 10

// stringList accepts a JSON string or an array of strings.
type stringList []string

func (s *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = strings.FieldsFunc(one, func(r rune) bool { return r == ',' && !strings.ContainsAny(one, "{}") })
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

type grepArgs struct {
	Pattern    string     `json:"pattern" jsonschema:"required" jsonschema_description:"Go (RE2) regular expression, matched per line."`
	Path       string     `json:"path" jsonschema_description:"File or directory relative to the workspace root (default: the root)."`
	Glob       stringList `json:"glob" jsonschema_description:"File name globs to include, e.g. [\"*.go\"]; a leading ! excludes. A single string is accepted too."`
	IgnoreCase bool       `json:"ignore_case" jsonschema_description:"Case-insensitive matching."`
	Context    int        `json:"context" jsonschema:"minimum=0,maximum=10" jsonschema_description:"Lines of context before and after each match."`
	MaxResults int        `json:"max_results" jsonschema:"minimum=1,maximum=2000" jsonschema_description:"Maximum matching lines (default 200)."`
}

// RegisterSearchTool registers grep on reg, confined to ws.
func RegisterSearchTool(reg *tools.Registry, ws *confine.Workspace) {
	reg.MustRegister(tools.Spec{
		Name: "grep",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Description: strings.TrimSpace(grepDescription),
			Parameters:  tools.ParamsOf[grepArgs](),
		}},
		Meta: tools.Metadata{
			Category:     "search",
			RiskLevel:    tools.RiskLow,
			Class:        tools.ClassRead,
			Capabilities: []string{"read"},
			PathArgs:     []string{"path"},
		},
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var a grepArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			if a.Pattern == "" {
				return nil, fmt.Errorf("%w: pattern is required", tools.ErrInvalidArgs)
			}
			if a.Context < 0 || a.MaxResults < 0 {
				return nil, fmt.Errorf("%w: context and max_results must not be negative", tools.ErrInvalidArgs)
			}
			res, err := Grep(ctx, ws, Query{
				Pattern: a.Pattern, Path: a.Path, Globs: a.Glob, IgnoreCase: a.IgnoreCase,
				Context: a.Context, MaxResults: a.MaxResults,
			})
			if err != nil {
				if ctx.Err() == nil && isBadPattern(err) {
					return nil, fmt.Errorf("%w: %w", tools.ErrInvalidArgs, err)
				}
				return nil, fmt.Errorf("grep: %w", err)
			}
			return res.Text(a.Context > 0, maxOutputBytes), nil
		},
	})
}

// Text renders the result as ripgrep does: "path:line:text" for matches,
// "path-line-text" for context lines and "--" between separate groups
// (when withContext), then a summary line. The text is capped at maxBytes.
func (r *Result) Text(withContext bool, maxBytes int) string {
	note := ""
	if r.IgnoreNote != "" {
		note = "\n" + r.IgnoreNote
	}
	if len(r.Lines) == 0 {
		return fmt.Sprintf("No matches (%d files searched).", r.Searched) + note
	}
	var b strings.Builder
	clipped := false
	prev := Line{}
	for i, l := range r.Lines {
		var s strings.Builder
		if withContext && i > 0 && (l.Path != prev.Path || l.Line > prev.Line+1) {
			s.WriteString("--\n")
		}
		sep := ":"
		if l.Context {
			sep = "-"
		}
		s.WriteString(l.Path + sep + strconv.Itoa(l.Line) + sep + l.Text + "\n")
		if b.Len()+s.Len() > maxBytes {
			clipped = true
			break
		}
		b.WriteString(s.String())
		prev = l
	}
	fmt.Fprintf(&b, "\n%d matching lines in %d files", r.Matches, r.Files)
	switch {
	case clipped:
		b.WriteString("; output cut at the size limit: narrow the pattern, path or glob.")
	case r.Truncated:
		b.WriteString("; more matches exist (results capped): narrow the pattern, path or glob, or raise max_results.")
	default:
		b.WriteString(".")
	}
	b.WriteString(note)
	return b.String()
}
