package web

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Fetched is a downloaded response body.
type Fetched struct {
	URL         string // final URL after redirects
	Status      int
	ContentType string // media type, lowercased, without parameters; sniffed when absent
	Charset     string // the charset parameter, if any
	Body        []byte
	Truncated   bool // the body was longer than the cap and was cut
}

// Get downloads rawURL with client (use NewClient for the guard), reading at
// most maxBytes of the body. A non-2xx status is an error wrapping
// ErrHTTPStatus. userAgent and accept may be empty.
func Get(ctx context.Context, client *http.Client, rawURL string, maxBytes int64, userAgent, accept string) (*Fetched, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%w: %s from %s", ErrHTTPStatus, resp.Status, resp.Request.URL.Redacted())
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	f := &Fetched{URL: resp.Request.URL.String(), Status: resp.StatusCode}
	if int64(len(body)) > maxBytes {
		body = body[:maxBytes]
		f.Truncated = true
	}
	f.Body = body
	f.ContentType, f.Charset = mediaType(resp.Header.Get("Content-Type"), body)
	return f, nil
}

// mediaType parses a Content-Type header, sniffing the body when the header
// is absent or unparsable.
func mediaType(header string, body []byte) (string, string) {
	if header != "" {
		if mt, params, err := mime.ParseMediaType(header); err == nil {
			return strings.ToLower(mt), strings.ToLower(params["charset"])
		}
	}
	mt, params, err := mime.ParseMediaType(http.DetectContentType(body))
	if err != nil {
		return "application/octet-stream", ""
	}
	return mt, strings.ToLower(params["charset"])
}
