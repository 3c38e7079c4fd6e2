package scripted

import "errors"

// ErrBadScript: a script file could not be parsed or is invalid.
var ErrBadScript = errors.New("invalid script")
