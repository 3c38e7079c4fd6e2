package ocr

import (
	"context"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/proc"
)

//go:embed recognize.md
var recognizeDescription string

// maxVisionBytes bounds what is sent to the model fallback per image.
const maxVisionBytes = 20 << 20

// Options configure the preset.
type Options struct {
	// Workspace confines paths; nil accepts any path.
	Workspace *confine.Workspace
	// Env is the base environment of helper programs; nil = the sidecar's.
	// Secrets are always removed (proc.Env).
	Env []string
	// Vision returns the text of an image data URL with the session's
	// multimodal model; nil disables that fallback.
	Vision func(ctx context.Context, imageDataURL string) (string, error)
}

// NewServer returns the in-process MCP server of the preset.
func NewServer(o Options) *server.MCPServer {
	s := server.NewMCPServer("zqagent-ocr", "1.0.0", server.WithToolCapabilities(false))
	tool := mcp.NewTool("recognize",
		mcp.WithDescription(strings.TrimSpace(recognizeDescription)),
		mcp.WithString("path", mcp.Required(), mcp.Description("image or PDF file, relative to the workspace")),
		mcp.WithString("lang", mcp.Description(`tesseract language codes, e.g. "eng+kor" (default "eng")`)),
		mcp.WithReadOnlyHintAnnotation(true),
	)
	s.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		path, err := req.RequireString("path")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		text, engine, err := Recognize(ctx, o, path, req.GetString("lang", ""))
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if strings.TrimSpace(text) == "" {
			text = "(no text recognized)"
		}
		return mcp.NewToolResultText(fmt.Sprintf("[ocr engine: %s]\n%s", engine, text)), nil
	})
	return s
}

// Recognize returns the text of an image or PDF and the engine that read it.
func Recognize(ctx context.Context, o Options, path, lang string) (text, engine string, err error) {
	abs, err := resolve(o, path)
	if err != nil {
		return "", "", err
	}
	kind, mime := fileKind(abs)
	if kind == "" {
		return "", "", fmt.Errorf("%w: %s (images and PDFs only)", ErrUnsupported, filepath.Base(abs))
	}
	if lang == "" {
		lang = "eng"
	}
	env := proc.Env(o.Env)
	type engineFunc struct {
		name string
		run  func() (string, error)
	}
	engines := []engineFunc{
		{"macos-vision", func() (string, error) { return visionOCR(ctx, abs, kind, env) }},
		{"tesseract", func() (string, error) { return tesseractOCR(ctx, abs, kind, lang, env) }},
		{"model", func() (string, error) { return modelOCR(ctx, o, abs, kind, mime, env) }},
	}
	var reasons []string
	for _, e := range engines {
		t, err := e.run()
		if err == nil && strings.TrimSpace(t) != "" {
			return strings.TrimSpace(t), e.name, nil
		}
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		if err == nil {
			err = errors.New("recognized no text")
		}
		reasons = append(reasons, e.name+": "+err.Error())
	}
	return "", "", fmt.Errorf("%w for %s: %s", ErrNoEngine, filepath.Base(abs), strings.Join(reasons, "; "))
}

func resolve(o Options, path string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", fmt.Errorf("path is empty")
	}
	if o.Workspace != nil {
		abs, err := o.Workspace.Resolve(path, false)
		if err != nil {
			return "", err
		}
		return abs, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", err
	}
	return abs, nil
}

// fileKind is "image" or "pdf" (and the MIME type) by extension.
func fileKind(path string) (kind, mime string) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return "image", "image/png"
	case ".jpg", ".jpeg":
		return "image", "image/jpeg"
	case ".gif":
		return "image", "image/gif"
	case ".webp":
		return "image", "image/webp"
	case ".bmp":
		return "image", "image/bmp"
	case ".tif", ".tiff":
		return "image", "image/tiff"
	case ".pdf":
		return "pdf", "application/pdf"
	}
	return "", ""
}

// modelOCR sends the image (or each rasterized PDF page) to the model.
func modelOCR(ctx context.Context, o Options, abs, kind, mime string, env []string) (string, error) {
	if o.Vision == nil {
		return "", fmt.Errorf("%w: no multimodal model configured for this session", errSkip)
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
		mime = "image/png"
	}
	var out []string
	for i, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		if len(data) > maxVisionBytes {
			return "", fmt.Errorf("image of %d bytes is over the %d-byte limit of the model fallback", len(data), maxVisionBytes)
		}
		t, err := o.Vision(ctx, "data:"+mime+";base64,"+base64.StdEncoding.EncodeToString(data))
		if err != nil {
			return "", err
		}
		out = append(out, pageText(len(pages), i, t))
	}
	return strings.Join(out, "\n\n"), nil
}

func pageText(n, i int, t string) string {
	if n == 1 {
		return strings.TrimSpace(t)
	}
	return fmt.Sprintf("--- page %d ---\n%s", i+1, strings.TrimSpace(t))
}
