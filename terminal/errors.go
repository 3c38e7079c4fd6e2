package terminal

import (
	"errors"

	"github.com/zqagent/sidecar/tools"
)

// sentinel is an error that also matches a shared sentinel of the tools
// contract, so that errors.Is(err, tools.ErrNotFound) holds for ErrNotFound.
type sentinel struct {
	msg    string
	parent error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.parent }

// Sentinels of the terminal manager; returned errors wrap them.
var (
	// ErrNotFound: no such terminal in this project (also what a terminal of
	// another project looks like). Matches tools.ErrNotFound.
	ErrNotFound error = &sentinel{"terminal not found", tools.ErrNotFound}
	// ErrOutsideProject: the requested cwd lies outside the project directory,
	// lexically or through a symlink. Matches tools.ErrOutsideWorkspace.
	ErrOutsideProject error = &sentinel{"cwd is outside the project", tools.ErrOutsideWorkspace}
	// ErrClosed: the manager was closed.
	ErrClosed = errors.New("terminal manager closed")
	// ErrUnsupported: PTYs are not available on this platform or build.
	ErrUnsupported = errors.New("terminals not supported on this platform")
	// ErrExited: the terminal's process has exited; it takes no more input.
	ErrExited = errors.New("terminal has exited")
	// ErrInputFull: too much input is queued for a terminal that does not read
	// it; the write was refused.
	ErrInputFull = errors.New("terminal input queue is full")
	// ErrInvalid: a malformed request (no project, zero size, empty command).
	ErrInvalid = errors.New("invalid terminal request")
)
