package mcp

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/confine"
)

func TestBuiltinOCRInProcess(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no tesseract: the model fallback answers
	dir := t.TempDir()
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	if err := os.WriteFile(filepath.Join(dir, "shot.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	vision := func(_ context.Context, dataURL string) (string, error) {
		if !strings.HasPrefix(dataURL, "data:image/png;base64,") {
			t.Errorf("data URL %.30s", dataURL)
		}
		return "Invoice 1234", nil
	}
	m, reg, _ := newTestManager(t, WithBuiltinConfigs(nil), Options{Builtin: BuiltinContext{Workspace: ws, Vision: vision}})
	if connected, failed := m.ConnectAll(context.Background()); len(connected) != 1 {
		t.Fatal(connected, failed)
	}
	spec, ok := reg.Lookup("mcp__ocr__recognize")
	if !ok || spec.Source != "mcp:ocr" || !spec.Meta.RequiresApproval {
		t.Fatalf("recognize = %+v, %v", spec, reg.Names())
	}
	out, err := callTool(t, reg, "mcp__ocr__recognize", `{"path":"shot.png"}`)
	if err != nil || out != "[ocr engine: model]\nInvoice 1234" {
		t.Fatalf("recognize = %q, %v", out, err)
	}
	_, err = callTool(t, reg, "mcp__ocr__recognize", `{"path":"../elsewhere.png"}`)
	if err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("outside path = %v", err)
	}

	off, _ := ParseConfig([]byte(`[{"name":"ocr","enabled":false}]`), "f")
	m2, reg2, _ := newTestManager(t, WithBuiltinConfigs(off), Options{})
	if connected, _ := m2.ConnectAll(context.Background()); len(connected) != 0 || reg2.Len() != 0 || stateOf(m2, "ocr").State != StateDisabled {
		t.Fatalf("disabled ocr: %v %v %+v", connected, reg2.Names(), m2.Status())
	}
}

func TestConfigCRUD(t *testing.T) {
	m, _, _ := newTestManager(t, nil, Options{})
	if err := m.AddConfig(context.Background(), ServerConfig{Name: "a", URL: "http://h/mcp", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddConfig(context.Background(), ServerConfig{Name: "a", URL: "http://h/mcp"}); err == nil {
		t.Fatal("duplicate add succeeded")
	}
	if err := m.AddConfig(context.Background(), ServerConfig{Name: "bad", Type: TypeStdio}); err == nil {
		t.Fatal("invalid add succeeded")
	}
	if got := m.Configs(); len(got) != 1 || got[0].Type != TypeHTTP {
		t.Fatalf("configs = %+v", got)
	}
	if err := m.UpdateConfig(context.Background(), "a", ServerConfig{Name: "b", URL: "http://h/sse", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	st := m.Status()
	if len(st) != 1 || st[0].Name != "b" || st[0].Type != TypeSSE || st[0].State != StateDisabled {
		t.Fatalf("after update: %+v", st)
	}
	if err := m.UpdateConfig(context.Background(), "zzz", ServerConfig{URL: "http://h/mcp"}); err == nil {
		t.Fatal("update of an unknown server succeeded")
	}
	if err := m.RemoveConfig(context.Background(), "b"); err != nil || len(m.Configs()) != 0 {
		t.Fatalf("remove: %v, %+v", err, m.Configs())
	}
	if err := m.RemoveConfig(context.Background(), "b"); err == nil {
		t.Fatal("second remove succeeded")
	}
}
