package terminaltools

import "errors"

// ErrDuplicateTerminal: MemorySource.Add was given an id already in use.
var ErrDuplicateTerminal = errors.New("terminal id already in use")
