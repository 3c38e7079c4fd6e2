package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zqagent/sidecar/tools"
)

func callTool(t *testing.T, reg *tools.Registry, name string, args any) (any, error) {
	t.Helper()
	spec, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("%s not registered", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return spec.Handler(context.Background(), tools.Call{ID: "call-1", Name: name, Args: raw})
}

func fetchTool(t *testing.T, opts Options, args any) (string, error) {
	t.Helper()
	reg := tools.NewRegistry()
	RegisterWebTools(reg, opts)
	out, err := callTool(t, reg, "web_fetch", args)
	if err != nil {
		return "", err
	}
	s, ok := out.(string)
	if !ok {
		t.Fatalf("web_fetch returned %T, want string", out)
	}
	return s, nil
}

func wantErrType(t *testing.T, err error, typ string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a %s error, got none", typ)
	}
	if got := tools.ErrorType(err); got != typ {
		t.Fatalf("error type = %q (%v), want %q", got, err, typ)
	}
}

const samplePage = `<!doctype html>
<html><head><title>  Sample   Page </title>
<style>body { color: red }</style>
<script>alert("secret-script")</script></head>
<body>
<nav><a href="/home">Home</a></nav>
<h1>Main Heading</h1>
<p>Some <strong>bold</strong> and <em>italic</em> text with a <a href="/docs/page?x=1">relative link</a>.</p>
<ul><li>first</li><li>second</li></ul>
<table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
<svg><text>vector-noise</text></svg>
<form><input name="q"><button>Go</button></form>
<pre><code>fmt.Println("hi")</code></pre>
<custom-widget data-x="1">widget text</custom-widget>
</body></html>`

var tagRE = regexp.MustCompile(`<\s*/?\s*[a-zA-Z!][^>]*>`)

func TestFetchHTMLToMarkdown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ua := r.Header.Get("User-Agent"); ua != "test-agent" {
			http.Error(w, "bad user agent "+ua, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, samplePage)
	}))
	defer srv.Close()

	out, err := fetchTool(t, Options{AllowPrivate: true, UserAgent: "test-agent"}, map[string]any{"url": srv.URL + "/page"})
	if err != nil {
		t.Fatal(err)
	}
	if tagRE.MatchString(out) {
		t.Errorf("output contains HTML tags: %q", tagRE.FindAllString(out, -1))
	}
	for _, want := range []string{
		"URL: " + srv.URL + "/page",
		"Title: Sample Page",
		"Content-Type: text/html",
		"# Main Heading",
		"**bold**",
		"[relative link](" + srv.URL + "/docs/page?x=1)",
		"- first",
		"| Name | Value |",
		`fmt.Println("hi")`,
		"widget text",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"secret-script", "color: red", "vector-noise"} {
		if strings.Contains(out, bad) {
			t.Errorf("output contains %q:\n%s", bad, out)
		}
	}
}

func TestFetchTextAndJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/data.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"answer": 42, "html": "<b>x</b>"}`)
		case "/notes.txt":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "line one\nline two\n")
		case "/problem":
			w.Header().Set("Content-Type", "application/problem+json")
			fmt.Fprint(w, `{"title":"nope"}`)
		}
	}))
	defer srv.Close()
	opts := Options{AllowPrivate: true}
	out, err := fetchTool(t, opts, map[string]any{"url": srv.URL + "/data.json"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `{"answer": 42, "html": "<b>x</b>"}`) {
		t.Errorf("JSON not returned verbatim:\n%s", out)
	}
	out, err = fetchTool(t, opts, map[string]any{"url": srv.URL + "/notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "line one\nline two") {
		t.Errorf("text not returned:\n%s", out)
	}
	out, err = fetchTool(t, opts, map[string]any{"url": srv.URL + "/problem"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"title":"nope"`) {
		t.Errorf("+json not returned as text:\n%s", out)
	}
}

