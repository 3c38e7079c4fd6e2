package tools

import (
	"errors"
	"fmt"
)

// Sentinels of the tool contract.
var (
	ErrNoName    = errors.New("tool has no name")
	ErrNoHandler = errors.New("tool has no handler")
	// ErrInvalidArgs: the model's arguments do not match the tool's schema.
	ErrInvalidArgs = errors.New("invalid arguments")
	// ErrOutsideWorkspace: a path escapes the workspace and granted directories.
	ErrOutsideWorkspace = errors.New("path is outside the workspace")
	// ErrNotFound: a file, task or terminal the call names does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the file changed since this session read it.
	ErrConflict = errors.New("file changed since it was read")
	// ErrUnavailable: the tool's backend is not configured here.
	ErrUnavailable = errors.New("not available")
)

// ToolError is an error with an explicit error_type for the model.
type ToolError struct {
	Type string // e.g. "invalid_arguments", "not_found", "conflict"
	Err  error
}

func (e *ToolError) Error() string { return e.Err.Error() }
func (e *ToolError) Unwrap() error { return e.Err }

// Errorf returns a ToolError of the given type.
func Errorf(typ, format string, a ...any) error {
	return &ToolError{Type: typ, Err: fmt.Errorf(format, a...)}
}

// ErrorType names an error for the {error, error_type} tool result.
func ErrorType(err error) string {
	var te *ToolError
	switch {
	case errors.As(err, &te) && te.Type != "":
		return te.Type
	case errors.Is(err, ErrInvalidArgs):
		return "invalid_arguments"
	case errors.Is(err, ErrOutsideWorkspace):
		return "outside_workspace"
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrConflict):
		return "conflict"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	}
	return "tool_error"
}
