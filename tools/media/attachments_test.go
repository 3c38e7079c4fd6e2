package media

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

var pngHead = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")

func pngData(size int) []byte {
	b := make([]byte, size)
	copy(b, pngHead)
	return b
}

func TestDetectMIME(t *testing.T) {
	cases := []struct {
		name string
		head []byte
		want string
	}{
		{"shot.png", pngHead, "image/png"},
		{"shot.jpg", pngHead, "image/png"}, // the signature wins for images
		{"noext", pngHead, "image/png"},
		{"clip.mp3", []byte("ID3\x03\x00\x00\x00"), "audio/mpeg"},
		{"voice.m4a", []byte("\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00"), "audio/mp4"},
		{"movie.mov", []byte{0, 0, 0, 0x14, 'f', 't', 'y', 'p', 'q', 't', ' ', ' '}, "video/quicktime"},
		{"sound.ogg", []byte("OggS\x00\x02"), "audio/ogg"},
		{"unknown.bin", []byte("OggS\x00\x02"), "audio/ogg"},
		{"fake.png", []byte("just some text, not an image"), ""},
		{"page.html", []byte("<html><body>x</body></html>"), ""},
		{"drawing.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`), ""},
		{"doc.pdf", []byte("%PDF-1.7\n"), ""},
		{`C:\dir\photo.WEBP`, []byte{0, 1, 2, 3, 0xff}, "image/webp"},
		{"blob", []byte{0, 1, 2, 3, 0xff}, ""},
	}
	for _, c := range cases {
		if got := DetectMIME(c.name, c.head); got != c.want {
			t.Errorf("DetectMIME(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestParseDataURL(t *testing.T) {
	payload := []byte("hello, world?>")
	std := base64.StdEncoding.EncodeToString(payload)
	cases := []struct {
		in      string
		mt      string
		wantErr bool
	}{
		{"data:image/png;base64," + std, "image/png", false},
		{"DATA:Image/PNG;BASE64," + std, "image/png", false},
		{"data:image/png;name=x.png;base64," + std, "image/png", false},
		{"data:image/png;base64," + std[:8] + "\n" + std[8:], "image/png", false},
		{"data:image/png;base64," + strings.TrimRight(std, "="), "image/png", false},
		{"data:image/png;base64," + base64.URLEncoding.EncodeToString(payload), "image/png", false},
		{"data:;base64," + std, "", false},
		{"data:text/plain,hello%2C%20world%3F%3E", "text/plain", false},
		{"data:image/png;base64,!!!", "", true},
		{"data:image/png;base64", "", true},
		{"image/png;base64," + std, "", true},
		{"data:image png;base64," + std, "", true},
		{"data:image/;base64," + std, "", true},
		{"", "", true},
	}
	for _, c := range cases {
		mt, data, err := ParseDataURL(c.in, 1<<20)
		if c.wantErr {
			if !errors.Is(err, ErrAttachment) {
				t.Errorf("ParseDataURL(%.40q) err = %v, want ErrAttachment", c.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseDataURL(%.40q): %v", c.in, err)
			continue
		}
		if mt != c.mt || !bytes.Equal(data, payload) {
			t.Errorf("ParseDataURL(%.40q) = %q, %q", c.in, mt, data)
		}
	}
	if _, _, err := ParseDataURL(EncodeDataURL("image/png", make([]byte, 101)), 100); !errors.Is(err, ErrAttachment) {
		t.Errorf("size cap not enforced: %v", err)
	}
}

func att(name, mt string, data []byte) llm.Attachment {
	return llm.Attachment{Name: name, MimeType: mt, DataURL: EncodeDataURL(mt, data)}
}

func TestNormalizeAttachments(t *testing.T) {
	png := pngData(100)
	out, err := NormalizeAttachments([]llm.Attachment{
		att("../../etc/shot 1.png", "image/png", png),
		{Name: "", MimeType: "audio/mpeg", DataURL: "data:;base64," + base64.StdEncoding.EncodeToString([]byte("ID3\x03xx"))},
		{Name: "clip", MimeType: "", DataURL: "data:video/mp4;base64," + base64.RawURLEncoding.EncodeToString([]byte{0xfb, 0xff, 1})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("got %d attachments", len(out))
	}
	if out[0].Name != "shot_1.png" || out[0].MimeType != "image/png" || out[0].DataURL != EncodeDataURL("image/png", png) {
		t.Errorf("out[0] = %+v", out[0].Name)
	}
	if out[1].Name != "attachment-2.mp3" || out[1].MimeType != "audio/mpeg" {
		t.Errorf("out[1] = %s %s", out[1].Name, out[1].MimeType)
	}
	if out[2].MimeType != "video/mp4" || out[2].DataURL != "data:video/mp4;base64,+/8B" {
		t.Errorf("out[2] = %s %s", out[2].MimeType, out[2].DataURL)
	}

	if out, err := NormalizeAttachments(nil); err != nil || out != nil {
		t.Errorf("nil input: %v %v", out, err)
	}

	five := make([]llm.Attachment, 5)
	for i := range five {
		five[i] = att("a.png", "image/png", png)
	}
	bad := map[string][]llm.Attachment{
		"five":        five,
		"html":        {att("x.html", "text/html", []byte("<script>"))},
		"svg":         {att("x.svg", "image/svg+xml", []byte("<svg/>"))},
		"pdf":         {att("x.pdf", "application/pdf", []byte("%PDF-1.4"))},
		"bad base64":  {{Name: "x.png", MimeType: "image/png", DataURL: "data:image/png;base64,@@@"}},
		"not data":    {{Name: "x.png", MimeType: "image/png", DataURL: "https://example.com/x.png"}},
		"empty":       {att("x.png", "image/png", nil)},
		"one too big": {att("big.png", "image/png", pngData(MaxAttachmentBytes+1))},
		"total":       {att("a.png", "image/png", pngData(6<<20)), att("b.png", "image/png", pngData(5<<20))},
		"mismatch":    {{Name: "x.png", MimeType: "image/png", DataURL: EncodeDataURL("video/mp4", png)}},
	}
	for name, in := range bad {
		if _, err := NormalizeAttachments(in); !errors.Is(err, ErrAttachment) {
			t.Errorf("%s: err = %v, want ErrAttachment", name, err)
		}
	}
	// A refused attachment is named.
	_, err = NormalizeAttachments([]llm.Attachment{att("a.png", "image/png", png), att("run.sh", "application/x-sh", []byte("ls"))})
	var ae *AttachmentError
	if !errors.As(err, &ae) || ae.Index != 1 || ae.Name != "run.sh" || !errors.Is(err, ErrAttachment) {
		t.Errorf("err = %#v, want an *AttachmentError for index 1", err)
	}
	// The declared type may differ in case and spacing only.
	if _, err := NormalizeAttachments([]llm.Attachment{{Name: "a.png", MimeType: " Image/PNG", DataURL: EncodeDataURL("image/png", png)}}); err != nil {
		t.Errorf("same type, other case: %v", err)
	}
	// Exactly at the limits is fine.
	if _, err := NormalizeAttachments([]llm.Attachment{att("a.png", "image/png", pngData(MaxAttachmentBytes))}); err != nil {
		t.Errorf("10 MB must be accepted: %v", err)
	}
}

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{
		"shot.png":                         "shot.png",
		"../../etc/passwd":                 "passwd",
		`C:\Users\me\a b.jpg`:              "a_b.jpg",
		".hidden.png":                      "hidden.png",
		"..":                               "",
		"":                                 "",
		"스크린샷.png":                         "png",
		strings.Repeat("x", 200) + ".jpeg": strings.Repeat("x", 75) + ".jpeg",
	} {
		if got := SanitizeName(in); got != want {
			t.Errorf("SanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

var storedPathRE = regexp.MustCompile(`^attachments/\d{13}-(\d)-([A-Za-z0-9._-]+)$`)

func TestSaveAndReadAttachments(t *testing.T) {
	dir := t.TempDir()
	png := pngData(300)
	mp3 := []byte("ID3\x03\x00\x00\x00 music")
	atts, err := NormalizeAttachments([]llm.Attachment{att("shot.png", "image/png", png), att("my song.mp3", "audio/mpeg", mp3)})
	if err != nil {
		t.Fatal(err)
	}
	refs, err := SaveAttachments(dir, atts)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 {
		t.Fatalf("got %d refs", len(refs))
	}
	for i, want := range []struct {
		name, mt string
		data     []byte
	}{{"shot.png", "image/png", png}, {"my_song.mp3", "audio/mpeg", mp3}} {
		r := refs[i]
		m := storedPathRE.FindStringSubmatch(r.Path)
		if m == nil || m[1] != string(rune('0'+i)) || m[2] != want.name {
			t.Errorf("ref %d path = %q", i, r.Path)
		}
		if r.Name != want.name || r.MimeType != want.mt || r.Size != int64(len(want.data)) {
			t.Errorf("ref %d = %+v", i, r)
		}
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(r.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
			t.Errorf("mode = %v", fi.Mode())
		}
		name, mt, data, err := ReadStoredAttachment(dir, r.Path)
		if err != nil {
			t.Fatal(err)
		}
		if name != want.name || mt != want.mt || !bytes.Equal(data, want.data) {
			t.Errorf("read %d = %q %q %d bytes", i, name, mt, len(data))
		}
	}
	// Saving the same again in the same millisecond must not overwrite.
	refs2, err := SaveAttachments(dir, atts)
	if err != nil {
		t.Fatal(err)
	}
	if refs2[0].Path == refs[0].Path {
		t.Error("a second save reused a path")
	}
}

func TestSaveAttachmentsRollsBack(t *testing.T) {
	dir := t.TempDir()
	good := att("a.png", "image/png", pngData(10))
	broken := llm.Attachment{Name: "b.png", MimeType: "image/png", DataURL: "data:image/png;base64,%%%"}
	if _, err := SaveAttachments(dir, []llm.Attachment{good, broken}); !errors.Is(err, ErrAttachment) {
		t.Fatalf("err = %v", err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, AttachmentDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("files left behind: %v", entries)
	}
}

func TestReadStoredAttachmentRefusesEscapes(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.png")
	if err := os.WriteFile(secret, pngData(20), 0o600); err != nil {
		t.Fatal(err)
	}
	attDir := filepath.Join(dir, AttachmentDir)
	if err := os.MkdirAll(filepath.Join(attDir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(attDir, "sub", "x.png"), pngData(20), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "top.png"), pngData(20), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(attDir, "1-0-link.png")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	for _, p := range []string{
		"../top.png", "attachments/../top.png", "attachments/sub/x.png", "attachments/", "attachments/..",
		"attachments/.", "top.png", "/etc/passwd", `attachments\..\top.png`, "attachments/1-0-link.png",
		"attachments//x.png", "other/x.png", "attachments/x\x00.png",
	} {
		if _, _, _, err := ReadStoredAttachment(dir, p); !errors.Is(err, ErrAttachment) {
			t.Errorf("ReadStoredAttachment(%q) err = %v, want ErrAttachment", p, err)
		}
	}
	_, _, _, err := ReadStoredAttachment(dir, "attachments/1-0-missing.png")
	if !errors.Is(err, tools.ErrNotFound) || !errors.Is(err, ErrAttachment) {
		t.Errorf("missing file: err = %v", err)
	}
}

func FuzzParseDataURL(f *testing.F) {
	f.Add("data:image/png;base64,iVBORw0KGgo=")
	f.Add("data:;base64,")
	f.Add("data:text/plain,a%20b")
	f.Add("data:image/png;charset=x;base64,aGk")
	f.Add("data:image/png;base64,a-_b")
	f.Fuzz(func(t *testing.T, s string) {
		mt, data, err := ParseDataURL(s, 1<<16)
		if err != nil {
			if !errors.Is(err, ErrAttachment) {
				t.Fatalf("error does not wrap ErrAttachment: %v", err)
			}
			return
		}
		if len(data) > 1<<16 {
			t.Fatalf("size cap exceeded: %d", len(data))
		}
		if mt != "" && !validType(mt) {
			t.Fatalf("invalid type accepted: %q", mt)
		}
		// The canonical form parses back to the same thing.
		mt2, data2, err := ParseDataURL(EncodeDataURL(mt, data), 1<<16)
		if err != nil || mt2 != mt || !bytes.Equal(data, data2) {
			t.Fatalf("round trip: %q %q %v", mt2, data2, err)
		}
	})
}

func BenchmarkNormalizeAttachments10MB(b *testing.B) {
	in := []llm.Attachment{att("big.png", "image/png", pngData(MaxAttachmentBytes))}
	b.SetBytes(MaxAttachmentBytes)
	for b.Loop() {
		if _, err := NormalizeAttachments(in); err != nil {
			b.Fatal(err)
		}
	}
}
