package media

import "errors"

// Sentinels of the media package.
var (
	// ErrAttachment: an attachment is malformed, of a refused type, too big,
	// or one too many; also a stored-attachment path that is not
	// "attachments/<file>".
	ErrAttachment = errors.New("invalid attachment")
	// ErrNotMedia: the file is not an image, audio or video file.
	ErrNotMedia = errors.New("not an image, audio or video file")
	// ErrLimit: the per-turn attachment budget is used up.
	ErrLimit = errors.New("attachment limit reached")
)
