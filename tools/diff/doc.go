// Package diff owns the patch tools: apply_patch (the "*** Begin Patch"
// format OpenAI models emit) and apply_unified_diff (standard unified diffs,
// parsed with github.com/bluekeyes/go-gitdiff and applied here with offset
// and whitespace tolerance).
//
// A call is atomic: every file's new content is computed in memory first (a
// Plan that overlays the disk), and only when every hunk of every file
// applies are the files written, each through the workspace's os.Root with a
// temp file and a rename. If a write fails, the files already written are put
// back. The conflict Guard is checked for every path before anything is
// written and told about every write after.
//
// Concurrency: the parsers are pure functions; the handlers keep no state
// between calls and are safe to call concurrently (two calls racing on one
// file end with one of them, whole, per file).
package diff
