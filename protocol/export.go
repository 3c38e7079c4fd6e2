package protocol

// SessionExportParams are the params of session.export.
type SessionExportParams struct {
	SessionID string `json:"sessionId" rpc:"required"`
	// Path is the absolute path of the file to write (the shell's save
	// dialog chose it); an existing file there is replaced.
	Path string `json:"path" rpc:"required"`
}

// SessionExportResult is the result of session.export.
type SessionExportResult struct {
	// Path is the file written (cleaned).
	Path string `json:"path"`
	// Bytes is the file's size.
	Bytes int64 `json:"bytes"`
	// Events, Messages and Attachments count what the file holds.
	Events      int `json:"events"`
	Messages    int `json:"messages"`
	Attachments int `json:"attachments"`
}

// SessionImportParams are the params of session.import.
type SessionImportParams struct {
	// ProjectID is the project the new session belongs to.
	ProjectID string `json:"projectId" rpc:"required"`
	// Path is the absolute path of a file session.export wrote.
	Path string `json:"path" rpc:"required"`
}

// SessionImportResult is the result of session.import.
type SessionImportResult struct {
	// SessionID is the new session's id.
	SessionID string  `json:"sessionId"`
	Session   Session `json:"session"`
	// ResetSettings names the settings of the file that were not taken
	// (the new session has the default): those that widen what runs
	// without approval (mode auto, shellPolicy, allowedCommands, sandbox
	// off, sandboxNetwork) and those whose value this sidecar does not
	// know (another version's, a provider profile or agent it does not
	// have). Empty when every setting was taken.
	ResetSettings []string `json:"resetSettings"`
}
