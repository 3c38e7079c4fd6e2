package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
)

// Tool names must fit the providers' function-name limit.
const (
	maxToolName  = 64
	maxServerLen = 20 // the server part is cut to this when the name is long
	toolPrefix   = "mcp__"
	toolSep      = "__"
)

// sanitize keeps [a-zA-Z0-9_-] and replaces every other rune with '_'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

func shortHash(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:3])
}

// ToolName is the registered name of a server's tool:
// mcp__<server>__<tool>, both parts sanitized to [a-zA-Z0-9_-]. A name over
// 64 characters is cut (the server part to 20, then the tool part) and gets
// a 6-hex hash of the original names so that different long names stay
// different.
func ToolName(server, tool string) string {
	s, t := sanitize(server), sanitize(tool)
	name := toolPrefix + s + toolSep + t
	if len(name) <= maxToolName {
		return name
	}
	if len(s) > maxServerLen {
		s = s[:maxServerLen]
	}
	suffix := "_" + shortHash(server, tool)
	room := maxToolName - len(toolPrefix) - len(s) - len(toolSep) - len(suffix)
	if len(t) > room {
		t = t[:room]
	}
	return toolPrefix + s + toolSep + t + suffix
}

// toolKey identifies a tool of a server by its original names.
type toolKey struct{ server, tool string }

// assignNames gives every tool its registered name. Collisions (two
// original names that sanitize alike) are resolved deterministically: the
// tools are sorted by server then tool, the first keeps the name and the
// next get _2, _3, ... (cut to fit).
func assignNames(keys []toolKey) map[toolKey]string {
	sorted := append([]toolKey(nil), keys...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].server != sorted[j].server {
			return sorted[i].server < sorted[j].server
		}
		return sorted[i].tool < sorted[j].tool
	})
	out := make(map[toolKey]string, len(sorted))
	used := make(map[string]bool, len(sorted))
	for _, k := range sorted {
		base := ToolName(k.server, k.tool)
		name := base
		for n := 2; used[name]; n++ {
			suf := "_" + strconv.Itoa(n)
			name = base[:min(len(base), maxToolName-len(suf))] + suf
		}
		used[name] = true
		out[k] = name
	}
	return out
}
