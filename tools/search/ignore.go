package search

import (
	"strings"

	"github.com/zqagent/sidecar/tools/fs/ignore"
)

// ancestorRules loads the ignore files from the base down to (not
// including) the directory rel where the walk starts: .git/info/exclude
// and the base's .gitignore, then each directory's on the way. The walk
// itself loads the start directory's and those below.
func (r *run) ancestorRules(rel string) *ignore.Rules {
	if rel == "" {
		return r.ignores.Load(nil, "", ignore.RootOpener(r.root, "."), ignore.ExcludeFile)
	}
	rules := r.ignores.Load(nil, "", ignore.RootOpener(r.root, "."), ignore.ExcludeFile, ignore.FileName)
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		rules = r.ignores.Load(rules, dir, ignore.RootOpener(r.root, relPath(dir)))
	}
	return rules
}
