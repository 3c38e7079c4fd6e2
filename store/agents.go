package store

import (
	"context"
	"fmt"
	"time"
)

// AgentDef is a persisted agent definition (seed 16.2).
type AgentDef struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Prompt      string    `json:"prompt"`
	Model       string    `json:"model,omitempty"`
	Builtin     bool      `json:"builtin"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Agents returns every stored agent, by name.
func (s *Store) Agents(ctx context.Context) ([]AgentDef, error) {
	rows, err := s.rdb.QueryContext(ctx, "SELECT name, description, prompt, model, builtin, updated_at FROM agents ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	defer rows.Close()
	out := []AgentDef{}
	for rows.Next() {
		var a AgentDef
		var updated int64
		if err := rows.Scan(&a.Name, &a.Description, &a.Prompt, &a.Model, &a.Builtin, &updated); err != nil {
			return nil, fmt.Errorf("agents: %w", err)
		}
		a.UpdatedAt = fromMS(updated)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("agents: %w", err)
	}
	return out, nil
}

// PutAgent creates or replaces an agent.
func (s *Store) PutAgent(ctx context.Context, a AgentDef) error {
	if a.Name == "" {
		return fmt.Errorf("put agent: %w: agent without a name", ErrInvalid)
	}
	err := s.write(ctx, func(t *wtx) error {
		_, err := t.exec(`INSERT OR REPLACE INTO agents (name, description, prompt, model, builtin, updated_at)
			VALUES (?, ?, ?, ?, ?, ?)`, a.Name, a.Description, a.Prompt, a.Model, a.Builtin, t.nowMS())
		return err
	})
	if err != nil {
		return fmt.Errorf("put agent %q: %w", a.Name, err)
	}
	return nil
}

// DeleteAgent removes an agent (ErrNotFound when absent).
func (s *Store) DeleteAgent(ctx context.Context, name string) error {
	return s.deleteByName(ctx, "agents", "agent", name)
}
