package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// maxScriptSize bounds a script file.
const maxScriptSize = 16 << 20

// Script is the JSON form of a script file:
//
//	{"responses": [{"text": "Hi", "toolCalls": [{"name": "list_files", "arguments": "{\"path\":\".\"}"}]}],
//	 "chat": ["A session title"]}
type Script struct {
	Responses []Response `json:"responses"`
	Chat      []string   `json:"chat,omitempty"`
	// GateDir makes the script's gates file-backed: a response reaching
	// gate "g" creates <gateDir>/g.reached and waits until <gateDir>/g.open
	// exists (a test or a shell developer creates it). Without it a gate
	// opens only from Go (Provider.Gate) or when the turn is interrupted.
	GateDir string `json:"gateDir,omitempty"`
}

// Load reads a script file (the sidecar uses it when ZQAGENT_SCRIPT names one).
func Load(path string) (*Provider, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxScriptSize+1))
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	if len(data) > maxScriptSize {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrBadScript, path, maxScriptSize)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load script %s: %w", path, err)
	}
	return p, nil
}

// Parse reads a script from its JSON text. Unknown fields are refused so that
// a typo in a test script fails loudly.
func Parse(data []byte) (*Provider, error) {
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadScript, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: trailing data after the script object", ErrBadScript)
	}
	for i, r := range s.Responses {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("%w: responses[%d]: %w", ErrBadScript, i, err)
		}
	}
	p := New(s.Responses...)
	p.AppendChat(s.Chat...)
	if s.GateDir != "" {
		if !filepath.IsAbs(s.GateDir) {
			return nil, fmt.Errorf("%w: gateDir %q is not an absolute path", ErrBadScript, s.GateDir)
		}
		p.gateDir = s.GateDir
	}
	return p, nil
}
