// Package filesearch is the fuzzy file search of a project (files.search:
// the composer's "@" mentions). An Index holds the workspace's paths in
// memory, ranks them for a query with fzf's matcher and says which
// characters matched, for highlighting.
//
// What it holds: every regular file and directory below the root that a
// list_files walk with include_hidden lets through (the rules of package
// ignore: .gitignore files and .git/info/exclude; .git, .hg, .svn and
// node_modules never walked; one Walk's bounds for all the ignore files
// the index reads; dot files are in: ".github/", ".env.example"), plus
// the symbolic links that resolve, inside the root, to a regular file or
// a directory. Links are
// never followed while walking: a linked directory is listed, never
// entered, and a link that leads out of the root (or nowhere) is left out.
// Paths are slash-separated and relative to the root; a directory's ends
// in "/". A name that is not valid UTF-8 or holds a control character
// (U+0000–U+001F, U+007F–U+009F) or a bidirectional formatting character
// is left out with everything below it: it cannot be typed in a composer
// and would show something other than what is on disk.
//
// Bounds: at most Options.MaxEntries paths (DefaultMaxEntries). The first
// walk goes breadth first, so past the bound the index keeps the shallower
// paths; Results.Truncated says so. A query has at most MaxQueryRunes
// characters.
//
// Kept current: the first Search builds the index (a walk in the index's
// goroutine; a cancelled Search does not stop it). From then on the owner
// reports changes (Changed with a path the project's watcher saw change,
// Lost when the watcher lost events), and the next Search reads just those
// paths again before matching, never the whole tree. The index is rebuilt
// by a walk in the background — searches meanwhile use the previous one —
// when events were lost, when more than MaxPending paths changed between
// two searches, when an ignore file changed, and, when Options.Live says
// the notifications do not cover the whole tree (the watcher's directory
// limit, or no watcher), when a search finds it older than
// Options.RefreshAfter.
//
// Matching: github.com/junegunn/fzf's FuzzyMatchV2 with its "path" scheme
// (bonuses after "/" and at word and camelCase boundaries, for consecutive
// matches), case-insensitive, with Latin diacritics folded. A match that
// lies wholly in the last path element, one whose last element starts
// with the query, and one whose last element (or that element without its
// extension) is the query get bonuses on top, so "server.go" finds
// ".../server.go" before "src/service/errors/view.go". Ties go to the
// shorter path, then the smaller one in byte order. A query that extends
// the previous one (its characters are a subsequence of the new query's)
// only looks at the previous matches when nothing changed in between.
// Results positions are UTF-16 code unit offsets into Path, ascending.
//
// Concurrency: an Index is safe for concurrent use; searches run one at a
// time (each uses every core). Changed and Lost never block on a search:
// they take only a leaf lock. The index owns one goroutine at a time (a
// build), which Close waits for.
package filesearch
