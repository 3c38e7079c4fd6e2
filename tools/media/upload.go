package media

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zqagent/sidecar/llm"
)

// Upload is an attachment as a request carries it, its data URL as bytes
// that may alias the request's frame: nothing keeps them after SaveUploads.
type Upload struct {
	Name     string
	MimeType string
	DataURL  []byte // the data URL (the JSON string's content, unescaped)
}

// uploadChunk is how much base64 SaveUploads decodes at a time (a multiple
// of 4).
const uploadChunk = 32 << 10

// SaveUploads validates uploads with NormalizeAttachments' rules and
// errors (at most MaxAttachments; each a media type, non-empty, its
// mimeType matching its data URL's, each and all together at most
// MaxAttachmentBytes; names sanitized) and writes each to
// <sessionDir>/attachments/<unixms>-<i>-<name> as SaveAttachments does,
// decoding a base64 payload straight to its file, uploadChunk at a time:
// nothing the size of an attachment is allocated. It returns the refs, and
// the attachments for the model, which name their file (llm.Attachment
// Path) instead of holding its bytes. On error no file of this call is
// left.
//
// The checks of one attachment run from its header to its end: a payload
// that is bad base64 after its first bytes is found while it is written,
// after the checks of its type and size (NormalizeAttachments decodes
// first); an attachment with both faults names the other one.
func SaveUploads(sessionDir string, in []Upload) ([]llm.Attachment, []llm.StoredAttachment, error) {
	if len(in) == 0 {
		return nil, nil, nil
	}
	if len(in) > MaxAttachments {
		return nil, nil, fmt.Errorf("%w: %d attachments, at most %d", ErrAttachment, len(in), MaxAttachments)
	}
	var (
		root    *os.Root
		written []string
		atts    = make([]llm.Attachment, 0, len(in))
		refs    = make([]llm.StoredAttachment, 0, len(in))
		total   int
		ms      = time.Now().UnixMilli()
	)
	fail := func(err error) ([]llm.Attachment, []llm.StoredAttachment, error) {
		for _, f := range written {
			_ = root.Remove(f)
		}
		return nil, nil, err
	}
	defer func() {
		if root != nil {
			root.Close()
		}
	}()
	for i, u := range in {
		bad := func(err error) error { return &AttachmentError{Index: i, Name: u.Name, Err: err} }
		src, err := openPayload(u.DataURL)
		if err != nil {
			return fail(bad(err))
		}
		mt := src.mt
		declared := strings.ToLower(strings.TrimSpace(u.MimeType))
		if mt != "" && declared != "" && declared != mt {
			return fail(bad(fmt.Errorf("%w: mimeType %q does not match the data URL's type %q", ErrAttachment, truncate(declared, 64), mt)))
		}
		if mt == "" {
			mt = declared
		}
		if mt != "" && !validType(mt) {
			// NormalizeAttachments lets it through and SaveAttachments
			// refuses it: refused here, as the attachment's fault.
			return fail(bad(fmt.Errorf("%w: bad media type %q", ErrAttachment, truncate(mt, 64))))
		}
		if mt == "" || mt == "application/octet-stream" {
			mt = DetectMIME(u.Name, src.head)
		}
		if !IsMedia(mt) {
			return fail(bad(fmt.Errorf("%w: type %q is not an image, audio or video type", ErrAttachment, mt)))
		}
		if src.size == 0 {
			return fail(bad(fmt.Errorf("%w: empty", ErrAttachment)))
		}
		total += src.size
		if total > MaxAttachmentBytes {
			return fail(bad(fmt.Errorf("%w: attachments total more than %d bytes", ErrAttachment, MaxAttachmentBytes)))
		}
		name := SanitizeName(u.Name)
		if name == "" {
			name = "attachment-" + strconv.Itoa(i+1) + typeExt(mt)
		}
		if root == nil {
			dir := filepath.Join(sessionDir, AttachmentDir)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return fail(fmt.Errorf("save attachments: %w", err))
			}
			if root, err = os.OpenRoot(dir); err != nil {
				return fail(fmt.Errorf("save attachments: %w", err))
			}
		}
		file, size, err := writeUpload(root, ms, i, name, src)
		if file != "" {
			written = append(written, file)
		}
		var ce base64.CorruptInputError
		switch {
		case errors.As(err, &ce):
			return fail(bad(fmt.Errorf("%w: bad base64: %v", ErrAttachment, err)))
		case err != nil:
			return fail(fmt.Errorf("save attachment %d: %w", i+1, err))
		}
		atts = append(atts, llm.Attachment{Name: name, MimeType: mt, Path: filepath.Join(sessionDir, AttachmentDir, file)})
		refs = append(refs, llm.StoredAttachment{Name: name, MimeType: mt, Size: size, Path: AttachmentDir + "/" + file})
	}
	return atts, refs, nil
}

