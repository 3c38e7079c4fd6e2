package fs

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/fs/ignore"
)

//go:embed list_files.md
var listFilesDescription string

// Limits of one list_files call.
const (
	MaxListEntries    = 1000
	DefaultListDepth  = 2
	MaxListDepth      = 10
	maxDirEntriesRead = 100_000
)

type listFilesArgs struct {
	Path          string `json:"path" jsonschema_description:"Directory to list, relative to the workspace root or absolute inside it (or inside a granted directory). Default: the workspace root."`
	Depth         int    `json:"depth" jsonschema:"minimum=1,maximum=10" jsonschema_description:"How many directory levels to descend. Default 2."`
	IncludeHidden bool   `json:"include_hidden" jsonschema_description:"Also list dot files and dot directories. Default false."`
}

func listFilesSpec(ws *confine.Workspace) tools.Spec {
	return tools.Spec{
		Name: "list_files",
		Schema: llm.ToolSchema{Function: llm.FunctionSchema{
			Name:        "list_files",
			Description: listFilesDescription,
			Parameters:  tools.ParamsOf[listFilesArgs](),
		}},
		Meta: tools.Metadata{
			Category:     "file",
			RiskLevel:    tools.RiskLow,
			Class:        tools.ClassRead,
			Capabilities: []string{"list_files"},
			PathArgs:     []string{"path"},
		},
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var a listFilesArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			return ListFiles(ctx, ws, a.Path, a.Depth, a.IncludeHidden)
		},
	}
}

// ListFiles lists the directory p to the given depth (0 for the default),
// one path per line, sorted, directories with a trailing "/" and symlinks
// with a trailing "@" (never followed). Paths are relative to the workspace
// root (absolute for granted directories), ready for read_file.
func ListFiles(ctx context.Context, ws *confine.Workspace, p string, depth int, hidden bool) (string, error) {
	return listFiles(ctx, ws, p, depth, hidden, nil)
}

// listFiles is ListFiles with a hook that tests use to count the entries
// visited.
func listFiles(ctx context.Context, ws *confine.Workspace, p string, depth int, hidden bool, onVisit func(rel string)) (string, error) {
	if p == "" {
		p = "."
	}
	switch {
	case depth < 0:
		return "", fmt.Errorf("%w: depth must be positive", tools.ErrInvalidArgs)
	case depth == 0:
		depth = DefaultListDepth
	case depth > MaxListDepth:
		depth = MaxListDepth
	}
	t, err := Open(ws, p, false)
	if err != nil {
		return "", err
	}
	defer t.Close()
	fi, err := t.Root.Stat(t.Rel)
	if err != nil {
		return "", mapFSError("list", p, err)
	}
	if kind := confine.SpecialKind(fi.Mode()); kind != "" {
		return "", mapFSError("list", t.Display, fmt.Errorf("%w: it is a %s", confine.ErrSpecialFile, kind))
	}
	if !fi.IsDir() {
		return "", toolErr(TypeNotDir, ErrNotDir, "%s is a file; use read_file to read it", t.Display)
	}

	// The ignore files from the root (or grant) down to the listed
	// directory all apply.
	iw := ignore.NewWalk()
	rules := iw.Start(filepath.ToSlash(t.Rel), func(dir string) ignore.Opener {
		return ignore.RootOpener(t.Root, filepath.FromSlash(cmp.Or(dir, ".")))
	})

	l := lister{ctx: ctx, ws: ws, t: t, hidden: hidden, iw: iw, onVisit: onVisit}
	if err := l.walk(t.Rel, rules, depth); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range l.out {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	switch {
	case l.truncated:
		fmt.Fprintf(&b, "[truncated at %d entries; list a subdirectory or use a smaller depth]\n", MaxListEntries)
	case len(l.out) == 0:
		fmt.Fprintf(&b, "[%s has no entries to show", t.Display)
		if l.skipped > 0 {
			fmt.Fprintf(&b, "; %d hidden, ignored or skipped", l.skipped)
		}
		b.WriteString("]\n")
	}
	if note := iw.Note("the entries below them are listed by the rules that were loaded"); note != "" {
		b.WriteString(note + "\n")
	}
	return b.String(), nil
}

type lister struct {
	ctx       context.Context
	ws        *confine.Workspace
	t         *Target
	hidden    bool
	out       []string
	skipped   int
	truncated bool
	iw        *ignore.Walk
	onVisit   func(rel string) // tests: called for each entry the walk visits
}

func (l *lister) walk(dir string, rules *ignore.Rules, depth int) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	// Non-blocking: a directory swapped for a FIFO after the parent was
	// read must not hang the listing.
	f, fi, err := confine.OpenRead(l.t.Root, dir)
	if err != nil {
		return mapFSError("list", dir, err)
	}
	if !fi.IsDir() {
		f.Close()
		return nil // replaced by a file since the parent was read
	}
	entries, err := f.ReadDir(maxDirEntriesRead)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) && len(entries) == 0 {
		return mapFSError("list", dir, err)
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		if l.truncated {
			return nil
		}
		if err := l.ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		if l.onVisit != nil {
			l.onVisit(filepath.Join(dir, name))
		}
		isDir := e.IsDir()
		rel := filepath.Join(dir, name)
		if (!l.hidden && ignore.Hidden(name)) || rules.Skip(filepath.ToSlash(rel), isDir) {
			l.skipped++
			continue
		}
		if len(l.out) >= MaxListEntries {
			l.truncated = true
			return nil
		}
		shown := l.ws.Rel(filepath.Join(l.t.Root.Name(), rel))
		switch {
		case e.Type()&os.ModeSymlink != 0:
			l.out = append(l.out, shown+"@")
		case isDir:
			l.out = append(l.out, shown+"/")
			if depth > 1 {
				sub := l.iw.Enter(rules, filepath.ToSlash(rel), ignore.RootOpener(l.t.Root, rel))
				if err := l.walk(rel, sub, depth-1); err != nil {
					return err
				}
			}
		default:
			l.out = append(l.out, shown)
		}
	}
	return nil
}
