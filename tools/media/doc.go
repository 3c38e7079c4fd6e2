// Package media owns the media tool, which attaches an image, audio or video
// file (from the workspace or an http/https URL) to the conversation for
// multimodal models, and the attachment helpers the sidecar uses for user
// uploads (seed §13): NormalizeAttachments (image/*, audio/* and video/*
// only, non-empty, the declared type matching the data URL's; a refused one
// is an *AttachmentError naming it), SaveAttachments and
// ReadStoredAttachment; SaveUploads applies the same rules to uploads as a
// request carries them and decodes their base64 straight to their files in
// chunks (turn.start: nothing the size of an attachment is allocated). Files are opened with confine.OpenRead: never
// blocking, and FIFOs, sockets and devices refused.
//
// Limits (seed §13): at most MaxAttachments files of MaxAttachmentBytes each
// and MaxAttachmentBytes in total, per user message and, for the media tool,
// per turn (the engine calls Tool.Reset at the start of every turn).
//
// Concurrency: a Tool is safe for concurrent use; its per-turn budget is
// guarded by a mutex. The attachment helpers are plain functions. URL
// downloads go through tools/web's guarded client (no private or loopback
// targets unless allowed, redirects capped and re-checked) built on
// Options.HTTPClient (backend.NewEngine's dials through SOCKS5_PROXY).
package media
