package diff

import (
	"errors"
	"fmt"

	"github.com/zqagent/sidecar/tools"
)

// Sentinels of the patch tools, wrapped in tools.ToolError values whose Type
// the model sees.
var (
	// ErrParse: the patch text is malformed.
	ErrParse = errors.New("malformed patch")
	// ErrHunk: a hunk does not match the file's current content.
	ErrHunk = errors.New("hunk does not apply")
	// ErrExists: an added file or a move target already exists.
	ErrExists = errors.New("file already exists")
	// ErrBinary: the patch changes a binary file.
	ErrBinary = errors.New("binary patches are not supported")
)

// Error types for {error, error_type}.
const (
	TypeParse  = "invalid_patch"
	TypeHunk   = "patch_failed"
	TypeExists = "already_exists"
	TypeBinary = "binary_patch"
)

func toolErr(typ string, sentinel error, format string, a ...any) error {
	return &tools.ToolError{Type: typ, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, a...)...)}
}

func parseErr(line int, format string, a ...any) error {
	return toolErr(TypeParse, ErrParse, "line %d: "+format, append([]any{line}, a...)...)
}
