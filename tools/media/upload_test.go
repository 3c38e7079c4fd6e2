package media

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/llm"
)

// saveOld is the path SaveUploads replaces: normalize, then save.
func saveOld(dir string, in []llm.Attachment) ([]llm.Attachment, []llm.StoredAttachment, error) {
	atts, err := NormalizeAttachments(in)
	if err != nil {
		return nil, nil, err
	}
	refs, err := SaveAttachments(dir, atts)
	return atts, refs, err
}

func uploadsOf(in []llm.Attachment) []Upload {
	out := make([]Upload, len(in))
	for i, a := range in {
		out[i] = Upload{Name: a.Name, MimeType: a.MimeType, DataURL: []byte(a.DataURL)}
	}
	return out
}

// TestSaveUploadsAsNormalizeAndSave: SaveUploads accepts and refuses what
// NormalizeAttachments and SaveAttachments do, with the same errors (the
// offset of bad base64 too, however deep), writes the same bytes under the
// same names and sizes, and its attachments give the model the same data
// URLs from their files. A refusal leaves no file.
func TestSaveUploadsAsNormalizeAndSave(t *testing.T) {
	png := pngData(100_000)
	b64 := base64.StdEncoding.EncodeToString(png)
	url := "data:image/png;base64," + b64
	deep := "data:image/png;base64," + b64[:50_000] + "!" + b64[50_001:]
	// Valid quanta up to a chunk's end, padding there, then more.
	pad := "data:image/png;base64," + b64[:uploadChunk-4] + "QQ==" + b64[:400]
	var wrapped strings.Builder
	for i := 0; i < len(b64); i += 76 {
		wrapped.WriteString(b64[i:min(i+76, len(b64))] + "\r\n")
	}
	gif := []byte("GIF89a" + strings.Repeat("x", 50))
	quarter := pngData(MaxAttachmentBytes / 4)
	cases := map[string][]llm.Attachment{
		"one":           {att("a.png", "image/png", png)},
		"four at limit": {att("1.png", "", quarter), att("2.png", "", quarter), att("3.png", "", quarter), att("4.png", "", quarter)},
		"five":          {att("1.png", "", png), att("2.png", "", png), att("3.png", "", png), att("4.png", "", png), att("5.png", "", png)},
		"not data":      {{Name: "a", DataURL: "http://x"}},
		"no comma":      {{Name: "a", DataURL: "data:image/png;base64"}},
		"bad type":      {{Name: "a", DataURL: "data:ima ge;base64,QQ=="}},
		"percent":       {{Name: "p.gif", DataURL: "data:image/gif," + strings.ReplaceAll(string(gif), "x", "%78")}},
		"bad percent":   {{Name: "p.gif", DataURL: "data:image/gif,%zz"}},
		"url alphabet":  {{Name: "u.png", DataURL: "data:image/png;base64," + base64.URLEncoding.EncodeToString(png)}},
		"unpadded":      {{Name: "r.png", DataURL: "data:image/png;base64," + base64.RawStdEncoding.EncodeToString(png[:1001])}},
		"wrapped":       {{Name: "w.png", DataURL: "data:image/png;base64," + wrapped.String()}},
		"bad at start":  {{Name: "b.png", DataURL: "data:image/png;base64,!!!!"}},
		"bad deep":      {{Name: "d.png", MimeType: "image/png", DataURL: deep}},
		"pad mid":       {{Name: "m.png", MimeType: "image/png", DataURL: pad}},
		"mismatch":      {{Name: "x.png", MimeType: "video/mp4", DataURL: url}},
		"detected":      {{Name: "noext", DataURL: "data:application/octet-stream;base64," + b64}},
		"declared only": {{Name: "noext", MimeType: "image/png", DataURL: "data:;base64," + b64}},
		"not media":     {{Name: "s.sh", DataURL: "data:text/x-sh;base64,cm0gLXJm"}},
		"empty":         {{Name: "e.png", DataURL: "data:image/png;base64,"}},
		"total":         {att("1.png", "", pngData(6<<20)), att("2.png", "", pngData(6<<20))},
		"too large":     {att("big.png", "", pngData(MaxAttachmentBytes+1))},
		"names":         {att("../../etc/pass wd.png", "", png), att("", "image/png", png)},
		"second bad":    {att("ok.png", "", png), {Name: "bad", DataURL: "data:image/png;base64,!"}},
	}
	for name, in := range cases {
		oldDir, newDir := t.TempDir(), t.TempDir()
		wantAtts, wantRefs, wantErr := saveOld(oldDir, in)
		atts, refs, err := SaveUploads(newDir, uploadsOf(in))
		if wantErr != nil {
			require.Error(t, err, name)
			require.Equal(t, wantErr.Error(), err.Error(), name)
			files, _ := os.ReadDir(filepath.Join(newDir, AttachmentDir))
			require.Empty(t, files, "%s: a refusal leaves no file", name)
			continue
		}
		require.NoError(t, err, name)
		require.Len(t, refs, len(wantRefs), name)
		for i := range wantRefs {
			w, g := wantRefs[i], refs[i]
			require.Equal(t, w.Name, g.Name, name)
			require.Equal(t, w.MimeType, g.MimeType, name)
			require.Equal(t, w.Size, g.Size, name)
			require.Equal(t, storedName(strings.TrimPrefix(w.Path, AttachmentDir+"/")), storedName(strings.TrimPrefix(g.Path, AttachmentDir+"/")), name)
			wb, err := os.ReadFile(filepath.Join(oldDir, w.Path))
			require.NoError(t, err)
			gb, err := os.ReadFile(filepath.Join(newDir, g.Path))
			require.NoError(t, err)
			require.True(t, bytes.Equal(wb, gb), "%s: attachment %d's bytes", name, i)
			require.Equal(t, wantAtts[i].Name, atts[i].Name, name)
			require.Equal(t, wantAtts[i].MimeType, atts[i].MimeType, name)
			require.Empty(t, atts[i].DataURL, name)
			require.Equal(t, filepath.Join(newDir, g.Path), atts[i].Path, name)
			got, err := atts[i].URL()
			require.NoError(t, err)
			want, err := EncodeDataURL(wantAtts[i].MimeType, wb), error(nil)
			require.NoError(t, err)
			require.Equal(t, want, got, "%s: attachment %d's data URL", name, i)
		}
	}
}

func FuzzSaveUploads(f *testing.F) {
	for _, s := range []string{"data:image/png;base64,iVBORw0KGgo=", "data:image/png;base64,iVBO Rw0K\nGgo", "data:,%89PNG", "data:image/gif;base64,R0lGODlh==x", "data:;base64,-_-_"} {
		f.Add(s, "image/png")
	}
	f.Fuzz(func(t *testing.T, dataURL, mimeType string) {
		in := []llm.Attachment{{Name: "f.png", MimeType: mimeType, DataURL: dataURL}}
		_, wantRefs, wantErr := saveOld(t.TempDir(), in)
		dir := t.TempDir()
		_, refs, err := SaveUploads(dir, uploadsOf(in))
		if wantErr != nil {
			// The one documented difference: bad base64 after the first
			// bytes is found after the type checks.
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		// The stored bytes are the data URL's (the old path re-read a
		// percent-encoded payload that looked like base64 as base64).
		_, data, err := ParseDataURL(dataURL, MaxAttachmentBytes)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dir, refs[0].Path))
		require.NoError(t, err)
		require.Equal(t, data, got)
		require.Len(t, wantRefs, 1)
	})
}
