package sessionfile

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/zqagent/sidecar/llm"
)

// Contents is a session file as Read found it; its attachments are files
// in the root Read wrote them to.
type Contents struct {
	Manifest   Manifest
	Events     []Event
	History    []llm.Message
	Compaction json.RawMessage // nil: none
}

// Read checks the session file r (size bytes) against the format and lim,
// and writes its attachments into dst (each created, never replaced, under
// its name in the manifest). On error it removes the files it wrote, and
// the error wraps ErrInvalid, ErrTooLarge or ErrVersion and says what and
// where, or is dst's file system error.
func Read(r io.ReaderAt, size int64, dst *os.Root, lim Limits) (*Contents, error) {
	if size > lim.FileBytes {
		return nil, fmt.Errorf("%w: the file has %d bytes, at most %d", ErrTooLarge, size, lim.FileBytes)
	}
	zr, err := zip.NewReader(r, size)
	if errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: an entry's name is an absolute path or leads out with \"..\"", ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: not a zip archive: %v", ErrInvalid, err)
	}
	if len(zr.File) > lim.entries() {
		return nil, fmt.Errorf("%w: %d entries, at most %d", ErrTooLarge, len(zr.File), lim.entries())
	}
	members, atts, err := entries(zr)
	if err != nil {
		return nil, err
	}
	c := &Contents{}
	if c.Manifest, err = readManifest(members[ManifestName], lim); err != nil {
		return nil, err
	}
	if err := matchAttachments(c.Manifest.Attachments, atts); err != nil {
		return nil, err
	}
	if c.Events, err = readEvents(members[EventsName], lim); err != nil {
		return nil, err
	}
	if len(c.Events) != c.Manifest.Events {
		return nil, fmt.Errorf("%w: %s has %d events, the manifest says %d", ErrInvalid, EventsName, len(c.Events), c.Manifest.Events)
	}
	if c.History, err = readHistory(members[HistoryName], lim); err != nil {
		return nil, err
	}
	if len(c.History) != c.Manifest.Messages {
		return nil, fmt.Errorf("%w: %s has %d messages, the manifest says %d", ErrInvalid, HistoryName, len(c.History), c.Manifest.Messages)
	}
	if f := members[CompactionName]; f != nil {
		b, err := readMember(f, lim.CompactionBytes)
		if err != nil {
			return nil, err
		}
		if !isObject(b) {
			return nil, fmt.Errorf("%w: %s is not a JSON object", ErrInvalid, CompactionName)
		}
		c.Compaction = b
	}
	if err := writeAttachmentFiles(c.Manifest.Attachments, atts, dst); err != nil {
		return nil, err
	}
	return c, nil
}

// entries sorts the archive's entries into the fixed members and the
// attachments, refusing anything else.
func entries(zr *zip.Reader) (members map[string]*zip.File, atts map[string]*zip.File, err error) {
	members, atts = map[string]*zip.File{}, map[string]*zip.File{}
	seen := make(map[string]bool, len(zr.File))
	for _, f := range zr.File {
		name := f.Name
		if seen[name] {
			return nil, nil, fmt.Errorf("%w: entry %s appears twice", ErrInvalid, quote(name))
		}
		seen[name] = true
		if f.Flags&0x1 != 0 {
			return nil, nil, fmt.Errorf("%w: entry %s is encrypted", ErrInvalid, quote(name))
		}
		if f.Method != zip.Store && f.Method != zip.Deflate {
			return nil, nil, fmt.Errorf("%w: entry %s uses compression method %d (stored or deflated only)", ErrInvalid, quote(name), f.Method)
		}
		if t := f.Mode().Type(); t != 0 {
			return nil, nil, fmt.Errorf("%w: entry %s is a %s, not a file", ErrInvalid, quote(name), typeName(t))
		}
		switch file, isAtt := strings.CutPrefix(name, AttachmentDir+"/"); {
		case isMember(name):
			members[name] = f
		case isAtt && validAttachmentName(file):
			atts[file] = f
		default:
			return nil, nil, fmt.Errorf("%w: unexpected entry %s (only %s, %s, %s, %s and %s/<name> of the form <digits>-<digits>-<name>)",
				ErrInvalid, quote(name), ManifestName, EventsName, HistoryName, CompactionName, AttachmentDir)
		}
	}
	for _, name := range []string{ManifestName, EventsName, HistoryName} {
		if members[name] == nil {
			return nil, nil, fmt.Errorf("%w: no %s", ErrInvalid, name)
		}
	}
	return members, atts, nil
}

