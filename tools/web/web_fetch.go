package web

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/zqagent/sidecar/tools"
)

//go:embed web_fetch.md
var webFetchDescription string

type fetchArgs struct {
	URL      string `json:"url" jsonschema:"required" jsonschema_description:"The http or https URL to fetch."`
	MaxChars int    `json:"max_chars" jsonschema:"minimum=1" jsonschema_description:"Maximum number of characters of text to return (default and upper bound: 100000)."`
}

type fetcher struct {
	opts   Options
	client *http.Client
}

const acceptText = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,text/*;q=0.8,*/*;q=0.5"

func (f *fetcher) handle(ctx context.Context, call tools.Call) (any, error) {
	var a fetchArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.URL) == "" {
		return nil, fmt.Errorf("%w: url is required", tools.ErrInvalidArgs)
	}
	limit := f.opts.MaxChars
	if a.MaxChars > 0 && a.MaxChars < limit {
		limit = a.MaxChars
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	page, err := Get(ctx, f.client, a.URL, f.opts.MaxBytes, f.opts.UserAgent, acceptText)
	if err != nil {
		return nil, classify(ctx, err)
	}
	title, text, err := toText(ctx, page)
	if err != nil {
		return nil, err
	}
	return render(page, title, text, limit, f.opts.MaxBytes), nil
}

// classify gives fetch errors an error_type the model can act on.
func classify(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrScheme):
		return tools.Errorf("invalid_url", "%w", err)
	case errors.Is(err, ErrBlockedAddress):
		return tools.Errorf("blocked_address", "%w", err)
	case errors.Is(err, ErrTooManyRedirects):
		return tools.Errorf("too_many_redirects", "%w", err)
	case errors.Is(err, ErrHTTPStatus):
		return tools.Errorf("http_error", "%w", err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return tools.Errorf("timeout", "fetch timed out: %w", err)
	}
	return tools.Errorf("network_error", "fetch: %w", err)
}

// toText turns a fetched body into text: HTML to Markdown, text types as
// they are, binary refused.
func toText(ctx context.Context, page *Fetched) (title, text string, err error) {
	switch ct := page.ContentType; {
	case ct == "text/html" || ct == "application/xhtml+xml":
		return htmlToMarkdown(ctx, page.Body, page.URL)
	case isTextType(ct):
		return "", strings.ToValidUTF8(string(page.Body), "\uFFFD"), nil
	default:
		return "", "", tools.Errorf("unsupported_content", "%w: %s is binary; web_fetch returns text only (use the media tool for images, audio and video)", ErrUnsupportedType, ct)
	}
}

func isTextType(ct string) bool {
	if strings.HasPrefix(ct, "text/") {
		return true
	}
	switch ct {
	case "application/json", "application/xml", "application/javascript", "application/x-javascript",
		"application/ecmascript", "application/x-yaml", "application/yaml", "application/toml",
		"application/x-sh", "application/sql", "application/graphql", "application/x-ndjson":
		return true
	}
	return strings.HasSuffix(ct, "+json") || strings.HasSuffix(ct, "+xml")
}

// render lays out the result: a short header, then the text, cut at limit
// characters on a rune boundary.
func render(page *Fetched, title, text string, limit int, maxBytes int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", page.URL)
	if title != "" {
		fmt.Fprintf(&b, "Title: %s\n", title)
	}
	fmt.Fprintf(&b, "Content-Type: %s\n", page.ContentType)
	if page.Truncated {
		fmt.Fprintf(&b, "Note: the download was cut at %d bytes; the end of the page is missing.\n", maxBytes)
	}
	b.WriteString("\n")
	text = strings.TrimSpace(text)
	total := utf8.RuneCountInString(text)
	if total > limit {
		text = cutRunes(text, limit)
		b.WriteString(text)
		fmt.Fprintf(&b, "\n\n[truncated: showing %d of %d characters]", limit, total)
		return b.String()
	}
	b.WriteString(text)
	return b.String()
}

func cutRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