// payload is one upload's data: decoded already (a percent-encoded data
// URL) or base64 still to decode.
type payload struct {
	mt   string           // the data URL's type ("" when it names none)
	data []byte           // the decoded bytes of a percent-encoded payload
	b64  []byte           // the base64 payload, without whitespace
	enc  *base64.Encoding // of b64
	size int              // the decoded size
	head []byte           // the first decoded bytes (DetectMIME)
}

// openPayload checks a data URL's header and size and decodes its first
// bytes, as ParseDataURL does with all of them.
func openPayload(dataURL []byte) (payload, error) {
	mt, isBase64, raw, err := splitDataURL(dataURL)
	if err != nil {
		return payload{}, err
	}
	if !isBase64 {
		data, err := unescapePayload(raw, MaxAttachmentBytes)
		if err != nil {
			return payload{}, err
		}
		return payload{mt: mt, data: data, size: len(data), head: data}, nil
	}
	if bytes.ContainsAny(raw, " \t\r\n") {
		raw = []byte(stripSpace(string(raw))) // rare: a wrapped payload is copied once
	}
	enc, err := payloadEncoding(raw, MaxAttachmentBytes)
	if err != nil {
		return payload{}, err
	}
	p := payload{mt: mt, b64: raw, enc: enc, size: base64.RawStdEncoding.DecodedLen(len(bytes.TrimRight(raw, "=")))}
	headIn := raw
	if len(headIn) > 684 { // 512 bytes and a little more, a multiple of 4
		headIn = headIn[:684]
	}
	p.head = make([]byte, enc.DecodedLen(len(headIn)))
	n, err := enc.Decode(p.head, headIn)
	if err != nil { // a prefix of whole quanta: its error is the payload's
		return payload{}, fmt.Errorf("%w: bad base64: %v", ErrAttachment, err)
	}
	p.head = p.head[:n]
	return p, nil
}

// writeUpload creates the upload's file (a taken name moves the stamp
// forward, as saveOne does) and decodes the payload into it. It returns
// the file's name, also on a write or decode error (the caller removes
// it).
func writeUpload(root *os.Root, ms int64, i int, name string, p payload) (string, int64, error) {
	for n := int64(0); ; n++ {
		file := fmt.Sprintf("%d-%d-%s", ms+n, i, name)
		f, err := root.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && n < 100 {
			continue
		}
		if err != nil {
			return "", 0, err
		}
		size, werr := p.writeTo(f)
		if err := errors.Join(werr, f.Close()); err != nil {
			return file, 0, err
		}
		return file, size, nil
	}
}

// writeTo decodes the payload to f in chunks. A decode error is a
// base64.CorruptInputError with the offset in the whole payload, as
// DecodeString reports it.
func (p payload) writeTo(f *os.File) (int64, error) {
	if p.enc == nil {
		n, err := f.Write(p.data)
		return int64(n), err
	}
	out := make([]byte, p.enc.DecodedLen(uploadChunk))
	var total int64
	for off := 0; off < len(p.b64); off += uploadChunk {
		chunk := p.b64[off:min(off+uploadChunk, len(p.b64))]
		last := off+len(chunk) == len(p.b64)
		n, err := p.enc.Decode(out, chunk)
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			return total, base64.CorruptInputError(int64(off) + int64(ce))
		}
		if err != nil {
			return total, err
		}
		if !last && chunk[len(chunk)-1] == '=' {
			// Padding ends the payload: what follows it is garbage.
			return total, base64.CorruptInputError(int64(off + len(chunk)))
		}
		if _, err := f.Write(out[:n]); err != nil {
			return total, err
		}
		total += int64(n)
	}
	return total, nil
}
