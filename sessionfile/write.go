package sessionfile

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"time"

	"github.com/zqagent/sidecar/llm"
)

// Export is what Write puts in a file.
type Export struct {
	// Sidecar is the exporting sidecar's version.
	Sidecar string
	Session Session
	// History is the checkpointed history without its system prompt and
	// without inline attachments.
	History []llm.Message
	// Compaction is the compaction state (nil: none).
	Compaction json.RawMessage
	// Events yields the event log in seq order; Write numbers them 1..N.
	Events iter.Seq2[Event, error]
	// Attachments is the session's attachments folder (nil: none). Its
	// regular files go in; anything else in it (a directory, a link) is
	// left out.
	Attachments fs.FS
}

// Write writes x as a session file to w and returns its manifest. What it
// writes passes Read with the same limits: a session over a limit is an
// ErrTooLarge error naming it, an event or message Read would refuse is an
// ErrInvalid error.
func Write(w io.Writer, x Export, lim Limits) (Manifest, error) {
	cw := &countingWriter{w: w, limit: lim.FileBytes}
	zw := zip.NewWriter(cw)
	m := Manifest{Format: FormatName, Version: Version, ExportedAt: time.Now().UTC(), Sidecar: x.Sidecar, Session: x.Session, Attachments: []Attachment{}}
	if len(m.Session.Settings) == 0 {
		m.Session.Settings = json.RawMessage("{}")
	}
	if err := checkSession(m.Session); err != nil {
		return Manifest{}, fmt.Errorf("%w: session: %v", ErrInvalid, err)
	}
	var err error
	if m.Events, err = writeEvents(zw, x.Events, lim); err != nil {
		return Manifest{}, err
	}
	if m.Messages, err = writeHistory(zw, x.History, lim); err != nil {
		return Manifest{}, err
	}
	if len(x.Compaction) > 0 {
		if !isObject(x.Compaction) {
			return Manifest{}, fmt.Errorf("%w: compaction state is not a JSON object", ErrInvalid)
		}
		if int64(len(x.Compaction)) > lim.CompactionBytes {
			return Manifest{}, fmt.Errorf("%w: compaction state of %d bytes, at most %d", ErrTooLarge, len(x.Compaction), lim.CompactionBytes)
		}
		if err := writeMember(zw, CompactionName, x.Compaction); err != nil {
			return Manifest{}, err
		}
	}
	if x.Attachments != nil {
		if m.Attachments, err = writeAttachments(zw, x.Attachments, lim); err != nil {
			return Manifest{}, err
		}
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, fmt.Errorf("session file: manifest: %w", err)
	}
	if int64(len(mb)) > lim.ManifestBytes {
		return Manifest{}, fmt.Errorf("%w: manifest of %d bytes, at most %d", ErrTooLarge, len(mb), lim.ManifestBytes)
	}
	if err := writeMember(zw, ManifestName, mb); err != nil {
		return Manifest{}, err
	}
	if err := zw.Close(); err != nil {
		return Manifest{}, cw.wrap(err)
	}
	return m, nil
}

