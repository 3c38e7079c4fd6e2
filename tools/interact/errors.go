package interact

import "errors"

// Sentinels of the interactive tools.
var (
	// ErrNoHandler: the engine installed no handler for user interaction, so
	// nobody can answer.
	ErrNoHandler = errors.New("no user is available to answer (no interaction handler configured)")
	// ErrRefusedDirectory: the requested (or granted) directory may never be
	// granted: the filesystem root or the user's home directory.
	ErrRefusedDirectory = errors.New("directory may not be granted")
)
