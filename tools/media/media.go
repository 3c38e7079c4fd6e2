package media

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/web"
)

//go:embed media.md
var mediaDescription string

// Options configures the media tool. The zero value is usable.
type Options struct {
	// HTTPClient is the base client for URL downloads (see
	// web.ClientOptions.HTTPClient).
	HTTPClient *http.Client
	// AllowPrivate lets URL downloads reach loopback and private addresses.
	AllowPrivate bool
	// Timeout bounds one URL download (default 30s).
	Timeout time.Duration
	// MaxRedirects caps redirect chains (0: 5; negative: none followed).
	MaxRedirects int
	// UserAgent is sent with downloads.
	UserAgent string
}

// Tool is a registered media tool. Its budget (MaxAttachments files,
// MaxAttachmentBytes in total) is per turn: the engine calls Reset when a
// turn starts.
type Tool struct {
	ws        *confine.Workspace
	client    *http.Client
	timeout   time.Duration
	userAgent string

	mu    sync.Mutex
	count int   // guarded by mu; attachments reserved this turn
	bytes int64 // guarded by mu; bytes attached this turn
}

// RegisterMediaTool registers the media tool reading from ws (nil: URLs
// only) and returns it so the engine can Reset its budget every turn.
func RegisterMediaTool(reg *tools.Registry, ws *confine.Workspace, opts Options) *Tool {
	if opts.Timeout <= 0 {
		opts.Timeout = web.DefaultTimeout
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "zqagent-sidecar/1 (media)"
	}
	t := &Tool{
		ws: ws,
		client: web.NewClient(web.ClientOptions{
			HTTPClient:   opts.HTTPClient,
			AllowPrivate: opts.AllowPrivate,
			MaxRedirects: opts.MaxRedirects,
		}),
		timeout:   opts.Timeout,
		userAgent: opts.UserAgent,
	}
	reg.MustRegister(tools.Spec{
		Name: "media",
		Schema: llm.ToolSchema{Type: "function", Function: llm.FunctionSchema{
			Name:        "media",
			Description: strings.TrimSpace(mediaDescription),
			Parameters:  tools.ParamsOf[mediaArgs](),
		}},
		Meta: tools.Metadata{
			Category:     "media",
			RiskLevel:    tools.RiskMedium,
			Class:        tools.ClassNetwork,
			Capabilities: []string{"media", "read", "network"},
			PathArgs:     []string{"path"},
		},
		Handler: t.handle,
	})
	return t
}

// Reset clears the per-turn budget.
func (t *Tool) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.count, t.bytes = 0, 0
}

// Used returns the attachments and bytes used this turn.
func (t *Tool) Used() (count int, bytes int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.count, t.bytes
}

type mediaArgs struct {
	Path string `json:"path" jsonschema_description:"Path of an image, audio or video file in the workspace. Give either path or url."`
	URL  string `json:"url" jsonschema_description:"http or https URL of a public image, audio or video file. Give either path or url."`
}

// Output is what the model reads as the media tool's result.
type Output struct {
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Source   string `json:"source"`
	Note     string `json:"note"`
}

func (t *Tool) handle(ctx context.Context, call tools.Call) (any, error) {
	var a mediaArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	a.Path, a.URL = strings.TrimSpace(a.Path), strings.TrimSpace(a.URL)
	if (a.Path == "") == (a.URL == "") {
		return nil, fmt.Errorf("%w: give exactly one of path or url", tools.ErrInvalidArgs)
	}
	if err := t.reserve(); err != nil {
		return nil, err
	}
	name, mt, data, source, err := t.load(ctx, a)
	if err == nil {
		err = t.commit(int64(len(data)))
	}
	if err != nil {
		t.release()
		return nil, err
	}
	return tools.Result{
		Output: Output{
			Name:     name,
			MimeType: mt,
			Size:     int64(len(data)),
			Source:   source,
			Note:     fmt.Sprintf("attached %s (%s, %d bytes); it follows the tool results", name, mt, len(data)),
		},
		Attachments: []llm.Attachment{{Name: name, MimeType: mt, DataURL: EncodeDataURL(mt, data)}},
	}, nil
}

// reserve takes one attachment slot of this turn's budget.
func (t *Tool) reserve() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.count >= MaxAttachments {
		return tools.Errorf("limit_exceeded", "%w: at most %d media attachments per turn", ErrLimit, MaxAttachments)
	}
	t.count++
	return nil
}

func (t *Tool) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.count--
}

