package ipc

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zqagent/sidecar/engine/llm"
)

// Attachment limits (seed §13).
const (
	MaxAttachments     = 4
	MaxAttachmentBytes = 10 << 20
)

// AttachmentWire is an attachment as a client sends it.
type AttachmentWire struct {
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	// DataURL is data:<mime>;base64,<payload>.
	DataURL string `json:"dataUrl"`
}

// saveAttachments checks the attachments, writes their bytes under the
// session folder (attachments/<time>-<i>-<name>) and returns them inline
// (for the model) and as refs (for history and events).
func saveAttachments(sessionDir string, in []AttachmentWire) ([]llm.Attachment, []llm.StoredAttachment, error) {
	if len(in) == 0 {
		return nil, nil, nil
	}
	if len(in) > MaxAttachments {
		return nil, nil, invalidField("attachments", fmt.Sprintf("at most %d attachments", MaxAttachments))
	}
	type decoded struct {
		a    AttachmentWire
		mime string
		data []byte
	}
	ds := make([]decoded, len(in))
	for i, a := range in {
		field := fmt.Sprintf("attachments[%d].dataUrl", i)
		head, payload, ok := strings.Cut(a.DataURL, ",")
		if !ok || !strings.HasPrefix(head, "data:") || !strings.HasSuffix(head, ";base64") {
			return nil, nil, invalidField(field, "must be data:<mime>;base64,<payload>")
		}
		if base64.StdEncoding.DecodedLen(len(payload)) > MaxAttachmentBytes+3 {
			return nil, nil, invalidField(field, fmt.Sprintf("larger than %d bytes", MaxAttachmentBytes))
		}
		data, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return nil, nil, invalidField(field, "bad base64: "+err.Error())
		}
		if len(data) > MaxAttachmentBytes {
			return nil, nil, invalidField(field, fmt.Sprintf("larger than %d bytes", MaxAttachmentBytes))
		}
		mime := strings.TrimSuffix(strings.TrimPrefix(head, "data:"), ";base64")
		if a.MimeType != "" {
			mime = a.MimeType
		}
		ds[i] = decoded{a: a, mime: mime, data: data}
	}
	dir := filepath.Join(sessionDir, "attachments")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("save attachments: %w", err)
	}
	now := time.Now().UnixMilli()
	atts := make([]llm.Attachment, len(ds))
	refs := make([]llm.StoredAttachment, len(ds))
	for i, d := range ds {
		name := safeName(d.a.Name)
		rel := filepath.ToSlash(filepath.Join("attachments", fmt.Sprintf("%d-%d-%s", now, i, name)))
		if err := os.WriteFile(filepath.Join(sessionDir, filepath.FromSlash(rel)), d.data, 0o600); err != nil {
			return nil, nil, fmt.Errorf("save attachment %q: %w", d.a.Name, err)
		}
		atts[i] = llm.Attachment{Name: d.a.Name, MimeType: d.mime, DataURL: d.a.DataURL}
		refs[i] = llm.StoredAttachment{Name: d.a.Name, MimeType: d.mime, Size: int64(len(d.data)), Path: rel}
	}
	return atts, refs, nil
}

// safeName keeps a file name's safe characters (no separators, no dots
// first).
func safeName(name string) string {
	var b strings.Builder
	for _, r := range filepath.Base(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if s == "" {
		s = "file"
	}
	if len(s) > 80 {
		s = s[len(s)-80:]
	}
	return s
}
