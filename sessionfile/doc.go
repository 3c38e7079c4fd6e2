// Package sessionfile is the format of an exported session (session.export
// writes it, session.import reads it): one zip archive (archive/zip, the
// standard library) with
//
//	manifest.json        format "zqagent-session", version 1, the session's
//	                     title and settings, the counts, and each
//	                     attachment's name, size and SHA-256
//	events.jsonl         the event log, one event a line, seq 1..N
//	history.jsonl        the checkpointed history a next turn continues
//	                     from, one message a line (no system prompt)
//	compaction.json      the compaction state (absent when none)
//	attachments/<name>   the session's attachment files (stored, not
//	                     deflated: they are media, compressed already)
//
// Write makes such a file from a session at rest; it checks what it writes
// with the reader's rules and limits, so an export is always importable.
// Read trusts nothing in the file: an unknown format or version, an entry
// it does not expect (a name with "..", an absolute or Windows path, a NUL,
// a directory, a symbolic link, a duplicate, an encrypted entry, another
// compression method), a member or line over its limit (the bytes read are
// counted after decompression, whatever the entry declares: a
// decompression bomb stops at the limit), a line that is not one JSON
// object of the expected shape (unknown members refused), an event type
// the protocol does not have, a seq out of order, a system or inline
// attachment message, an attachment whose size or SHA-256 differs from the
// manifest: each is an error naming the place and the reason. Attachment
// files are written only into the *os.Root the caller gives (created, never
// replaced), and only under names of the sidecar's own form
// (<digits>-<digits>-<letters, digits, ".", "_", "-">); on error the files
// Read wrote are removed.
//
// Limits (DefaultLimits): 768 MiB for the whole file, 1,000,000 events of
// at most 4 MiB each and 128 MiB together, 100,000 messages of at most
// 8 MiB each and 64 MiB together, 10,000 attachments of at most 64 MiB
// each and 512 MiB together, 1 MiB of manifest and of compaction state.
//
// Concurrency: the package holds no state.
package sessionfile
