package terminaltools

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zqagent/sidecar/terminal/termtext"
	"github.com/zqagent/sidecar/tools"
)

// DefaultScrollback caps the raw output a MemorySource keeps per terminal.
const DefaultScrollback = 1 << 20

// MemorySource is an in-memory tools.TerminalSource: terminals are added per
// project and fed raw output (with escape sequences); ReadTerminal returns
// the stripped tail. The zero value is not usable; call NewMemorySource.
type MemorySource struct {
	scrollback int

	mu    sync.Mutex
	terms map[string]*memTerminal // guarded by mu; by terminal id
	order []string                // guarded by mu; ids in creation order
}

type memTerminal struct {
	project string
	info    tools.TerminalInfo
	out     []byte // raw output, at most scrollback bytes
}

var _ tools.TerminalSource = (*MemorySource)(nil)

// NewMemorySource returns an empty source keeping up to scrollback raw
// bytes per terminal (0: DefaultScrollback).
func NewMemorySource(scrollback int) *MemorySource {
	if scrollback <= 0 {
		scrollback = DefaultScrollback
	}
	return &MemorySource{scrollback: scrollback, terms: map[string]*memTerminal{}}
}

// Add registers a terminal of projectID. info.ID is required; a zero
// CreatedAt is set to now; Alive is set.
func (m *MemorySource) Add(projectID string, info tools.TerminalInfo) error {
	if info.ID == "" {
		return fmt.Errorf("add terminal: %w: empty id", tools.ErrInvalidArgs)
	}
	if info.CreatedAt.IsZero() {
		info.CreatedAt = time.Now()
	}
	info.Alive = true
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.terms[info.ID]; ok {
		return fmt.Errorf("add terminal %s: %w", info.ID, ErrDuplicateTerminal)
	}
	m.terms[info.ID] = &memTerminal{project: projectID, info: info}
	m.order = append(m.order, info.ID)
	return nil
}

// Write appends raw output to a terminal, dropping the oldest bytes beyond
// the scrollback.
func (m *MemorySource) Write(terminalID string, p []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.terms[terminalID]
	if !ok {
		return fmt.Errorf("terminal %s: %w", terminalID, tools.ErrNotFound)
	}
	t.out = append(t.out, p...)
	if over := len(t.out) - m.scrollback; over > 0 {
		t.out = append(t.out[:0], t.out[over:]...)
	}
	return nil
}

// Exit marks a terminal as exited with code.
func (m *MemorySource) Exit(terminalID string, code int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.terms[terminalID]
	if !ok {
		return fmt.Errorf("terminal %s: %w", terminalID, tools.ErrNotFound)
	}
	t.info.Alive = false
	t.info.ExitCode = &code
	return nil
}

// Remove deletes a terminal; it reports whether it existed.
func (m *MemorySource) Remove(terminalID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.terms[terminalID]; !ok {
		return false
	}
	delete(m.terms, terminalID)
	m.order = slices.DeleteFunc(m.order, func(id string) bool { return id == terminalID })
	return true
}

// ListTerminals implements tools.TerminalSource.
func (m *MemorySource) ListTerminals(ctx context.Context, projectID string) ([]tools.TerminalInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []tools.TerminalInfo{}
	for _, id := range m.order {
		if t := m.terms[id]; t.project == projectID {
			info := t.info
			if info.ExitCode != nil {
				code := *info.ExitCode
				info.ExitCode = &code
			}
			out = append(out, info)
		}
	}
	return out, nil
}

// ReadTerminal implements tools.TerminalSource. A terminal of another
// project is reported as not found.
func (m *MemorySource) ReadTerminal(ctx context.Context, projectID, terminalID string, maxLines, maxBytes int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	t, ok := m.terms[terminalID]
	var raw []byte
	if ok && t.project == projectID {
		raw = bytes.Clone(t.out)
	}
	m.mu.Unlock()
	if !ok || t.project != projectID {
		return "", fmt.Errorf("terminal %s: %w", terminalID, tools.ErrNotFound)
	}
	return termtext.Tail(termtext.Render(raw), maxLines, maxBytes), nil
}
