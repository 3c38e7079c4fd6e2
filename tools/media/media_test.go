package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

type fixture struct {
	ws      *confine.Workspace
	root    string
	outside string
	reg     *tools.Registry
	tool    *Tool
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	root := t.TempDir()
	ws, err := confine.New(root)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{ws: ws, root: root, outside: t.TempDir(), reg: tools.NewRegistry()}
	f.tool = RegisterMediaTool(f.reg, ws, opts)
	return f
}

func (f *fixture) write(t *testing.T, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) call(t *testing.T, args map[string]any) (tools.Result, error) {
	t.Helper()
	spec, ok := f.reg.Lookup("media")
	if !ok {
		t.Fatal("media not registered")
	}
	raw, _ := json.Marshal(args)
	out, err := spec.Handler(context.Background(), tools.Call{ID: "c1", Name: "media", Args: raw})
	if err != nil {
		return tools.Result{}, err
	}
	res, ok := out.(tools.Result)
	if !ok {
		t.Fatalf("media returned %T", out)
	}
	return res, nil
}

func wantType(t *testing.T, err error, typ string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a %s error, got none", typ)
	}
	if got := tools.ErrorType(err); got != typ {
		t.Fatalf("error type %q (%v), want %q", got, err, typ)
	}
}

func TestMediaReadsWorkspaceFile(t *testing.T) {
	f := newFixture(t, Options{})
	png := pngData(64)
	f.write(t, "img/shot.png", png)
	res, err := f.call(t, map[string]any{"path": "img/shot.png"})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Output.(Output)
	if out.Name != "shot.png" || out.MimeType != "image/png" || out.Size != 64 || out.Source != "img/shot.png" {
		t.Errorf("output = %+v", out)
	}
	if len(res.Attachments) != 1 {
		t.Fatalf("attachments = %d", len(res.Attachments))
	}
	a := res.Attachments[0]
	mt, data, err := ParseDataURL(a.DataURL, MaxAttachmentBytes)
	if err != nil || mt != "image/png" || !bytes.Equal(data, png) || a.MimeType != "image/png" || a.Name != "shot.png" {
		t.Errorf("attachment = %s %s (%v)", a.Name, a.MimeType, err)
	}
	if n, b := f.tool.Used(); n != 1 || b != 64 {
		t.Errorf("Used = %d, %d", n, b)
	}
}

func TestMediaRefusals(t *testing.T) {
	f := newFixture(t, Options{})
	secret := filepath.Join(f.outside, "secret.png")
	if err := os.WriteFile(secret, pngData(10), 0o644); err != nil {
		t.Fatal(err)
	}
	f.write(t, "notes.png", []byte("plain text pretending to be an image"))
	f.write(t, "empty.png", nil)
	haveLink := os.Symlink(secret, filepath.Join(f.root, "link.png")) == nil
	big := filepath.Join(f.root, "big.png")
	if err := os.WriteFile(big, pngHead, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxAttachmentBytes+1); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args map[string]any
		typ  string
	}{
		{map[string]any{"path": secret}, "outside_workspace"},
		{map[string]any{"path": "../" + filepath.Base(f.outside) + "/secret.png"}, "outside_workspace"},
		{map[string]any{"path": "missing.png"}, "not_found"},
		{map[string]any{"path": "notes.png"}, "unsupported_content"},
		{map[string]any{"path": "empty.png"}, "unsupported_content"},
		{map[string]any{"path": "big.png"}, "too_large"},
		{map[string]any{"path": "."}, "invalid_arguments"},
		{map[string]any{}, "invalid_arguments"},
		{map[string]any{"path": "a.png", "url": "https://example.com/a.png"}, "invalid_arguments"},
		{map[string]any{"url": "file:///etc/passwd"}, "invalid_url"},
	}
	if haveLink {
		cases = append(cases, struct {
			args map[string]any
			typ  string
		}{map[string]any{"path": "link.png"}, "outside_workspace"})
	}
	for _, c := range cases {
		_, err := f.call(t, c.args)
		wantType(t, err, c.typ)
	}
	// Failed calls do not use the budget.
	if n, b := f.tool.Used(); n != 0 || b != 0 {
		t.Errorf("Used after failures = %d, %d", n, b)
	}
}

func TestMediaPerTurnLimits(t *testing.T) {
	f := newFixture(t, Options{})
	f.write(t, "a.png", pngData(100))
	for i := range MaxAttachments {
		if _, err := f.call(t, map[string]any{"path": "a.png"}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	_, err := f.call(t, map[string]any{"path": "a.png"})
	wantType(t, err, "limit_exceeded")
	if !errors.Is(err, ErrLimit) {
		t.Errorf("err = %v", err)
	}
	f.tool.Reset()
	if _, err := f.call(t, map[string]any{"path": "a.png"}); err != nil {
		t.Fatalf("after Reset: %v", err)
	}

	// Total bytes per turn.
	f.tool.Reset()
	f.write(t, "six.png", pngData(6<<20))
	if _, err := f.call(t, map[string]any{"path": "six.png"}); err != nil {
		t.Fatal(err)
	}
	_, err = f.call(t, map[string]any{"path": "six.png"})
	wantType(t, err, "limit_exceeded")
	if n, b := f.tool.Used(); n != 1 || b != 6<<20 {
		t.Errorf("Used = %d, %d", n, b)
	}
}

func TestMediaURL(t *testing.T) {
	png := pngData(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pic":
			w.Header().Set("Content-Type", "image/png")
			w.Write(png)
		case "/redirect":
			http.Redirect(w, r, "/pic", http.StatusFound)
		case "/page.html":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>hi</html>"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	f := newFixture(t, Options{AllowPrivate: true})
	res, err := f.call(t, map[string]any{"url": srv.URL + "/redirect"})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Output.(Output)
	if out.Name != "pic.png" || out.MimeType != "image/png" || out.Size != 200 {
		t.Errorf("output = %+v", out)
	}
	if _, data, _ := ParseDataURL(res.Attachments[0].DataURL, MaxAttachmentBytes); !bytes.Equal(data, png) {
		t.Error("attachment bytes differ")
	}
	_, err = f.call(t, map[string]any{"url": srv.URL + "/page.html"})
	wantType(t, err, "unsupported_content")
	_, err = f.call(t, map[string]any{"url": srv.URL + "/missing"})
	wantType(t, err, "http_error")

	// Without AllowPrivate the loopback server is refused.
	g := newFixture(t, Options{})
	_, err = g.call(t, map[string]any{"url": srv.URL + "/pic"})
	wantType(t, err, "blocked_address")
}

func TestMediaMetadata(t *testing.T) {
	f := newFixture(t, Options{})
	spec, _ := f.reg.Lookup("media")
	if spec.Meta.Class != tools.ClassNetwork || spec.Meta.RiskLevel != tools.RiskMedium || spec.Meta.RequiresApproval {
		t.Errorf("meta = %+v", spec.Meta)
	}
	if !json.Valid(spec.Schema.Function.Parameters) || spec.Schema.Function.Description == "" {
		t.Error("schema incomplete")
	}
}
