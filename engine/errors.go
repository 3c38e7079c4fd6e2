package engine

import "errors"

// Sentinels of the engine.
var (
	// ErrBusy: a turn is already running on this engine.
	ErrBusy = errors.New("a turn is already running in this session")
	// ErrClosed: the engine was closed.
	ErrClosed = errors.New("engine closed")
	// ErrMissingOption: a required option of New is missing.
	ErrMissingOption = errors.New("missing engine option")
	// ErrNothingToRetry: Retry was called but the last turn did not end in a
	// retriable error.
	ErrNothingToRetry = errors.New("the last turn did not end in a retriable error")
	// ErrNoApprover: an approval was needed and no approver was set
	// (defaultApproval "error").
	ErrNoApprover = errors.New("tool needs approval but no approver was set on the engine")
	// ErrNoInteractor: ask_user, propose_plan or request_directory was
	// called and no handler was set.
	ErrNoInteractor = errors.New("no handler is set for interactive tools")
)
