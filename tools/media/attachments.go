package media

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

// NormalizeAttachments validates user uploads and returns them in canonical
// form: at most MaxAttachments, each a well-formed base64 data URL of an
// image, audio or video type, non-empty, whose declared MimeType (when set)
// matches the data URL's type, each and all together at most
// MaxAttachmentBytes; MimeType taken from the data URL (or the declared type
// when the URL has none), names sanitized, data URLs re-encoded as
// data:<mime>;base64,<payload>. Errors wrap ErrAttachment; one about a
// single attachment is an *AttachmentError naming it. Empty input gives nil.
func NormalizeAttachments(in []llm.Attachment) ([]llm.Attachment, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > MaxAttachments {
		return nil, fmt.Errorf("%w: %d attachments, at most %d", ErrAttachment, len(in), MaxAttachments)
	}
	out := make([]llm.Attachment, 0, len(in))
	total := 0
	for i, a := range in {
		bad := func(err error) error { return &AttachmentError{Index: i, Name: a.Name, Err: err} }
		mt, data, err := ParseDataURL(a.DataURL, MaxAttachmentBytes)
		if err != nil {
			return nil, bad(err)
		}
		declared := strings.ToLower(strings.TrimSpace(a.MimeType))
		if mt != "" && declared != "" && declared != mt {
			return nil, bad(fmt.Errorf("%w: mimeType %q does not match the data URL's type %q", ErrAttachment, truncate(declared, 64), mt))
		}
		if mt == "" {
			mt = declared
		}
		if mt == "" || mt == "application/octet-stream" {
			mt = DetectMIME(a.Name, data)
		}
		if !IsMedia(mt) {
			return nil, bad(fmt.Errorf("%w: type %q is not an image, audio or video type", ErrAttachment, mt))
		}
		if len(data) == 0 {
			return nil, bad(fmt.Errorf("%w: empty", ErrAttachment))
		}
		total += len(data)
		if total > MaxAttachmentBytes {
			return nil, bad(fmt.Errorf("%w: attachments total more than %d bytes", ErrAttachment, MaxAttachmentBytes))
		}
		name := SanitizeName(a.Name)
		if name == "" {
			name = "attachment-" + strconv.Itoa(i+1) + typeExt(mt)
		}
		out = append(out, llm.Attachment{Name: name, MimeType: mt, DataURL: canonicalDataURL(a.DataURL, mt, data)})
	}
	return out, nil
}

// AttachmentError is a refused attachment: which one, and why (Err wraps
// ErrAttachment).
type AttachmentError struct {
	Index int    // 0-based position in the input
	Name  string // the name as given (may be empty)
	Err   error
}

func (e *AttachmentError) Error() string {
	return fmt.Sprintf("attachment %d (%s): %v", e.Index+1, truncate(e.Name, 64), e.Err)
}

func (e *AttachmentError) Unwrap() error { return e.Err }

// canonicalDataURL returns data:<mt>;base64,<payload>, reusing the
// original payload when it is already plain padded standard base64 (the
// common case: big uploads are not encoded twice).
func canonicalDataURL(orig, mt string, data []byte) string {
	_, payload, _ := strings.Cut(orig, ",")
	if len(payload)%4 != 0 || !isStdBase64(payload) {
		return EncodeDataURL(mt, data)
	}
	return "data:" + mt + ";base64," + payload
}

