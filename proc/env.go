// Package proc prepares child processes: a sanitized environment that never
// carries the sidecar's secrets, (in the files behind build tags) process
// groups so that a kill reaches every grandchild, and jails that hold even
// the processes that leave their group (setsid, double fork): a cgroup v2
// subtree per jail where the sidecar can make one, else the sidecar as a
// child subreaper with the jail's processes tagged (Linux); tagged
// processes on macOS; the process group alone elsewhere (Windows job
// objects already hold descendants).
package proc

import (
	"os"
	"strings"
)

// secretNames are variables that are the sidecar's own secrets.
var secretNames = map[string]bool{
	"ZQAGENT_TOKEN":     true,
	"OPENAI_API_KEY":    true,
	"DEEPSEEK_API_KEY":  true,
	"ANTHROPIC_API_KEY": true,
	"AZURE_OPENAI_KEY":  true,
}

// IsSecret reports whether an environment variable name holds a sidecar
// secret: the names above and any *_API_KEY, *_API_TOKEN or ZQAGENT_* key
// variable.
func IsSecret(name string) bool {
	u := strings.ToUpper(name)
	if secretNames[u] {
		return true
	}
	return strings.HasSuffix(u, "_API_KEY") || strings.HasSuffix(u, "_API_TOKEN") ||
		(strings.HasPrefix(u, "ZQAGENT_") && (strings.Contains(u, "KEY") || strings.Contains(u, "TOKEN") || strings.Contains(u, "SECRET")))
}

// Env returns base (os.Environ() when nil) without secret variables, with
// extra ("NAME=value") appended last so that it wins. Variables in extra are
// kept even when their names look secret: the user configured them for this
// child on purpose.
func Env(base []string, extra ...string) []string {
	if base == nil {
		base = os.Environ()
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" || IsSecret(name) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}
