package diff

import (
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/zqagent/sidecar/tools"
)

// FileChange is one file in a patch tool's result.
type FileChange struct {
	Path      string `json:"path"`
	Action    string `json:"action"` // "added", "updated", "deleted", "moved"
	MovedFrom string `json:"movedFrom,omitempty"`
	Added     int    `json:"linesAdded"`
	Removed   int    `json:"linesRemoved"`
}

// Result is what apply_patch and apply_unified_diff return.
type Result struct {
	Files   []FileChange `json:"files"`
	Summary string       `json:"summary"`
}

var _ tools.FileProducer = (*Result)(nil)

// ProducedFiles lists the files the patch wrote or created (a move's
// target; deleted files are not listed).
func (r *Result) ProducedFiles() []string {
	out := []string{}
	for _, f := range r.Files {
		if f.Action != "deleted" {
			out = append(out, f.Path)
		}
	}
	return out
}

func (r *Result) add(path, action, from string, added, removed int) {
	r.Files = append(r.Files, FileChange{Path: path, Action: action, MovedFrom: from, Added: added, Removed: removed})
}

// lineCount counts the lines of a file's content.
func lineCount(b []byte) int {
	n := strings.Count(string(b), "\n")
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// chunkCounts sums the added and removed lines of apply_patch hunks.
func chunkCounts(chunks []Chunk) (added, removed int) {
	for _, c := range chunks {
		added += strings.Count(c.Kinds, "+")
		removed += strings.Count(c.Kinds, "-")
	}
	return added, removed
}

// fragmentCounts sums the added and removed lines of unified hunks.
func fragmentCounts(frags []*gitdiff.TextFragment) (added, removed int) {
	for _, f := range frags {
		added += int(f.LinesAdded)
		removed += int(f.LinesDeleted)
	}
	return added, removed
}

func (r *Result) summarize() {
	parts := make([]string, 0, len(r.Files))
	for _, f := range r.Files {
		s := fmt.Sprintf("%s %s (+%d -%d)", f.Action, f.Path, f.Added, f.Removed)
		if f.MovedFrom != "" {
			s = fmt.Sprintf("moved %s -> %s (+%d -%d)", f.MovedFrom, f.Path, f.Added, f.Removed)
		}
		parts = append(parts, s)
	}
	r.Summary = fmt.Sprintf("applied to %d file(s): %s", len(r.Files), strings.Join(parts, "; "))
}
