package permission

import (
	"errors"
	"os"
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

// mcpWriteTools are the tools that can create a file; the patch tools carry
// their target paths inside the patch text.
var mcpWriteTools = map[string]bool{
	"write_file": true, "apply_patch": true, "apply_unified_diff": true, "replace_in_file": true,
}

// createsMCPConfig reports whether a write would create the workspace's MCP
// config file, which always needs the user (issue 8): an agent must not be
// able to add servers (programs to run) on its own, even in AUTO mode.
func (e *Engine) createsMCPConfig(toolName string, args map[string]any, meta tools.Metadata) bool {
	if e.ws == nil || (!mcpWriteTools[toolName] && meta.Class != tools.ClassWrite) {
		return false
	}
	var named []string
	for _, p := range pathValues(args, meta) {
		// The last component decides: a link as last component either
		// dangles (refused at step 2) or points at an existing file.
		if strings.EqualFold(filepath.Base(p), "mcp.json") {
			named = append(named, p)
		}
	}
	inPatch := false
	if toolName == "apply_patch" || toolName == "apply_unified_diff" {
		for _, v := range args {
			if s, ok := v.(string); ok && strings.Contains(filepath.ToSlash(s), ".agent/mcp.json") {
				inPatch = true
			}
		}
	}
	if len(named) == 0 && !inPatch {
		return false
	}
	// Resolved, so that a linked .agent folder compares equal too.
	target, err := e.ws.Resolve(filepath.Join(".agent", "mcp.json"), true)
	if err != nil {
		// .agent links out of the workspace: the write itself is refused.
		return false
	}
	if _, err := os.Lstat(target); err == nil {
		return false
	}
	if inPatch {
		return true
	}
	for _, p := range named {
		if real, err := e.ws.Resolve(p, true); err == nil && strings.EqualFold(real, target) {
			return true
		}
	}
	return false
}

// insideWorkspace is shellPolicy workspace's heuristic when no OS sandbox
// is enforced: cmd is a safe simple command and every argument, read as a
// path relative to the call's cwd (option values after '=' or a glued '/'
// too), resolves inside the workspace with write access. It is a way to
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
		if _, err := e.ws.Resolve(p, true); err != nil {
			return false
		}
	}
	return true
}
