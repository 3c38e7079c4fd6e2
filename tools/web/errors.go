package web

import "errors"

// Sentinels of the web tools.
var (
	// ErrScheme: the URL is not http or https.
	ErrScheme = errors.New("only http and https URLs are allowed")
	// ErrBlockedAddress: the host resolves to a private, loopback, link-local
	// or other internal address and private targets are not allowed.
	ErrBlockedAddress = errors.New("address is private, loopback or otherwise internal")
	// ErrTooManyRedirects: the redirect chain is longer than MaxRedirects.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrUnsupportedType: the response is binary (not text, HTML or JSON).
	ErrUnsupportedType = errors.New("unsupported content type")
	// ErrHTTPStatus: the server answered with a non-2xx status.
	ErrHTTPStatus = errors.New("unexpected HTTP status")
	// ErrSearch: the search backend failed or answered something unreadable.
	ErrSearch = errors.New("search failed")
)