func typeName(t fs.FileMode) string {
	switch {
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// readMember reads a whole member of at most limit bytes, counting what
// decompression yields (not what the entry declares).
func readMember(f *zip.File, limit int64) ([]byte, error) {
	if f.UncompressedSize64 > uint64(limit) {
		return nil, fmt.Errorf("%w: %s has %d bytes, at most %d", ErrTooLarge, f.Name, f.UncompressedSize64, limit)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, f.Name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s has more than %d bytes", ErrTooLarge, f.Name, limit)
	}
	return b, nil
}

func readManifest(f *zip.File, lim Limits) (Manifest, error) {
	b, err := readMember(f, lim.ManifestBytes)
	if err != nil {
		return Manifest{}, err
	}
	// The format and version first: a newer file is "unsupported
	// version", not "unknown member".
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: %v", ErrInvalid, ManifestName, err)
	}
	if head.Format != FormatName {
		return Manifest{}, fmt.Errorf("%w: %s: format %s, not %q", ErrInvalid, ManifestName, quote(head.Format), FormatName)
	}
	if head.Version != Version {
		return Manifest{}, fmt.Errorf("%w: version %d; this sidecar reads version %d", ErrVersion, head.Version, Version)
	}
	var m Manifest
	if err := strictUnmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: %v", ErrInvalid, ManifestName, err)
	}
	if err := checkSession(m.Session); err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: session: %v", ErrInvalid, ManifestName, err)
	}
	if m.Events < 0 || m.Events > lim.Events {
		return Manifest{}, fmt.Errorf("%w: %d events, at most %d", ErrTooLarge, m.Events, lim.Events)
	}
	if m.Messages < 0 || m.Messages > lim.Messages {
		return Manifest{}, fmt.Errorf("%w: %d history messages, at most %d", ErrTooLarge, m.Messages, lim.Messages)
	}
	if err := checkAttachments(m.Attachments, lim); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", ManifestName, err)
	}
	return m, nil
}

// matchAttachments checks that the manifest and the archive list the same
// attachments.
func matchAttachments(list []Attachment, atts map[string]*zip.File) error {
	for _, a := range list {
		if atts[a.Name] == nil {
			return fmt.Errorf("%w: attachment %s is in the manifest but not in the file", ErrInvalid, a.Name)
		}
	}
	if len(atts) != len(list) {
		listed := make(map[string]bool, len(list))
		for _, a := range list {
			listed[a.Name] = true
		}
		for name := range atts {
			if !listed[name] {
				return fmt.Errorf("%w: attachment %s is in the file but not in the manifest", ErrInvalid, quote(name))
			}
		}
	}
	return nil
}

// lines calls fn with each line of member f (without its newline), at most
// lineMax bytes each and total together; the last line may lack its
// newline.
func lines(f *zip.File, lineMax int, total int64, fn func(n int, line []byte) error) error {
	if f.UncompressedSize64 > uint64(total) {
		return fmt.Errorf("%w: %s has %d bytes, at most %d", ErrTooLarge, f.Name, f.UncompressedSize64, total)
	}
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, f.Name, err)
	}
	defer rc.Close()
	lr := &io.LimitedReader{R: rc, N: total + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, min(lineMax, 64<<10)), lineMax)
	n := 0
	for sc.Scan() {
		n++
		if lr.N <= 0 {
			break
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			return fmt.Errorf("%w: %s line %d is empty", ErrInvalid, f.Name, n)
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if lr.N <= 0 {
		return fmt.Errorf("%w: %s has more than %d bytes", ErrTooLarge, f.Name, total)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%w: %s line %d has more than %d bytes", ErrTooLarge, f.Name, n+1, lineMax)
		}
		return fmt.Errorf("%w: %s: %v", ErrInvalid, f.Name, err)
	}
	return nil
}

