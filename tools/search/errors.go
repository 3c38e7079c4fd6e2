package search

import "errors"

// Sentinels of the search tool.
var (
	// ErrBadPattern: the regular expression or a glob does not compile.
	ErrBadPattern = errors.New("invalid pattern")
)

func isBadPattern(err error) bool { return errors.Is(err, ErrBadPattern) }
