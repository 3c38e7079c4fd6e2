// Package conflict owns the ConflictGuard: it notices that a file a session
// read was changed afterwards by someone else (another session, the user's
// editor, a build) and refuses that session's write until it reads again.
//
// A Watcher (one per project) follows the workspace with fsnotify and counts,
// per path, the changes it saw. A Guard (one per session) remembers the
// content hash, size and mtime of what its session last read or wrote, plus
// the Watcher's counter at that moment. CheckWrite trusts an unchanged
// counter with an unchanged size and mtime as "not modified" (no hashing);
// anything else (a change event, a path the Watcher does not cover because
// of the watch limit or an error, a different mtime) falls back to hashing
// the file. Watcher.Listen hands the same changes to another mirror of the
// tree (the project's file search index, package filesearch), so that one
// watcher serves both. The hash decides: a file whose content equals what the session
// last saw is not a conflict, so the session's own writes, recorded with
// RecordWrite, never conflict for itself but do for every other Guard that
// read the older content.
//
// Errors: a refused write wraps tools.ErrConflict (error_type "conflict").
//
// Concurrency: Watcher and Guard are safe for concurrent use. The Watcher
// owns one goroutine, started by NewWatcher and waited for by Close. Lock
// order: a Guard's mu may be held while calling Watcher methods (which take
// the Watcher's mu), never the other way around.
package conflict
