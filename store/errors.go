package store

import "errors"

// Sentinel errors. Callers test them with errors.Is; the store wraps them
// with context.
var (
	// ErrNotFound: no such project, session, request, profile, agent or setting
	// (or a request that belongs to another session).
	ErrNotFound = errors.New("not found")
	// ErrAlreadyAnswered: the pending request was answered (or closed) before.
	ErrAlreadyAnswered = errors.New("request already answered")
	// ErrNewerSchema: the database was written by a newer sidecar.
	ErrNewerSchema = errors.New("database schema is newer than this sidecar")
	// ErrCorrupt: the database file failed its integrity check or is not a
	// database.
	ErrCorrupt = errors.New("database is corrupt")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("store closed")
	// ErrLocked: another process holds the data directory.
	ErrLocked = errors.New("data directory is in use by another process")
	// ErrInvalid: an argument was refused (bad JSON, unknown kind or status,
	// a credential in a provider profile).
	ErrInvalid = errors.New("invalid argument")
)