func TestFetchRefusesBinary(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sniffed" {
			w.Header()["Content-Type"] = nil // no header: sniffed
		} else {
			w.Header().Set("Content-Type", "application/octet-stream")
		}
		w.Write(png)
	}))
	defer srv.Close()
	for _, path := range []string{"/blob", "/sniffed"} {
		_, err := fetchTool(t, Options{AllowPrivate: true}, map[string]any{"url": srv.URL + path})
		wantErrType(t, err, "unsupported_content")
		if !errors.Is(err, ErrUnsupportedType) || !strings.Contains(err.Error(), "media tool") {
			t.Errorf("%s: error = %v", path, err)
		}
	}
}

func TestFetchHTTPError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := fetchTool(t, Options{AllowPrivate: true}, map[string]any{"url": srv.URL + "/missing"})
	wantErrType(t, err, "http_error")
	if !strings.Contains(err.Error(), "404") {
		t.Errorf("error lacks the status: %v", err)
	}
}

// redirectChain serves /r/N, which redirects to /r/N-1, down to /r/0.
func redirectChain(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/r/%d", &n); err != nil {
			http.NotFound(w, r)
			return
		}
		if n == 0 {
			fmt.Fprint(w, "arrived")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchRedirectCap(t *testing.T) {
	srv := redirectChain(t)
	out, err := fetchTool(t, Options{AllowPrivate: true}, map[string]any{"url": srv.URL + "/r/5"})
	if err != nil {
		t.Fatalf("5 redirects must be followed: %v", err)
	}
	if !strings.Contains(out, "URL: "+srv.URL+"/r/0") || !strings.HasSuffix(out, "arrived") {
		t.Errorf("unexpected result:\n%s", out)
	}
	_, err = fetchTool(t, Options{AllowPrivate: true}, map[string]any{"url": srv.URL + "/r/6"})
	wantErrType(t, err, "too_many_redirects")
	_, err = fetchTool(t, Options{AllowPrivate: true, MaxRedirects: 2}, map[string]any{"url": srv.URL + "/r/3"})
	wantErrType(t, err, "too_many_redirects")
	_, err = fetchTool(t, Options{AllowPrivate: true, MaxRedirects: -1}, map[string]any{"url": srv.URL + "/r/1"})
	wantErrType(t, err, "too_many_redirects")
}

func TestFetchRefusesPrivateTarget(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "internal secret")
	}))
	defer srv.Close()
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), "http://[::1]:1/", "http://169.254.169.254/latest/meta-data/"} {
		_, err := fetchTool(t, Options{}, map[string]any{"url": u})
		wantErrType(t, err, "blocked_address")
		if !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("%s: %v does not wrap ErrBlockedAddress", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the private server was reached %d times", n)
	}
}

// TestFetchRedirectToPrivateRefused starts at a public-looking address (a
// custom dialer routes it to the test server) that redirects to a loopback
// URL: the second hop must be refused before it is sent.
func TestFetchRedirectToPrivateRefused(t *testing.T) {
	var secretHits atomic.Int32
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secretHits.Add(1)
		fmt.Fprint(w, "internal secret")
	}))
	defer secret.Close()
	public := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, secret.URL+"/admin", http.StatusFound)
	}))
	defer public.Close()

	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, public.Listener.Addr().String())
	}}
	defer tr.CloseIdleConnections()
	_, err := fetchTool(t, Options{HTTPClient: &http.Client{Transport: tr}}, map[string]any{"url": "http://93.184.215.14/start"})
	wantErrType(t, err, "blocked_address")
	if n := secretHits.Load(); n != 0 {
		t.Fatalf("the redirect target was reached %d times", n)
	}
}

// TestDialTimeGuard exercises the dial-time check alone (no preflight): the
// guarded transport must refuse to connect to the loopback test server.
func TestDialTimeGuard(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	tr := &http.Transport{}
	rt := guardTransport(tr, false)
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the guarded transport connected to a loopback address")
	}
	if !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("error %v does not wrap ErrBlockedAddress", err)
	}
	if hits.Load() != 0 {
		t.Fatal("the server was reached")
	}
	// The same through NewClient's default transport, bypassing the
	// preflight check by calling its inner transport.
	c := NewClient(ClientOptions{})
	inner := c.Transport.(*checkedTransport).next
	resp, err = inner.RoundTrip(req.Clone(context.Background()))
	if err == nil {
		resp.Body.Close()
		t.Fatal("NewClient's default transport has no dial-time guard")
	}
	if !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("error %v does not wrap ErrBlockedAddress", err)
	}
}

