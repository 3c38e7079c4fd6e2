package ocr

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/zqagent/sidecar/proc"
)

// maxPages bounds how many PDF pages are rasterized.
const maxPages = 50

func tesseractOCR(ctx context.Context, abs, kind, lang string, env []string) (string, error) {
	bin, err := exec.LookPath("tesseract")
	if err != nil {
		return "", fmt.Errorf("%w: tesseract is not installed (e.g. apt-get install tesseract-ocr, brew install tesseract)", errSkip)
	}
	pages := []string{abs}
	if kind == "pdf" {
		dir, err := os.MkdirTemp("", "zqagent-ocr-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(dir)
		if pages, err = rasterize(ctx, abs, dir, env); err != nil {
			return "", err
		}
	}
	var out []string
	for i, p := range pages {
		t, err := run(ctx, env, bin, p, "stdout", "-l", lang)
		if err != nil {
			return "", err
		}
		out = append(out, pageText(len(pages), i, t))
	}
	return strings.Join(out, "\n\n"), nil
}

// rasterize renders a PDF's pages to PNG files in dir with pdftoppm.
func rasterize(ctx context.Context, pdf, dir string, env []string) ([]string, error) {
	bin, err := exec.LookPath("pdftoppm")
	if err != nil {
		return nil, fmt.Errorf("%w: PDFs need pdftoppm (poppler-utils) to be rendered", errSkip)
	}
	if _, err := run(ctx, env, bin, "-r", "200", "-png", "-l", fmt.Sprint(maxPages), pdf, filepath.Join(dir, "page")); err != nil {
		return nil, err
	}
	pages, err := filepath.Glob(filepath.Join(dir, "page*.png"))
	if err != nil || len(pages) == 0 {
		return nil, fmt.Errorf("pdftoppm rendered no page")
	}
	sort.Strings(pages) // page-01.png ... zero-padded by pdftoppm
	return pages, nil
}

// run runs a helper in its own process group, killed with the context, and
// returns its standard output.
func run(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	proc.SetGroup(cmd)
	cmd.Cancel = proc.GroupCancel(cmd, time.Second)
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &limited{w: &stderr, n: 4096}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("%s: %v: %s", filepath.Base(name), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// limited keeps the first n bytes written to it.
type limited struct {
	w *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