func readEvents(f *zip.File, lim Limits) ([]Event, error) {
	var out []Event
	err := lines(f, lim.EventBytes, lim.EventsBytes, func(n int, line []byte) error {
		if n > lim.Events {
			return fmt.Errorf("%w: more than %d events", ErrTooLarge, lim.Events)
		}
		var e Event
		if err := strictUnmarshal(line, &e); err != nil {
			return fmt.Errorf("%w: %s line %d: %v", ErrInvalid, EventsName, n, err)
		}
		if err := checkEvent(int64(n), e); err != nil {
			return fmt.Errorf("%w: %s line %d: %v", ErrInvalid, EventsName, n, err)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

func readHistory(f *zip.File, lim Limits) ([]llm.Message, error) {
	out := []llm.Message{}
	err := lines(f, lim.MessageBytes, lim.HistoryBytes, func(n int, line []byte) error {
		if n > lim.Messages {
			return fmt.Errorf("%w: more than %d history messages", ErrTooLarge, lim.Messages)
		}
		var m llm.Message
		if err := strictUnmarshal(line, &m); err != nil {
			return fmt.Errorf("%w: %s line %d: %v", ErrInvalid, HistoryName, n, err)
		}
		if err := checkMessage(m); err != nil {
			return fmt.Errorf("%w: %s line %d: %v", ErrInvalid, HistoryName, n, err)
		}
		out = append(out, m)
		return nil
	})
	return out, err
}

// writeAttachmentFiles copies each listed attachment into dst, checking
// its size and SHA-256; on error the files it wrote are removed.
func writeAttachmentFiles(list []Attachment, atts map[string]*zip.File, dst *os.Root) (err error) {
	var written []string
	defer func() {
		if err != nil {
			for _, name := range written {
				_ = dst.Remove(name)
			}
		}
	}()
	for _, a := range list {
		created, err := copyAttachment(a, atts[a.Name], dst)
		if created {
			written = append(written, a.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func copyAttachment(a Attachment, f *zip.File, dst *os.Root) (created bool, err error) {
	if f.UncompressedSize64 != uint64(a.Size) {
		return false, fmt.Errorf("%w: attachment %s: the entry has %d bytes, the manifest says %d", ErrInvalid, a.Name, f.UncompressedSize64, a.Size)
	}
	rc, err := f.Open()
	if err != nil {
		return false, fmt.Errorf("%w: attachment %s: %v", ErrInvalid, a.Name, err)
	}
	defer rc.Close()
	out, err := dst.OpenFile(a.Name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("attachment %s: %w", a.Name, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(rc, a.Size+1))
	if cerr := out.Close(); err == nil && cerr != nil {
		return true, fmt.Errorf("attachment %s: %w", a.Name, cerr)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return true, fmt.Errorf("attachment %s: %w", a.Name, err)
		}
		return true, fmt.Errorf("%w: attachment %s: %v", ErrInvalid, a.Name, err)
	}
	if n != a.Size {
		return true, fmt.Errorf("%w: attachment %s has %d bytes or more, the manifest says %d", ErrInvalid, a.Name, n, a.Size)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != a.SHA256 {
		return true, fmt.Errorf("%w: attachment %s: SHA-256 %s, the manifest says %s", ErrInvalid, a.Name, sum, a.SHA256)
	}
	return true, nil // the copy read to the end: the archive's CRC-32 was checked
}