func isStdBase64(s string) bool {
	body := strings.TrimRight(s, "=")
	if len(s)-len(body) > 2 {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// SanitizeName keeps the base name of a file name, with every character
// other than ASCII letters, digits, '.', '-' and '_' replaced by '_', no
// leading dots, and at most 80 bytes (the extension kept). It returns ""
// when nothing usable is left.
func SanitizeName(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	lastUnderscore := false
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_'
		if !ok {
			c = '_'
		}
		if c == '_' && lastUnderscore {
			continue
		}
		lastUnderscore = c == '_'
		b.WriteRune(c)
	}
	s := strings.TrimLeft(b.String(), "._")
	if len(s) > 80 {
		ext := filepath.Ext(s)
		if len(ext) > 16 {
			ext = ""
		}
		s = s[:80-len(ext)] + ext
	}
	if strings.Trim(s, "._-") == "" {
		return ""
	}
	return s
}

// SaveAttachments writes attachments (normalized ones) under
// <sessionDir>/attachments/<unixms>-<i>-<name> and returns their references,
// with paths relative to sessionDir. Files are created, never overwritten;
// on error the files written by this call are removed.
func SaveAttachments(sessionDir string, atts []llm.Attachment) ([]llm.StoredAttachment, error) {
	if len(atts) == 0 {
		return nil, nil
	}
	dir := filepath.Join(sessionDir, AttachmentDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("save attachments: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("save attachments: %w", err)
	}
	defer root.Close()
	ms := time.Now().UnixMilli()
	var written []string
	refs := make([]llm.StoredAttachment, 0, len(atts))
	for i, a := range atts {
		ref, file, err := saveOne(root, ms, i, a)
		if err != nil {
			for _, f := range written {
				_ = root.Remove(f)
			}
			return nil, fmt.Errorf("save attachment %d: %w", i+1, err)
		}
		written = append(written, file)
		refs = append(refs, ref)
	}
	return refs, nil
}

func saveOne(root *os.Root, ms int64, i int, a llm.Attachment) (llm.StoredAttachment, string, error) {
	mt, data, err := ParseDataURL(a.DataURL, MaxAttachmentBytes)
	if err != nil {
		return llm.StoredAttachment{}, "", err
	}
	if mt == "" {
		mt = a.MimeType
	}
	name := SanitizeName(a.Name)
	if name == "" {
		name = "attachment" + typeExt(mt)
	}
	for n := int64(0); ; n++ {
		// A name taken (two uploads in the same millisecond) moves the
		// stamp forward, keeping the "<unixms>-<i>-<name>" shape.
		file := fmt.Sprintf("%d-%d-%s", ms+n, i, name)
		f, err := root.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && n < 100 {
			continue
		}
		if err != nil {
			return llm.StoredAttachment{}, "", err
		}
		_, werr := f.Write(data)
		cerr := f.Close()
		if err := errors.Join(werr, cerr); err != nil {
			_ = root.Remove(file)
			return llm.StoredAttachment{}, "", err
		}
		display := a.Name
		if display == "" {
			display = name
		}
		return llm.StoredAttachment{
			Name:     display,
			MimeType: mt,
			Size:     int64(len(data)),
			Path:     AttachmentDir + "/" + file,
		}, file, nil
	}
}

// ReadStoredAttachment reads a stored attachment back. relPath must be
// "attachments/<file>" (forward slash, no "..", no subdirectory); the file
// is opened through an os.Root on the attachments directory, so a symlink
// pointing out is refused. name is the original (sanitized) file name
// without the "<unixms>-<i>-" prefix; mime is detected from the name and
// content. Errors wrap ErrAttachment (and tools.ErrNotFound for a missing
// file).
func ReadStoredAttachment(sessionDir, relPath string) (name, mimeType string, data []byte, err error) {
	file, ok := strings.CutPrefix(relPath, AttachmentDir+"/")
	if !ok || file == "" || file == "." || file == ".." || strings.ContainsAny(file, "/\\\x00") || strings.HasPrefix(file, ".") {
		return "", "", nil, fmt.Errorf("%w: path %q is not %s/<file>", ErrAttachment, truncate(relPath, 128), AttachmentDir)
	}
	root, err := os.OpenRoot(filepath.Join(sessionDir, AttachmentDir))
	if err != nil {
		return "", "", nil, readErr(relPath, err)
	}
	defer root.Close()
	f, fi, err := confine.OpenRead(root, file) // a FIFO never blocks the read
	if err != nil {
		return "", "", nil, readErr(relPath, err)
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return "", "", nil, fmt.Errorf("%w: %s is not a regular file", ErrAttachment, relPath)
	}
	if fi.Size() > MaxAttachmentBytes {
		return "", "", nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrAttachment, relPath, MaxAttachmentBytes)
	}
	data, err = io.ReadAll(io.LimitReader(f, MaxAttachmentBytes+1))
	if err != nil {
		return "", "", nil, readErr(relPath, err)
	}
	name = storedName(file)
	mimeType = DetectMIME(name, data)
	if mimeType == "" {
		mimeType = "application/octet-stream"
	}
	return name, mimeType, data, nil
}

func readErr(relPath string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s: %w", ErrAttachment, relPath, tools.ErrNotFound)
	}
	return fmt.Errorf("%w: %s: %w", ErrAttachment, relPath, err)
}

// storedName strips the "<unixms>-<i>-" prefix.
func storedName(file string) string {
	rest := file
	for range 2 {
		head, tail, ok := strings.Cut(rest, "-")
		if !ok || !allDigits(head) {
			return file
		}
		rest = tail
	}
	if rest == "" {
		return file
	}
	return rest
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