// countingWriter fails once more than limit bytes were written.
type countingWriter struct {
	w     io.Writer
	n     int64
	limit int64
	over  bool
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.n+int64(len(p)) > c.limit {
		c.over = true
		return 0, fmt.Errorf("%w: the file would have more than %d bytes", ErrTooLarge, c.limit)
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// wrap returns err, or the limit error when the writer ran over.
func (c *countingWriter) wrap(err error) error {
	if c.over {
		return fmt.Errorf("%w: the file would have more than %d bytes", ErrTooLarge, c.limit)
	}
	return fmt.Errorf("session file: %w", err)
}

// jsonLine is v as one line of JSON and its newline; text is kept as it is
// (no HTML escaping), so an event's data goes back byte for byte.
func jsonLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeMember(zw *zip.Writer, name string, b []byte) error {
	f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("session file: %s: %w", name, err)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("session file: %s: %w", name, err)
	}
	return nil
}

func writeEvents(zw *zip.Writer, events iter.Seq2[Event, error], lim Limits) (int, error) {
	f, err := zw.CreateHeader(&zip.FileHeader{Name: EventsName, Method: zip.Deflate, Modified: time.Now().UTC()})
	if err != nil {
		return 0, fmt.Errorf("session file: %s: %w", EventsName, err)
	}
	var n int64
	var total int64
	if events == nil {
		return 0, nil
	}
	for e, err := range events {
		if err != nil {
			return 0, fmt.Errorf("session file: events: %w", err)
		}
		n++
		if n > int64(lim.Events) {
			return 0, fmt.Errorf("%w: more than %d events", ErrTooLarge, lim.Events)
		}
		e.Seq = n
		if err := checkEvent(n, e); err != nil {
			return 0, fmt.Errorf("%w: event %d: %v", ErrInvalid, n, err)
		}
		line, err := jsonLine(e)
		if err != nil {
			return 0, fmt.Errorf("%w: event %d: %v", ErrInvalid, n, err)
		}
		if len(line) > lim.EventBytes {
			return 0, fmt.Errorf("%w: event %d (%s) has %d bytes, at most %d", ErrTooLarge, n, e.Type, len(line), lim.EventBytes)
		}
		if total += int64(len(line)); total > lim.EventsBytes {
			return 0, fmt.Errorf("%w: events of more than %d bytes together", ErrTooLarge, lim.EventsBytes)
		}
		if _, err := f.Write(line); err != nil {
			return 0, fmt.Errorf("session file: events: %w", err)
		}
	}
	return int(n), nil
}

func writeHistory(zw *zip.Writer, msgs []llm.Message, lim Limits) (int, error) {
	if len(msgs) > lim.Messages {
		return 0, fmt.Errorf("%w: %d history messages, at most %d", ErrTooLarge, len(msgs), lim.Messages)
	}
	f, err := zw.CreateHeader(&zip.FileHeader{Name: HistoryName, Method: zip.Deflate, Modified: time.Now().UTC()})
	if err != nil {
		return 0, fmt.Errorf("session file: %s: %w", HistoryName, err)
	}
	var total int64
	for i, m := range msgs {
		if err := checkMessage(m); err != nil {
			return 0, fmt.Errorf("%w: history message %d: %v", ErrInvalid, i+1, err)
		}
		line, err := jsonLine(m)
		if err != nil {
			return 0, fmt.Errorf("%w: history message %d: %v", ErrInvalid, i+1, err)
		}
		if len(line) > lim.MessageBytes {
			return 0, fmt.Errorf("%w: history message %d has %d bytes, at most %d", ErrTooLarge, i+1, len(line), lim.MessageBytes)
		}
		if total += int64(len(line)); total > lim.HistoryBytes {
			return 0, fmt.Errorf("%w: history of more than %d bytes", ErrTooLarge, lim.HistoryBytes)
		}
		if _, err := f.Write(line); err != nil {
			return 0, fmt.Errorf("session file: history: %w", err)
		}
	}
	return len(msgs), nil
}

// writeAttachments copies the regular files of dir, in name order.
func writeAttachments(zw *zip.Writer, dir fs.FS, lim Limits) ([]Attachment, error) {
	entries, err := fs.ReadDir(dir, ".")
	if err != nil {
		return nil, fmt.Errorf("session file: attachments: %w", err)
	}
	out := []Attachment{}
	var total int64
	for _, d := range entries {
		if !d.Type().IsRegular() {
			continue
		}
		name := d.Name()
		if !validAttachmentName(name) {
			return nil, fmt.Errorf("%w: attachment file %s: not a name of the sidecar's form", ErrInvalid, quote(name))
		}
		if len(out) == lim.Attachments {
			return nil, fmt.Errorf("%w: more than %d attachments", ErrTooLarge, lim.Attachments)
		}
		a, err := writeAttachment(zw, dir, name, lim.AttachmentBytes)
		if err != nil {
			return nil, err
		}
		if total += a.Size; total > lim.AttachmentsBytes {
			return nil, fmt.Errorf("%w: attachments of more than %d bytes together", ErrTooLarge, lim.AttachmentsBytes)
		}
		out = append(out, a)
	}
	return out, nil // in name order: fs.ReadDir sorts
}

func writeAttachment(zw *zip.Writer, dir fs.FS, name string, limit int64) (Attachment, error) {
	src, err := dir.Open(name)
	if err != nil {
		return Attachment{}, fmt.Errorf("session file: attachment %s: %w", name, err)
	}
	defer src.Close()
	f, err := zw.CreateHeader(&zip.FileHeader{Name: AttachmentDir + "/" + name, Method: zip.Store, Modified: time.Now().UTC()})
	if err != nil {
		return Attachment{}, fmt.Errorf("session file: attachment %s: %w", name, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(src, limit+1))
	if err != nil {
		return Attachment{}, fmt.Errorf("session file: attachment %s: %w", name, err)
	}
	if n > limit {
		return Attachment{}, fmt.Errorf("%w: attachment %s has more than %d bytes", ErrTooLarge, name, limit)
	}
	return Attachment{Name: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
