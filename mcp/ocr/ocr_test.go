package ocr

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writePDF writes a one-page PDF showing text in large Helvetica.
func writePDF(t *testing.T, path, text string) {
	t.Helper()
	stream := fmt.Sprintf("BT /F1 40 Tf 30 90 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 500 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed (apt-get install tesseract-ocr poppler-utils): this engine cannot be tested here", n)
		}
	}
}

func TestTesseractPDFAndImage(t *testing.T) {
	needTools(t, "tesseract", "pdftoppm")
	dir := t.TempDir()
	pdf := filepath.Join(dir, "scan.pdf")
	writePDF(t, pdf, "HELLO OCR 42")
	ws, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Workspace: ws}
	text, engine, err := Recognize(context.Background(), o, "scan.pdf", "")
	if err != nil || engine != "tesseract" || !strings.Contains(text, "HELLO OCR 42") {
		t.Fatalf("pdf: %q via %s, %v", text, engine, err)
	}
	// The same page as a PNG.
	if out, err := exec.Command("pdftoppm", "-r", "150", "-png", "-singlefile", pdf, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v %s", err, out)
	}
	text, engine, err = Recognize(context.Background(), o, "page.png", "eng")
	if err != nil || engine != "tesseract" || !strings.Contains(text, "HELLO OCR 42") {
		t.Fatalf("png: %q via %s, %v", text, engine, err)
	}
}

var onePixelPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

func TestModelFallbackAndNoEngine(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no tesseract, no swift
	dir := t.TempDir()
	img := filepath.Join(dir, "shot.png")
	if err := os.WriteFile(img, onePixelPNG, 0o644); err != nil {
		t.Fatal(err)
	}
	var got string
	o := Options{Vision: func(_ context.Context, dataURL string) (string, error) {
		got = dataURL
		return "text the model read", nil
	}}
	text, engine, err := Recognize(context.Background(), o, img, "")
	if err != nil || engine != "model" || text != "text the model read" || !strings.HasPrefix(got, "data:image/png;base64,iVBOR") {
		t.Fatalf("model fallback: %q via %s, %v (sent %.40s)", text, engine, err, got)
	}

	_, _, err = Recognize(context.Background(), Options{}, img, "")
	if !errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), "tesseract is not installed") || !strings.Contains(err.Error(), "no multimodal model") {
		t.Fatalf("no engine: %v", err)
	}
	pdf := filepath.Join(dir, "doc.pdf")
	writePDF(t, pdf, "X")
	if _, _, err := Recognize(context.Background(), o, pdf, ""); !errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), "pdftoppm") {
		t.Fatalf("pdf without pdftoppm: %v", err)
	}
}

func TestRecognizeRejects(t *testing.T) {
	dir := t.TempDir()
	ws, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	txt := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(txt, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Recognize(context.Background(), Options{Workspace: ws}, "notes.txt", ""); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("txt: %v", err)
	}
	outside := filepath.Join(t.TempDir(), "x.png")
	if err := os.WriteFile(outside, onePixelPNG, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Recognize(context.Background(), Options{Workspace: ws}, outside, ""); !errors.Is(err, tools.ErrOutsideWorkspace) {
		t.Fatalf("outside: %v", err)
	}
	if _, _, err := Recognize(context.Background(), Options{}, filepath.Join(dir, "missing.png"), ""); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}
