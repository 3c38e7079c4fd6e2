package search

import (
	"github.com/zqagent/sidecar/tools/fs/ignore"
)

// startRules loads the ignore files from the base down to the directory
// rel where the walk starts, rel's included (ignore.Walk.Start); the walk
// loads those of the directories it enters below.
func (r *run) startRules(rel string) *ignore.Rules {
	return r.ignores.Start(rel, func(dir string) ignore.Opener {
		return ignore.RootOpener(r.root, relPath(dir))
	})
}
