package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// Setting returns the JSON value of a global setting (ErrNotFound when
// unset).
func (s *Store) Setting(ctx context.Context, key string) (json.RawMessage, error) {
	var v []byte
	err := s.rdb.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = ?", key).Scan(&v)
	if err != nil {
		return nil, fmt.Errorf("setting: %w", notFound(err, "setting", key))
	}
	return json.RawMessage(v), nil
}

// SetSetting stores a global setting; a nil value deletes it.
func (s *Store) SetSetting(ctx context.Context, key string, v json.RawMessage) error {
	if key == "" || (v != nil && !json.Valid(v)) {
		return fmt.Errorf("set setting: %w: key %q or value", ErrInvalid, key)
	}
	err := s.write(ctx, func(t *wtx) error {
		if v == nil {
			_, err := t.exec("DELETE FROM settings WHERE key = ?", key)
			return err
		}
		_, err := t.exec("INSERT OR REPLACE INTO settings (key, value, updated_at) VALUES (?, ?, ?)",
			key, string(v), t.nowMS())
		return err
	})
	if err != nil {
		return fmt.Errorf("set setting %q: %w", key, err)
	}
	return nil
}
