package mcp

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/mark3labs/mcp-go/server"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/mcp/ocr"
)

// BuiltinContext is what the in-process presets (OCR) need from the project.
type BuiltinContext struct {
	// Workspace confines the paths the presets read; nil allows any path.
	Workspace *confine.Workspace
	// Env is the environment the presets' helper programs (tesseract,
	// pdftoppm) run with; nil = the sidecar's, without its secrets.
	Env []string
	// Vision is the multimodal model fallback of OCR: it returns the text of
	// an image given as a data URL. nil = no model fallback.
	Vision func(ctx context.Context, imageDataURL string) (string, error)
}

// builtinPresets are the in-process servers, by name.
var builtinPresets = map[string]func(BuiltinContext) *server.MCPServer{
	"ocr": func(b BuiltinContext) *server.MCPServer {
		return ocr.NewServer(ocr.Options{Workspace: b.Workspace, Env: b.Env, Vision: b.Vision})
	},
}

func isBuiltin(name string) bool { _, ok := builtinPresets[name]; return ok }

func builtinNames() []string {
	var out []string
	for n := range builtinPresets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func builtinServer(name string, b BuiltinContext) (*server.MCPServer, error) {
	f, ok := builtinPresets[name]
	if !ok {
		return nil, fmt.Errorf("%w: no builtin preset %q", ErrInvalidConfig, name)
	}
	return f(b), nil
}

// WithBuiltinConfigs returns cfgs plus every builtin preset (OCR) the user
// did not configure: a config of the same name, such as
// {"name": "ocr", "enabled": false}, replaces (or disables) the preset. The
// presets added here are never written by SaveConfigFile.
func WithBuiltinConfigs(cfgs []ServerConfig) []ServerConfig {
	out := slices.Clone(cfgs)
	for _, n := range builtinNames() {
		if slices.ContainsFunc(cfgs, func(c ServerConfig) bool { return c.Name == n }) {
			continue
		}
		out = append(out, ServerConfig{Name: n, Type: TypeBuiltin, Enabled: true, auto: true})
	}
	return out
}
