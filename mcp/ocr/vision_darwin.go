//go:build darwin

package ocr

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

//go:embed vision.swift
var visionScript string

// visionOCR runs the Vision framework's text recognizer through a small
// Swift script (the swift interpreter ships with the Xcode command line
// tools). PDFs are read page by page with PDFKit inside the script.
func visionOCR(ctx context.Context, abs, kind string, env []string) (string, error) {
	swift, err := exec.LookPath("swift")
	if err != nil {
		return "", fmt.Errorf("%w: the swift interpreter is not installed (xcode-select --install)", errSkip)
	}
	dir, err := os.MkdirTemp("", "zqagent-vision-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "ocr.swift")
	if err := os.WriteFile(script, []byte(visionScript), 0o600); err != nil {
		return "", err
	}
	return run(ctx, env, swift, script, abs, kind)
}
