package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zqagent/sidecar/confine"
)

// Grants are what the user allowed a session during its turns: "always"
// grants for tools and commands and directories outside the workspace.
// The permission mode, shell policy and allowed commands are the
// session's (Session.Mode and Settings), stored there only.
type Grants struct {
	SessionTools    []string        `json:"sessionTools"`
	SessionCommands []string        `json:"sessionCommands"`
	Directories     []confine.Grant `json:"directories"`
	// GrantTimes says when each SessionTools and SessionCommands grant
	// was given (absent for grants saved before times were kept).
	GrantTimes GrantTimes `json:"grantTimes"`
}

// GrantTimes are the times of a session's tool and command grants, by tool
// name and by executable.
type GrantTimes struct {
	Tools    map[string]time.Time `json:"tools,omitempty"`
	Commands map[string]time.Time `json:"commands,omitempty"`
}

func jsonList[T any](v []T) (string, error) {
	if v == nil {
		v = []T{}
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// SaveGrants replaces a session's grants.
func (s *Store) SaveGrants(ctx context.Context, sessionID string, g Grants) error {
	var cols [4]string
	var err error
	for i, f := range []func() (string, error){
		func() (string, error) { return jsonList(g.SessionTools) },
		func() (string, error) { return jsonList(g.SessionCommands) },
		func() (string, error) { return jsonList(g.Directories) },
		func() (string, error) { b, err := json.Marshal(g.GrantTimes); return string(b), err },
	} {
		if cols[i], err = f(); err != nil {
			return fmt.Errorf("save grants: %w", err)
		}
	}
	err = s.write(ctx, func(t *wtx) error {
		st, err := t.session(sessionID)
		if err != nil {
			return err
		}
		_, err = t.exec(`INSERT OR REPLACE INTO grants (session_pk,
			session_tools, session_commands, directories, grant_times, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			st.pk, cols[0], cols[1], cols[2], cols[3], t.nowMS())
		return err
	})
	if err != nil {
		return fmt.Errorf("save grants: %w", err)
	}
	return nil
}

// Grants returns a session's grants (the zero Grants when none were saved).
func (s *Store) Grants(ctx context.Context, sessionID string) (Grants, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return Grants{}, fmt.Errorf("grants: %w", err)
	}
	var g Grants
	var cols [4][]byte
	err = s.rdb.QueryRowContext(ctx, `SELECT session_tools, session_commands,
		directories, grant_times FROM grants WHERE session_pk = ?`, pk).Scan(&cols[0], &cols[1], &cols[2], &cols[3])
	if errors.Is(err, sql.ErrNoRows) {
		return Grants{}, nil
	}
	if err != nil {
		return Grants{}, fmt.Errorf("grants: %w", err)
	}
	for i, dst := range []any{&g.SessionTools, &g.SessionCommands, &g.Directories, &g.GrantTimes} {
		if err := json.Unmarshal(cols[i], dst); err != nil {
			return Grants{}, fmt.Errorf("grants: %w: %v", ErrCorrupt, err)
		}
	}
	return g, nil
}

// SaveCompaction replaces a session's compaction state (a JSON value).
func (s *Store) SaveCompaction(ctx context.Context, sessionID string, state json.RawMessage) error {
	if len(state) == 0 || !json.Valid(state) {
		return fmt.Errorf("save compaction: %w: state is not JSON", ErrInvalid)
	}
	err := s.write(ctx, func(t *wtx) error {
		st, err := t.session(sessionID)
		if err != nil {
			return err
		}
		_, err = t.exec("INSERT OR REPLACE INTO compaction (session_pk, state, updated_at) VALUES (?, ?, ?)",
			st.pk, string(state), t.nowMS())
		return err
	})
	if err != nil {
		return fmt.Errorf("save compaction: %w", err)
	}
	return nil
}

// Compaction returns a session's compaction state (nil when none).
func (s *Store) Compaction(ctx context.Context, sessionID string) (json.RawMessage, error) {
	pk, err := sessionPK(ctx, s.rdb, sessionID)
	if err != nil {
		return nil, fmt.Errorf("compaction: %w", err)
	}
	var state []byte
	err = s.rdb.QueryRowContext(ctx, "SELECT state FROM compaction WHERE session_pk = ?", pk).Scan(&state)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("compaction: %w", err)
	}
	return json.RawMessage(state), nil
}
