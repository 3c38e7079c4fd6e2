package sessionfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
)

// The rules both Write and Read apply.

// attachmentName is the form of the names the sidecar gives attachment
// files (<unixms>-<index>-<sanitized name>, tools/media): no separator, no
// dot-dot, no NUL, no device name, nothing a file system reads as a path.
var attachmentName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,6}-[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$`)
})

// validAttachmentName reports whether name may name a file under
// attachments/.
func validAttachmentName(name string) bool {
	return attachmentName().MatchString(name) && !strings.HasSuffix(name, ".")
}

// turnIDPattern is what a turn id of an event may be.
var turnIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`) })

var knownEventTypes = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, t := range protocol.EventTypes() {
		m[string(t)] = true
	}
	return m
})

// earliest and latest bound an event's time (unix milliseconds that fit
// the store's column and years a person can read).
var (
	earliest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
)

// checkEvent checks event n (1-based) of the file.
func checkEvent(n int64, e Event) error {
	if e.Seq != n {
		return fmt.Errorf("seq %d where %d is due (seqs run 1, 2, 3, … without a gap)", e.Seq, n)
	}
	if !knownEventTypes()[e.Type] {
		return fmt.Errorf("unknown event type %s", quote(e.Type))
	}
	if e.TurnID != "" && !turnIDPattern().MatchString(e.TurnID) {
		return fmt.Errorf("bad turnId %s", quote(e.TurnID))
	}
	if e.Time.Before(earliest) || e.Time.After(latest) {
		return fmt.Errorf("time %s out of range", e.Time.Format(time.RFC3339))
	}
	if !isObject(e.Data) {
		return fmt.Errorf("data of %s is not a JSON object", e.Type)
	}
	if _, err := protocol.DecodeData(protocol.EventType(e.Type), e.Data); err != nil {
		return fmt.Errorf("data of %s: %v", e.Type, err)
	}
	return nil
}

// checkMessage checks a history message.
func checkMessage(m llm.Message) error {
	switch m.Role {
	case llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
	default:
		return fmt.Errorf("role %s (user, assistant or tool)", quote(m.Role))
	}
	if len(m.Attachments) > 0 {
		return fmt.Errorf("inline attachments (only attachmentRefs are kept)")
	}
	for _, s := range []string{m.ToolCallID, m.Name, m.Notice} {
		if len(s) > 256 {
			return fmt.Errorf("a name or id of more than 256 bytes")
		}
	}
	for _, tc := range m.ToolCalls {
		if len(tc.ID) > 256 || len(tc.Name) > 256 {
			return fmt.Errorf("a tool call's name or id of more than 256 bytes")
		}
	}
	for _, r := range m.AttachmentRefs {
		name, ok := strings.CutPrefix(r.Path, AttachmentDir+"/")
		if !ok || !validAttachmentName(name) {
			return fmt.Errorf("attachment ref path %s is not %s/<name>", quote(r.Path), AttachmentDir)
		}
		if r.Size < 0 || len(r.Name) > 256 || len(r.MimeType) > 256 {
			return fmt.Errorf("attachment ref %s: bad name, type or size", quote(r.Path))
		}
	}
	return nil
}

// checkSession checks the manifest's session.
func checkSession(s Session) error {
	if !utf8.ValidString(s.Title) || len(s.Title) > 4096 {
		return fmt.Errorf("title: not UTF-8 or longer than 4096 bytes")
	}
	if s.TitleSource != "auto" && s.TitleSource != "user" {
		return fmt.Errorf("titleSource %s (auto or user)", quote(s.TitleSource))
	}
	for _, f := range []struct{ name, v string }{{"id", s.ID}, {"model", s.Model}, {"mode", s.Mode}, {"agent", s.Agent}, {"provider", s.Provider}} {
		if len(f.v) > 256 || !printable(f.v) {
			return fmt.Errorf("%s %s: not printable or longer than 256 bytes", f.name, quote(f.v))
		}
	}
	if s.TaskCount < 0 || s.TaskCount > 1_000_000_000 {
		return fmt.Errorf("taskCount %d out of range", s.TaskCount)
	}
	if !isObject(s.Settings) || len(s.Settings) > 64<<10 {
		return fmt.Errorf("settings: not a JSON object of at most 64 KiB")
	}
	if len(s.Usage) > 0 && (!isObject(s.Usage) || len(s.Usage) > 64<<10) {
		return fmt.Errorf("usage: not a JSON object of at most 64 KiB")
	}
	return nil
}

// checkAttachments checks the manifest's list of attachments.
func checkAttachments(as []Attachment, lim Limits) error {
	if len(as) > lim.Attachments {
		return fmt.Errorf("%w: %d attachments, at most %d", ErrTooLarge, len(as), lim.Attachments)
	}
	seen := make(map[string]bool, len(as))
	var total int64
	for _, a := range as {
		if !validAttachmentName(a.Name) {
			return fmt.Errorf("%w: attachment name %s", ErrInvalid, quote(a.Name))
		}
		if seen[a.Name] {
			return fmt.Errorf("%w: attachment %s listed twice", ErrInvalid, quote(a.Name))
		}
		seen[a.Name] = true
		if a.Size < 0 || a.Size > lim.AttachmentBytes {
			return fmt.Errorf("%w: attachment %s has %d bytes, at most %d", ErrTooLarge, a.Name, a.Size, lim.AttachmentBytes)
		}
		total += a.Size
		if total > lim.AttachmentsBytes {
			return fmt.Errorf("%w: attachments of more than %d bytes together", ErrTooLarge, lim.AttachmentsBytes)
		}
		if !sha256Hex().MatchString(a.SHA256) {
			return fmt.Errorf("%w: attachment %s: sha256 is not 64 lowercase hex digits", ErrInvalid, a.Name)
		}
	}
	return nil
}

var sha256Hex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })

// isObject reports whether b is one JSON object.
func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && json.Valid(b)
}

// printable reports whether s is UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// quote quotes s for a message, cut to 80 bytes.
func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// strictUnmarshal decodes b, one JSON value, into v: unknown members and
// trailing data are errors.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// memberNames are the fixed members, in the order Write writes them.
var memberNames = []string{EventsName, HistoryName, CompactionName, ManifestName}

func isMember(name string) bool { return slices.Contains(memberNames, name) }
