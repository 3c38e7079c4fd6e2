package vcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Defaults of Limits. A laptop keeps 2 GiB of snapshots per project; a file
// over 64 MiB, or a binary one over 8 MiB (build output, media, archives),
// is left out of snapshots.
const (
	DefaultCapBytes       int64 = 2 << 30
	DefaultMaxFileBytes   int64 = 64 << 20
	DefaultMaxBinaryBytes int64 = 8 << 20
)

// MinCapBytes is the smallest cap Limits accepts (Limits.Check).
const MinCapBytes int64 = 16 << 20

// Limits bound a project's snapshot storage. Zero members take the
// defaults.
type Limits struct {
	// CapBytes bounds the project's snapshot storage (its repository's
	// objects, see Usage); over it, the oldest turns' snapshots are
	// collected and those turns say Expired.
	CapBytes int64 `json:"capBytes,omitempty"`
	// MaxFileBytes: a file larger than this is left out of snapshots.
	MaxFileBytes int64 `json:"maxFileBytes,omitempty"`
	// MaxBinaryBytes: a binary file (a NUL byte in its first 8,000 bytes,
	// git's test) larger than this is left out of snapshots.
	MaxBinaryBytes int64 `json:"maxBinaryBytes,omitempty"`
}

// withDefaults fills in the zero members.
func (l Limits) withDefaults() Limits {
	if l.CapBytes <= 0 {
		l.CapBytes = DefaultCapBytes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxBinaryBytes <= 0 {
		l.MaxBinaryBytes = DefaultMaxBinaryBytes
	}
	return l
}

// CheckCap reports whether capBytes is a valid cap (0 means the default):
// at least MinCapBytes.
func CheckCap(capBytes int64) error {
	if capBytes != 0 && capBytes < MinCapBytes {
		return fmt.Errorf("snapshot cap of %d bytes: must be 0 (the default, %d) or at least %d", capBytes, DefaultCapBytes, MinCapBytes)
	}
	return nil
}

// Reasons a file was left out of a snapshot.
const (
	OmittedTooLarge = "too_large" // over Limits.MaxFileBytes
	OmittedBinary   = "binary"    // binary and over Limits.MaxBinaryBytes
)

// OmittedFile is a file a snapshot left out.
type OmittedFile struct {
	// Path is relative to the workspace, with '/'.
	Path string `json:"path"`
	// Size is the file's size in bytes when the snapshot was taken.
	Size int64 `json:"size"`
	// Reason is OmittedTooLarge or OmittedBinary.
	Reason string `json:"reason"`
}

// maxOmittedListed bounds the omitted files a snapshot's message lists;
// the rest are counted (an Agent-Omitted-More trailer).
const maxOmittedListed = 1000

// sniffBytes is how much of a file the binary test reads, as git does.
const sniffBytes = 8000

// omittedLocked lists the files git add would write (untracked and not
// ignored, or changed since the private index) that the limits leave out.
// It reads through root, following no link (a link is never large).
func (s *SessionVCS) omittedLocked(ctx context.Context, g *runner, root *os.Root) ([]OmittedFile, error) {
	out, err := g.output(ctx, nil, "ls-files", "-z", "--others", "--modified", "--exclude-standard", "--", ".")
	if err != nil {
		return nil, fmt.Errorf("list changed files: %w", err)
	}
	lim := s.plan.Limits.withDefaults()
	var omitted []OmittedFile
	seen := map[string]bool{}
	for rel := range strings.SplitSeq(string(out), "\x00") {
		if rel == "" || seen[rel] {
			continue
		}
		seen[rel] = true
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fi, err := root.Lstat(filepath.FromSlash(rel))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() <= lim.MaxBinaryBytes && fi.Size() <= lim.MaxFileBytes {
			continue // gone, a link, a folder or small: git add decides
		}
		switch {
		case fi.Size() > lim.MaxFileBytes:
			omitted = append(omitted, OmittedFile{Path: rel, Size: fi.Size(), Reason: OmittedTooLarge})
		case isBinary(root, rel):
			omitted = append(omitted, OmittedFile{Path: rel, Size: fi.Size(), Reason: OmittedBinary})
		}
	}
	slices.SortFunc(omitted, func(a, b OmittedFile) int { return strings.Compare(a.Path, b.Path) })
	return omitted, nil
}

// isBinary reports whether rel has a NUL byte in its first sniffBytes. An
// unreadable file counts as text: git add then skips it (--ignore-errors).
func isBinary(root *os.Root, rel string) bool {
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, sniffBytes)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false
	}
	return bytes.IndexByte(buf[:n], 0) >= 0
}

