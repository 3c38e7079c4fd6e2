package terminal

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"

	"github.com/zqagent/sidecar/terminal/termtext"
	"github.com/zqagent/sidecar/tools"
)

// Defaults of ReadTerminal for a zero limit.
const (
	DefaultReadLines = 200
	DefaultReadBytes = 64 << 10
)

// ListTerminals is the agent's view of the project's terminals
// (tools.TerminalSource): cwd relative to the project, the foreground
// command when the OS tells (else what was started).
func (m *Manager) ListTerminals(ctx context.Context, projectID string) ([]tools.TerminalInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if m.isClosed() {
		return nil, ErrClosed
	}
	out := []tools.TerminalInfo{}
	for _, t := range m.projectTerms(projectID) {
		in := t.info()
		cmd := in.Command
		if in.Alive {
			if fg := t.proc.Foreground(); fg != "" {
				cmd = fg
			}
		}
		out = append(out, tools.TerminalInfo{
			ID: in.ID, Name: in.Name, Cwd: t.relCwd(), Command: cmd,
			Alive: in.Alive, ExitCode: in.ExitCode, CreatedAt: in.CreatedAt,
		})
	}
	return out, nil
}

// relCwd is the cwd relative to the project root the terminal was created
// under ("." for the root), or absolute when that is not known.
func (t *terminal) relCwd() string {
	if t.projectRoot == "" {
		return t.cwd
	}
	rel, err := filepath.Rel(t.projectRoot, t.cwd)
	if err != nil || strings.HasPrefix(rel, "..") {
		return t.cwd
	}
	return filepath.ToSlash(rel)
}

// ReadTerminal returns the last maxLines lines (default 200) of the
// terminal's scrollback as plain text, escape sequences stripped, capped at
// maxBytes (default 64 KiB). A terminal of another project is ErrNotFound.
func (m *Manager) ReadTerminal(ctx context.Context, projectID, terminalID string, maxLines, maxBytes int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	t, err := m.lookup(projectID, terminalID)
	if err != nil {
		return "", err
	}
	if maxLines <= 0 {
		maxLines = DefaultReadLines
	}
	if maxBytes <= 0 {
		maxBytes = DefaultReadBytes
	}
	t.mu.Lock()
	raw := t.ring.tail(t.ring.size)
	partial := t.ring.start() > 0
	t.mu.Unlock()
	if partial {
		// The oldest line was cut by the ring: skip it.
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			raw = raw[i+1:]
		}
	}
	return termtext.Tail(termtext.Render(raw), maxLines, maxBytes), nil
}
