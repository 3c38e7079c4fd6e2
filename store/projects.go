package store

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// Project is a workspace directory the user opened.
type Project struct {
	ID        string    `json:"id"`
	Path      string    `json:"path"`
	CreatedAt time.Time `json:"createdAt"`
	OpenedAt  time.Time `json:"openedAt"`
}

// UpsertProject returns the project of path (cleaned and made absolute),
// creating it on first use and stamping OpenedAt. The same path always
// gets the same id.
func (s *Store) UpsertProject(ctx context.Context, path string) (Project, error) {
	abs, err := filepath.Abs(path)
	if err != nil || path == "" {
		return Project{}, fmt.Errorf("upsert project: %w: path %q", ErrInvalid, path)
	}
	var p Project
	err = s.write(ctx, func(t *wtx) error {
		now := t.nowMS()
		if _, err := t.exec(`INSERT INTO projects (id, path, created_at, opened_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (path) DO UPDATE SET opened_at = excluded.opened_at`, newID(), abs, now, now); err != nil {
			return err
		}
		var created, opened int64
		if err := t.queryRow("SELECT id, path, created_at, opened_at FROM projects WHERE path = ?", abs).
			Scan(&p.ID, &p.Path, &created, &opened); err != nil {
			return err
		}
		p.CreatedAt, p.OpenedAt = fromMS(created), fromMS(opened)
		return nil
	})
	if err != nil {
		return Project{}, fmt.Errorf("upsert project: %w", err)
	}
	return p, nil
}

const projectCols = "id, path, created_at, opened_at"

type scanner interface{ Scan(dest ...any) error }

func scanProject(r scanner) (Project, error) {
	var p Project
	var created, opened int64
	if err := r.Scan(&p.ID, &p.Path, &created, &opened); err != nil {
		return Project{}, err
	}
	p.CreatedAt, p.OpenedAt = fromMS(created), fromMS(opened)
	return p, nil
}

// Project returns a project by id.
func (s *Store) Project(ctx context.Context, id string) (Project, error) {
	p, err := scanProject(s.rdb.QueryRowContext(ctx, "SELECT "+projectCols+" FROM projects WHERE id = ?", id))
	if err != nil {
		return Project{}, fmt.Errorf("project: %w", notFound(err, "project", id))
	}
	return p, nil
}

// Projects returns every project, most recently opened first.
func (s *Store) Projects(ctx context.Context) ([]Project, error) {
	rows, err := s.rdb.QueryContext(ctx, "SELECT "+projectCols+" FROM projects ORDER BY opened_at DESC, id")
	if err != nil {
		return nil, fmt.Errorf("projects: %w", err)
	}
	defer rows.Close()
	out := []Project{}
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, fmt.Errorf("projects: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("projects: %w", err)
	}
	return out, nil
}
