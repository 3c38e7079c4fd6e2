package fs

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

// Sentinels of the file tools. Handlers return them wrapped in a
// tools.ToolError whose Type names them for the model.
var (
	ErrBinary    = errors.New("binary file")
	ErrIsDir     = errors.New("is a directory")
	ErrNotDir    = errors.New("not a directory")
	ErrNoMatch   = errors.New("old_string not found")
	ErrAmbiguous = errors.New("old_string is not unique")
	ErrTooLarge  = errors.New("file too large")
)

// Error types the model sees in {error, error_type}.
const (
	TypeBinary    = "binary_file"
	TypeIsDir     = "is_directory"
	TypeNotDir    = "not_directory"
	TypeNoMatch   = "no_match"
	TypeAmbiguous = "ambiguous_match"
	TypeTooLarge  = "file_too_large"
	TypeSpecial   = "special_file"
)

func toolErr(typ string, sentinel error, format string, a ...any) error {
	return &tools.ToolError{Type: typ, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, a...)...)}
}

// mapFSError turns an os error into the tool contract's sentinels.
func mapFSError(op, display string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, tools.ErrOutsideWorkspace), errors.Is(err, tools.ErrConflict),
		errors.Is(err, tools.ErrNotFound), errors.Is(err, tools.ErrInvalidArgs):
		return err
	case errors.Is(err, confine.ErrSpecialFile):
		return &tools.ToolError{Type: TypeSpecial, Err: fmt.Errorf("%s %s: %w; only regular files and directories can be used", op, display, err)}
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %s: %s does not exist", tools.ErrNotFound, op, display)
	case IsEscape(err):
		return fmt.Errorf("%w: %s %s: %v", tools.ErrOutsideWorkspace, op, display, err)
	}
	return fmt.Errorf("%s %s: %w", op, display, err)
}

// IsEscape reports an os.Root refusal ("path escapes from parent"), at any
// depth of the error chain.
func IsEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}
