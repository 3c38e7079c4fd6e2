package acp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/fs"
	"github.com/zqagent/sidecar/tools/fs/textdiff"
)

// routeFileTools is the hosted server's ipc.Options.OnEngine: read_file
// and write_file go through the editor's fs/read_text_file and
// fs/write_text_file when it offered them at initialize, so that the agent
// sees and edits the editor's buffers, saved or not. The tools keep their
// names, schemas and risk metadata, so the permission engine decides and
// asks exactly as before; the path is confined to the workspace (and its
// granted directories) by tools/fs before the editor is asked, and the
// editor is given the resolved absolute path. Everything else (list_files,
// replace_in_file, patches, grep, explore's reads) works on the disk.
func (a *Agent) routeFileTools(sessionID string, eng *engine.Engine) {
	ws := eng.Permissions().Workspace()
	if ws == nil {
		return
	}
	reg := eng.Registry()
	wrap := func(name string, h func(orig tools.Handler) tools.Handler) {
		spec, ok := reg.Lookup(name)
		if !ok {
			return
		}
		spec.Handler = h(spec.Handler)
		if err := reg.Register(spec); err != nil {
			a.log.Warn("acp: route file tool", "tool", name, "err", err)
		}
	}
	sid := sdk.SessionId(sessionID)
	wrap("read_file", func(orig tools.Handler) tools.Handler { return a.editorRead(sid, ws, orig) })
	wrap("write_file", func(orig tools.Handler) tools.Handler { return a.editorWrite(sid, ws, orig) })
}

type readArgs struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

func (a *Agent) editorRead(sid sdk.SessionId, ws *confine.Workspace, orig tools.Handler) tools.Handler {
	return func(ctx context.Context, call tools.Call) (any, error) {
		if r, _ := a.editorFS(sid); !r {
			return orig(ctx, call)
		}
		var args readArgs
		if err := tools.DecodeArgs(call.Args, &args); err != nil {
			return nil, err
		}
		start, end := max(args.StartLine, 1), args.EndLine
		if end == 0 {
			end = start + fs.MaxReadLines - 1
		}
		if args.StartLine < 0 || end < start {
			return orig(ctx, call) // the tool's own error
		}
		t, err := fs.Open(ws, args.Path, false)
		if err != nil {
			return nil, err
		}
		real, display := t.Real, t.Display
		fi, serr := t.Root.Stat(t.Rel)
		t.Close()
		if serr == nil && !fi.Mode().IsRegular() {
			return orig(ctx, call) // a directory or a device: the tool says what it is
		}
		resp, err := a.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sid, Path: real, Line: sdk.Ptr(start), Limit: sdk.Ptr(end - start + 1)})
		if err != nil {
			// The SDK refuses an empty answer (an empty buffer) and an editor
			// may not know a file: the disk has the answer then.
			a.log.Debug("acp: editor read", "path", real, "err", err)
			return orig(ctx, call)
		}
		return numberLines(display, resp.Content, start, end-start+1), nil
	}
}

type writeArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

func (a *Agent) editorWrite(sid sdk.SessionId, ws *confine.Workspace, orig tools.Handler) tools.Handler {
	return func(ctx context.Context, call tools.Call) (any, error) {
		if _, w := a.editorFS(sid); !w {
			return orig(ctx, call)
		}
		var args writeArgs
		if err := tools.DecodeArgs(call.Args, &args); err != nil {
			return nil, err
		}
		if args.Content == nil || *args.Content == "" {
			return orig(ctx, call) // ACP cannot write an empty file; the tool can
		}
		content := *args.Content
		t, err := fs.Open(ws, args.Path, true)
		if err != nil {
			return nil, err
		}
		real, display := t.Real, t.Display
		old, rerr := t.Root.ReadFile(t.Rel)
		t.Close()
		created := errors.Is(rerr, os.ErrNotExist)
		if rerr != nil && !created {
			return orig(ctx, call) // a directory or unreadable: the tool's own error
		}
		if _, err := a.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sid, Path: real, Content: content}); err != nil {
			return nil, fmt.Errorf("write %s through the editor: %w", display, err)
		}
		res := &fs.WriteResult{Path: display, Bytes: len(content), Created: created}
		res.Added, res.Removed = textdiff.Count(string(old), content)
		return res, nil
	}
}

// numberLines formats the editor's text like read_file: `cat -n` numbers
// from start, long lines cut, the whole capped at fs.MaxReadBytes.
func numberLines(display, content string, start, limit int) string {
	if content == "" {
		return fmt.Sprintf("[%s is empty]", display)
	}
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	if len(lines) > limit {
		lines = lines[:limit]
	}
	var out strings.Builder
	cut, last := false, start-1
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if len(l) > fs.MaxLineChars {
			l = strings.ToValidUTF8(l[:fs.MaxLineChars], "") + " … [line cut]"
			cut = true
		}
		entry := fmt.Sprintf("%6d\t%s\n", start+i, l)
		if out.Len()+len(entry) > fs.MaxReadBytes && i > 0 {
			fmt.Fprintf(&out, "[showing lines %d-%d (output capped at %d KB); call read_file with start_line=%d to read more]\n", start, last, fs.MaxReadBytes>>10, last+1)
			return out.String()
		}
		out.WriteString(entry)
		last = start + i
	}
	if cut {
		fmt.Fprintf(&out, "[lines longer than %d characters were cut]\n", fs.MaxLineChars)
	}
	return out.String()
}
