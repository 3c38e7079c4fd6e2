// Package ignore is the one ignore walker rule set of the sidecar: it decides
// which paths a directory walk skips, for list_files, grep, the conflict
// watcher and files.search's index (package filesearch) alike.
//
// The rules:
//   - .git, .hg, .svn and node_modules directories are never walked
//     (AlwaysSkipped); hidden entries are skipped on request (Hidden);
//   - .git/info/exclude of the walk's root and the .gitignore of every
//     directory met on the way down exclude what they match, with
//     gitignore's syntax: "#" comments, "!" negation, a trailing "/" for
//     directories only, a "/" at the start or in the middle anchoring the
//     pattern to its file's directory, "*", "?", "[…]" and "**";
//   - the deepest ignore file with a matching pattern decides, and in it the
//     last matching pattern, as in git. (.ignore files are not read.)
//
// The walkers apply them one way: Walk.Start loads the rules in force where
// a walk starts (a directory named explicitly is walked even when the rules
// exclude it; its entries are judged by the rules), Walk.Enter loads those
// of each directory entered, and Rules.Skip decides about every entry.
// TestWalkersAgree checks that list_files, grep, the watcher and the file
// search index agree.
//
// Bounds: a walk (one Walk value) loads at most MaxPatterns patterns (of
// which MaxGlobs wildcard patterns) and MaxBytes bytes of ignore files in
// all. Past them the files met are not
// loaded (or loaded only in part), the walk records their directories
// (Walk.Truncated, Walk.Note) and Rules.Complete reports false for every
// path below them: the rules of such a directory are not fully known, so
// the walkers treat it conservatively (list_files lists what the loaded
// rules let through; grep does not read files there; the conflict watcher
// watches more directories rather than fewer).
//
// Matching compiles no regular expression: literal names, literal paths and
// "*.ext" patterns are looked up in maps, and only the other patterns are
// matched one by one with github.com/bmatcuk/doublestar/v4.
//
// Concurrency: Rules values are immutable once built and may be shared
// between goroutines. A Walk belongs to one walk and is not safe for
// concurrent use.
package ignore

import "strings"

// FileName is the name of the per-directory ignore files a walk reads.
const FileName = ".gitignore"

// ExcludeFile is the repository's own exclude file, read at the walk's root.
const ExcludeFile = ".git/info/exclude"

// AlwaysSkipped reports whether a directory of this name is never walked:
// version control metadata and node_modules.
func AlwaysSkipped(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", "node_modules":
		return true
	}
	return false
}

// Hidden reports whether a base name is a dot file.
func Hidden(name string) bool {
	return strings.HasPrefix(name, ".") && name != "." && name != ".."
}