func TestFetchSizeCaps(t *testing.T) {
	big := strings.Repeat("0123456789", 100_000) // 1 MB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, big)
	}))
	defer srv.Close()

	out, err := fetchTool(t, Options{AllowPrivate: true, MaxBytes: 1000}, map[string]any{"url": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "the download was cut at 1000 bytes") {
		t.Errorf("no truncation note:\n%.300s", out)
	}
	body := out[strings.Index(out, "\n\n")+2:]
	if len(body) != 1000 {
		t.Errorf("body length = %d, want 1000", len(body))
	}

	out, err = fetchTool(t, Options{AllowPrivate: true}, map[string]any{"url": srv.URL, "max_chars": 50})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\n\n"+big[:50]+"\n\n[truncated: showing 50 of 1000000 characters]") {
		t.Errorf("max_chars not applied:\n%.300s", out)
	}

	// The model cannot raise the cap above MaxChars.
	out, err = fetchTool(t, Options{AllowPrivate: true, MaxChars: 20}, map[string]any{"url": srv.URL, "max_chars": 5000})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "[truncated: showing 20 of") {
		t.Errorf("MaxChars not enforced:\n%.300s", out)
	}
}

func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	_, err := fetchTool(t, Options{AllowPrivate: true, Timeout: 50 * time.Millisecond}, map[string]any{"url": srv.URL})
	wantErrType(t, err, "timeout")
}

func TestFetchRefusesSchemes(t *testing.T) {
	for _, u := range []string{"file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "gopher://x", "//no-scheme", "http://", "not a url at all"} {
		_, err := fetchTool(t, Options{AllowPrivate: true}, map[string]any{"url": u})
		wantErrType(t, err, "invalid_url")
	}
	_, err := fetchTool(t, Options{}, map[string]any{})
	wantErrType(t, err, "invalid_arguments")
}

func TestFetchRedirectToFileRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "file:///etc/passwd")
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	_, err := fetchTool(t, Options{AllowPrivate: true}, map[string]any{"url": srv.URL})
	if err == nil {
		t.Fatal("a redirect to file:// was followed")
	}
}

func TestWebToolsMetadata(t *testing.T) {
	reg := tools.NewRegistry()
	RegisterWebTools(reg, Options{})
	for _, name := range []string{"web_fetch", "web_search"} {
		spec, ok := reg.Lookup(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		m := spec.Meta
		if m.Class != tools.ClassNetwork || m.RiskLevel != tools.RiskMedium || !m.RequiresApproval {
			t.Errorf("%s metadata = %+v", name, m)
		}
		if spec.Schema.Function.Description == "" || !json.Valid(spec.Schema.Function.Parameters) {
			t.Errorf("%s schema incomplete", name)
		}
	}
}

// TestFetchThroughLoopbackProxy: the host's own proxy may listen on
// loopback; the guard exempts the proxy's address, not the target's.
func TestFetchThroughLoopbackProxy(t *testing.T) {
	var seen atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.URL.String())
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "via proxy")
	}))
	defer proxy.Close()
	proxyURL, err := url.Parse(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(proxyURL)}
	defer tr.CloseIdleConnections()
	out, err := fetchTool(t, Options{HTTPClient: &http.Client{Transport: tr}}, map[string]any{"url": "http://93.184.215.14/page"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "via proxy") || seen.Load() != "http://93.184.215.14/page" {
		t.Errorf("out = %q, proxy saw %v", out, seen.Load())
	}
	// A private target is still refused, proxy or not.
	_, err = fetchTool(t, Options{HTTPClient: &http.Client{Transport: tr}}, map[string]any{"url": "http://10.0.0.1/"})
	wantErrType(t, err, "blocked_address")
}
