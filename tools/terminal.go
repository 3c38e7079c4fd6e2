package tools

import (
	"context"
	"time"
)

// TerminalInfo describes one terminal for the agent (terminal_list).
type TerminalInfo struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Cwd       string    `json:"cwd"`
	Command   string    `json:"command,omitempty"` // running command when known
	Alive     bool      `json:"alive"`
	ExitCode  *int      `json:"exitCode,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// TerminalSource is what the terminal tools read: the host's PTYs (the
// terminal package implements it). projectID is the isolation boundary: an
// implementation returns only that project's terminals and refuses ids of
// other projects with an error wrapping ErrNotFound.
type TerminalSource interface {
	ListTerminals(ctx context.Context, projectID string) ([]TerminalInfo, error)
	// ReadTerminal returns up to the last maxLines lines of the terminal's
	// output as plain text (ANSI escape sequences stripped), capped at
	// maxBytes.
	ReadTerminal(ctx context.Context, projectID, terminalID string, maxLines, maxBytes int) (string, error)
}
