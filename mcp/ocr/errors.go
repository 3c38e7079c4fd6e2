package ocr

import "errors"

// Sentinels of the OCR preset.
var (
	// ErrNoEngine: no OCR engine could read the file; the error lists why
	// each one was skipped.
	ErrNoEngine = errors.New("no OCR engine available")
	// ErrUnsupported: the file is neither an image nor a PDF.
	ErrUnsupported = errors.New("unsupported file type")
	// errSkip marks an engine that is not available here.
	errSkip = errors.New("not available")
)
