package permission

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/zqagent/sidecar/tools"
)

// wellKnownPathArgs are argument names checked as paths for every tool, on
// top of Metadata.PathArgs.
var wellKnownPathArgs = []string{"path", "file_path", "cwd"}

// pathValues returns the path strings of the call's path arguments: string
// values and lists of strings.
func pathValues(args map[string]any, meta tools.Metadata) []string {
	var out []string
	seen := map[string]bool{}
	add := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		switch v := args[name].(type) {
		case string:
			if v != "" {
				out = append(out, v)
			}
		case []string:
			for _, s := range v {
				if s != "" {
					out = append(out, s)
				}
			}
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok && s != "" {
					out = append(out, s)
				}
			}
		}
	}
	for _, n := range meta.PathArgs {
		add(n)
	}
	for _, n := range wellKnownPathArgs {
		add(n)
	}
	return out
}

// checkPaths is step 2: every path argument must resolve inside the
// workspace or a grant (a writable one, for tools that are not read-only).
func (e *Engine) checkPaths(args map[string]any, meta tools.Metadata) (string, bool) {
	paths := pathValues(args, meta)
	if len(paths) == 0 {
		return "", true
	}
	if e.ws == nil {
		return "no workspace is set: path arguments are refused", false
	}
	write := meta.Class != tools.ClassRead
	for _, p := range paths {
		if _, err := e.ws.Resolve(p, write); err != nil {
			if errors.Is(err, tools.ErrOutsideWorkspace) {
				return "path is outside the workspace" + grantHint(write) + ": " + p, false
			}
			return "path cannot be checked: " + err.Error(), false
		}
	}
	return "", true
}

func grantHint(write bool) string {
	if write {
		return " (or in a directory granted read-only)"
	}
	return ""
}

// writeTools are the tools that can create or change a file; the patch
// tools carry their target paths inside the patch text.
var writeTools = map[string]bool{
	"write_file": true, "apply_patch": true, "apply_unified_diff": true, "replace_in_file": true,
}

// patchHeaders are the line prefixes after which a patch names a file
// (apply_patch's envelope, unified and git diffs).
var patchHeaders = []string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:",
	"--- ", "+++ ", "diff --git ", "rename from ", "rename to ", "copy from ", "copy to "}

// protectedWrite returns why a write must always ask the user, in every
// mode and whatever the session grants (issues 8, 13, 14): it creates or
// changes the workspace's MCP config (<workspace>/.agent/mcp.json, which
// names programs to start) or anything inside a .git directory or the
// shadow repository <workspace>/.agent/vcs (config, hooks: programs git
// runs). The paths are compared after resolving links,
// and without regard to case (case-insensitive file systems).
func (e *Engine) protectedWrite(toolName string, args map[string]any, meta tools.Metadata) string {
	if !writeTools[toolName] && meta.Class != tools.ClassWrite {
		return ""
	}
	paths := pathValues(args, meta)
	if toolName == "apply_patch" || toolName == "apply_unified_diff" || len(paths) == 0 {
		// A patch (or a write tool without path arguments): its headers.
		for _, v := range args {
			if s, ok := v.(string); ok {
				paths = append(paths, patchPaths(s)...)
			}
		}
	}
	for _, p := range paths {
		if r := e.protectedPath(p); r != "" {
			return r
		}
	}
	return ""
}

// patchPaths returns the file names a patch text's headers mention, each
// also without a diff's a/ or b/ prefix.
func patchPaths(text string) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, h := range patchHeaders {
			rest, ok := strings.CutPrefix(line, h)
			if !ok {
				continue
			}
			for f := range strings.FieldsSeq(rest) {
				if i := strings.IndexByte(f, '\t'); i >= 0 {
					f = f[:i]
				}
				out = append(out, f)
				if len(f) > 2 && (f[:2] == "a/" || f[:2] == "b/") {
					out = append(out, f[2:])
				}
			}
		}
	}
	return out
}

// protectedPath returns why a write to p must always ask, or "".
func (e *Engine) protectedPath(p string) string {
	const (
		mcpReason = "writes the MCP server config (.agent/mcp.json), which names programs to run: always needs your approval"
		gitReason = "writes inside a .git directory (config, hooks), which git runs programs from: always needs your approval"
	)
	slash := strings.ToLower(filepath.ToSlash(p))
	if slash == ".git" || strings.HasPrefix(slash, ".git/") || strings.Contains(slash, "/.git/") || strings.HasSuffix(slash, "/.git") {
		return gitReason
	}
	if e.ws == nil {
		return ""
	}
	real, err := e.ws.Resolve(p, true)
	if err != nil {
		return "" // refused at step 2, or a path that cannot be resolved
	}
	root := e.ws.Root()
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		// A granted directory: only .git components count there.
		rel = real
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for _, c := range parts {
		if strings.EqualFold(c, ".git") {
			return gitReason
		}
	}
	if len(parts) == 2 && strings.EqualFold(parts[0], ".agent") && strings.EqualFold(parts[1], "mcp.json") {
		return mcpReason
	}
	if len(parts) >= 2 && strings.EqualFold(parts[0], ".agent") && strings.EqualFold(parts[1], "vcs") {
		return gitReason // the shadow repository of per-turn snapshots
	}
	// A linked .agent folder: compare with the resolved config path.
	if !strings.EqualFold(filepath.Base(real), "mcp.json") {
		return ""
	}
	if target, err := e.ws.Resolve(filepath.Join(".agent", "mcp.json"), true); err == nil && strings.EqualFold(target, real) {
		return mcpReason
	}
	return ""
}

// insideWorkspace is shellPolicy workspace's heuristic when no OS sandbox
// is enforced: cmd is a safe simple command and every argument, read as a
// path relative to the call's cwd (option values after '=' or a glued '/'
// too), resolves inside the workspace with write access, and neither it nor
// the cwd is inside a .git directory or the MCP config. It is a way to
// avoid needless prompts, not a security boundary.
func (e *Engine) insideWorkspace(cmd string, args map[string]any) bool {
	if e.ws == nil {
		return false
	}
	words, _, ok := SafeSimpleCommand(cmd)
	if !ok {
		return false
	}
	base := e.ws.Root()
	if cwd, ok := args["cwd"].(string); ok && cwd != "" {
		real, err := e.ws.Resolve(cwd, true)
		if err != nil {
			return false
		}
		base = real
	}
	for _, a := range words[1:] {
		p := a
		if strings.HasPrefix(a, "-") {
			switch i := strings.IndexAny(a, "=/"); {
			case i < 0:
				continue
			case a[i] == '=':
				p = a[i+1:]
			default:
				p = a[i:]
			}
			if p == "" {
				continue
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(base, p)
		}
		if _, err := e.ws.Resolve(p, true); err != nil || e.protectedPath(p) != "" {
			return false // outside, or inside .git or the MCP config
		}
	}
	return e.protectedPath(base) == ""
}
