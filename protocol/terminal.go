package protocol

import "time"

// Terminal is a terminal of a project.
type Terminal struct {
	// ID is the terminalId of the other calls (term_…).
	ID        string `json:"id"`
	ProjectID string `json:"projectId"`
	Name      string `json:"name"`
	Cwd       string `json:"cwd"`
	// Command is the program as run ("/bin/zsh -l").
	Command string `json:"command"`
	Cols    int    `json:"cols"`
	Rows    int    `json:"rows"`
	// Alive turns false, and ExitCode appears, once the process exited and
	// all its output is in the scrollback.
	Alive     bool      `json:"alive"`
	ExitCode  *int      `json:"exitCode,omitempty"`
	Pid       int       `json:"pid"`
	CreatedAt time.Time `json:"createdAt"`
	// LastSeq is the byte offset just past the newest output.
	LastSeq int64 `json:"lastSeq"`
}

// TerminalCreateParams are the params of terminal.create.
type TerminalCreateParams struct {
	ProjectID string `json:"projectId" rpc:"required"`
	// Cols and Rows are 1–65535 cells.
	Cols int `json:"cols" rpc:"required"`
	Rows int `json:"rows" rpc:"required"`
	// Cwd is relative to the project, or absolute inside it.
	Cwd string `json:"cwd,omitempty"`
	// Shell replaces $SHELL (run as a login shell).
	Shell string `json:"shell,omitempty"`
	// Command is an argv run without a shell.
	Command []string          `json:"command,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Name    string            `json:"name,omitempty"`
}

// TerminalRef are the params of methods that name a terminal
// (terminal.kill, terminal.unsubscribe).
type TerminalRef struct {
	ProjectID  string `json:"projectId" rpc:"required"`
	TerminalID string `json:"terminalId" rpc:"required"`
}

// TerminalWriteParams are the params of terminal.write: exactly one of Data
// (UTF-8 text) and DataBase64 (raw bytes).
type TerminalWriteParams struct {
	ProjectID  string  `json:"projectId" rpc:"required"`
	TerminalID string  `json:"terminalId" rpc:"required"`
	Data       *string `json:"data,omitempty"`
	DataBase64 *string `json:"dataBase64,omitempty"`
}

// TerminalWriteResult is the result of terminal.write.
type TerminalWriteResult struct {
	// Written is the number of bytes queued.
	Written int `json:"written"`
}

// TerminalResizeParams are the params of terminal.resize.
type TerminalResizeParams struct {
	ProjectID  string `json:"projectId" rpc:"required"`
	TerminalID string `json:"terminalId" rpc:"required"`
	Cols       int    `json:"cols" rpc:"required"`
	Rows       int    `json:"rows" rpc:"required"`
}

// KilledResult is the result of terminal.kill.
type KilledResult struct {
	Killed bool `json:"killed"`
}

// TerminalListResult is the result of terminal.list (oldest first).
type TerminalListResult struct {
	Terminals []Terminal `json:"terminals"`
}

// TerminalSubscribeParams are the params of terminal.subscribe.
type TerminalSubscribeParams struct {
	ProjectID  string `json:"projectId" rpc:"required"`
	TerminalID string `json:"terminalId" rpc:"required"`
	// AfterSeq is the byte offset to continue from (default 0).
	AfterSeq int64 `json:"afterSeq,omitempty"`
}

// TerminalSubscribeResult is the result of terminal.subscribe.
type TerminalSubscribeResult struct {
	// LastSeq is the offset just past the newest byte when the
	// subscription started.
	LastSeq  int64 `json:"lastSeq"`
	Alive    bool  `json:"alive"`
	ExitCode *int  `json:"exitCode,omitempty"`
}
