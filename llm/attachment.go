package llm

import (
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxAttachmentFile bounds the file an Attachment names (the upload limit
// is 10 MB; a larger file is not one the sidecar stored).
const MaxAttachmentFile = 16 << 20

// URL is the attachment as a data URL: DataURL, or the file at Path read
// and encoded now. The string lives only as long as the request built
// with it.
func (a Attachment) URL() (string, error) {
	if a.DataURL != "" || a.Path == "" {
		return a.DataURL, nil
	}
	f, err := os.Open(a.Path)
	if err != nil {
		return "", fmt.Errorf("attachment %s: %w", a.Name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("attachment %s: %w", a.Name, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > MaxAttachmentFile {
		return "", fmt.Errorf("attachment %s: not a regular file of at most %d bytes", a.Name, MaxAttachmentFile)
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return "", fmt.Errorf("attachment %s: %w", a.Name, err)
	}
	var b strings.Builder
	b.Grow(len("data:;base64,") + len(a.MimeType) + base64.StdEncoding.EncodedLen(len(data)))
	b.WriteString("data:")
	b.WriteString(a.MimeType)
	b.WriteString(";base64,")
	w := base64.NewEncoder(base64.StdEncoding, &b)
	_, _ = w.Write(data) // a strings.Builder takes every write
	_ = w.Close()
	return b.String(), nil
}
