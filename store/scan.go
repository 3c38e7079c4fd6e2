package store

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// notFound turns sql.ErrNoRows into ErrNotFound naming what was missing.
func notFound(err error, what, id string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s %q: %w", what, id, ErrNotFound)
	}
	return err
}

// fromMS turns stored unix milliseconds into a UTC time.
func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func newID() string { return uuid.NewString() }