// leaveOutLocked keeps the omitted files out of the coming git add: it
// drops them from the private index (an excluded file that is in the index
// would still be added) and writes the session's exclude file, the shared
// rules plus one anchored pattern per omitted file. It returns that file's
// path, for core.excludesFile.
func (s *SessionVCS) leaveOutLocked(ctx context.Context, g *runner, omitted []OmittedFile) (string, error) {
	name := "exclude-" + refComponent(s.id)
	dir, err := s.openPrivate()
	if err != nil {
		return "", err
	}
	defer dir.Close()
	if len(omitted) == 0 {
		if err := dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("vcs exclude file: %w", err)
		}
		return g.excludes, nil
	}
	var drop bytes.Buffer
	rules := excludeRules + "# left out of snapshots: too large or binary (vcs.Limits)\n"
	for _, o := range omitted {
		drop.WriteString(o.Path)
		drop.WriteByte(0)
		rules += excludePattern(s.plan.prefix()+o.Path) + "\n"
	}
	if _, err := g.output(ctx, &drop, "update-index", "-z", "--force-remove", "--stdin"); err != nil {
		return "", fmt.Errorf("leave out large files: %w", err)
	}
	if cur, err := readPrivate(dir, name); err != nil || string(cur) != rules {
		if err := writePrivate(dir, name, []byte(rules)); err != nil {
			return "", fmt.Errorf("vcs exclude file: %w", err)
		}
	}
	return filepath.Join(s.plan.privateDir(), name), nil
}

// excludePattern is a gitignore pattern matching exactly the file rel
// (relative to the work tree): anchored, glob characters and trailing
// spaces escaped. A line break cannot be written in an ignore file, so it
// becomes '?', which matches it (and, rarely, a sibling differing only
// there, which is then left out too).
func excludePattern(rel string) string {
	var b strings.Builder
	b.WriteByte('/')
	trail := len(rel) - len(strings.TrimRight(rel, " "))
	for i, r := range rel {
		switch {
		case r == '\n' || r == '\r':
			b.WriteByte('?')
		case r == '\\' || r == '*' || r == '?' || r == '[' || (r == ' ' && i >= len(rel)-trail):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// omittedTrailers are the commit trailers that record omitted files: one
// "Agent-Omitted: <reason> <size> <quoted path>" each, up to
// maxOmittedListed, then "Agent-Omitted-More: <n>".
func omittedTrailers(omitted []OmittedFile) []string {
	var out []string
	for i, o := range omitted {
		if i == maxOmittedListed {
			out = append(out, fmt.Sprintf("Agent-Omitted-More: %d", len(omitted)-i))
			break
		}
		out = append(out, fmt.Sprintf("Agent-Omitted: %s %d %s", o.Reason, o.Size, strconv.Quote(o.Path)))
	}
	return out
}

// parseOmitted reads the omitted-file trailers of a commit body; more
// counts the files not listed.
func parseOmitted(body string) (omitted []OmittedFile, more int) {
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, "Agent-Omitted-More: "); ok {
			more, _ = strconv.Atoi(strings.TrimSpace(v))
			continue
		}
		v, ok := strings.CutPrefix(line, "Agent-Omitted: ")
		if !ok {
			continue
		}
		reason, rest, _ := strings.Cut(v, " ")
		size, quoted, _ := strings.Cut(rest, " ")
		n, err := strconv.ParseInt(size, 10, 64)
		p, qerr := strconv.Unquote(quoted)
		if err != nil || qerr != nil {
			continue
		}
		omitted = append(omitted, OmittedFile{Path: p, Size: n, Reason: reason})
	}
	return omitted, more
}