// commit adds n bytes to this turn's total.
func (t *Tool) commit(n int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bytes+n > MaxAttachmentBytes {
		return tools.Errorf("limit_exceeded", "%w: at most %d bytes of media per turn (%d used)", ErrLimit, MaxAttachmentBytes, t.bytes)
	}
	t.bytes += n
	return nil
}

func (t *Tool) load(ctx context.Context, a mediaArgs) (name, mt string, data []byte, source string, err error) {
	if a.URL != "" {
		name, data, err = t.download(ctx, a.URL)
		source = a.URL
	} else {
		name, data, err = t.readFile(ctx, a.Path)
		if t.ws != nil {
			source = t.ws.Rel(a.Path)
		}
	}
	if err != nil {
		return "", "", nil, "", err
	}
	mt = DetectMIME(name, data)
	if mt == "" {
		return "", "", nil, "", tools.Errorf("unsupported_content", "%w: %s (use read_file or web_fetch for text)", ErrNotMedia, name)
	}
	if len(data) == 0 {
		return "", "", nil, "", tools.Errorf("unsupported_content", "%w: %s is empty", ErrNotMedia, name)
	}
	return name, mt, data, source, nil
}

func (t *Tool) readFile(ctx context.Context, p string) (string, []byte, error) {
	if t.ws == nil {
		return "", nil, tools.Errorf("unavailable", "%w: no workspace; give a url", tools.ErrUnavailable)
	}
	root, rel, err := t.ws.Open(p, false)
	if err != nil {
		return "", nil, fileErr(p, err)
	}
	defer root.Close()
	f, fi, err := confine.OpenRead(root, rel) // a FIFO never blocks the read
	if err != nil {
		return "", nil, fileErr(p, err)
	}
	defer f.Close()
	if fi.IsDir() {
		return "", nil, fmt.Errorf("%w: %s is a directory", tools.ErrInvalidArgs, p)
	}
	if fi.Size() > MaxAttachmentBytes {
		return "", nil, tools.Errorf("too_large", "%w: %s is %d bytes, more than %d", ErrLimit, p, fi.Size(), MaxAttachmentBytes)
	}
	data, err := io.ReadAll(io.LimitReader(tools.ContextReader(ctx, f), MaxAttachmentBytes+1))
	if err != nil {
		return "", nil, fileErr(p, err)
	}
	if len(data) > MaxAttachmentBytes {
		return "", nil, tools.Errorf("too_large", "%w: %s is more than %d bytes", ErrLimit, p, MaxAttachmentBytes)
	}
	return fi.Name(), data, nil
}

func fileErr(p string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", tools.ErrNotFound, p)
	}
	if errors.Is(err, confine.ErrSpecialFile) {
		return tools.Errorf("special_file", "%w: read %s: %w; media reads regular files only", tools.ErrInvalidArgs, p, err)
	}
	return fmt.Errorf("read %s: %w", p, err)
}

func (t *Tool) download(ctx context.Context, rawURL string) (string, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	page, err := web.Get(ctx, t.client, rawURL, MaxAttachmentBytes, t.userAgent, "image/*,audio/*,video/*;q=0.9,*/*;q=0.1")
	if err != nil {
		switch {
		case errors.Is(err, web.ErrScheme):
			return "", nil, tools.Errorf("invalid_url", "%w", err)
		case errors.Is(err, web.ErrBlockedAddress):
			return "", nil, tools.Errorf("blocked_address", "%w", err)
		case errors.Is(err, web.ErrTooManyRedirects):
			return "", nil, tools.Errorf("too_many_redirects", "%w", err)
		case errors.Is(err, web.ErrHTTPStatus):
			return "", nil, tools.Errorf("http_error", "%w", err)
		case errors.Is(err, context.DeadlineExceeded):
			return "", nil, tools.Errorf("timeout", "download timed out: %w", err)
		}
		return "", nil, tools.Errorf("network_error", "download: %w", err)
	}
	if page.Truncated {
		return "", nil, tools.Errorf("too_large", "%w: %s is more than %d bytes", ErrLimit, rawURL, MaxAttachmentBytes)
	}
	name := urlName(page.URL)
	// The server's type counts when the name has no known extension.
	if _, ok := extTypes[strings.ToLower(path.Ext(name))]; !ok && IsMedia(page.ContentType) {
		name += typeExt(page.ContentType)
	}
	return name, page.Body, nil
}

func urlName(raw string) string {
	u, err := web.ParseURL(raw)
	if err != nil {
		return "download"
	}
	if n := SanitizeName(path.Base(u.Path)); n != "" {
		return n
	}
	return "download"
}
