package protocol

// VCSMode is per-turn change tracking: off, auto, native or shadow.
type VCSMode string

// The change tracking modes.
const (
	VCSOff    VCSMode = "off"
	VCSAuto   VCSMode = "auto"
	VCSNative VCSMode = "native"
	VCSShadow VCSMode = "shadow"
)

// VCSModes lists the modes.
var VCSModes = []VCSMode{VCSOff, VCSAuto, VCSNative, VCSShadow}

// Project is a project on the wire (project.open, project.list, ...).
type Project struct {
	ProjectID string `json:"projectId"`
	// Path is the folder, symlinks resolved.
	Path string `json:"path"`
	// Git reports whether the folder has a .git of its own.
	Git bool `json:"git"`
	// Open reports whether the project is open in this sidecar process.
	Open bool `json:"open"`
	// Settings are the project's stored settings.
	Settings ProjectSettings `json:"settings"`
}

// ProjectSettings are a project's own settings.
type ProjectSettings struct {
	// VCS is the change tracking of the project's sessions (default auto);
	// a session created with its own vcs keeps that one.
	VCS VCSMode `json:"vcs"`
}

// ProjectOpenParams are the params of project.open.
type ProjectOpenParams struct {
	// Path is absolute, or relative to the sidecar's working directory.
	Path string `json:"path" rpc:"required"`
	// VCS, when set, changes the project's change tracking (as
	// project.setSettings does).
	VCS VCSMode `json:"vcs,omitempty"`
}

// ProjectIDParams are the params of methods that name a project only
// (project.close, session.list, mcp.list, terminal.list).
type ProjectIDParams struct {
	ProjectID string `json:"projectId" rpc:"required"`
}

// ProjectCloseResult is the result of project.close.
type ProjectCloseResult struct {
	// Closed is false when the project was not open.
	Closed bool `json:"closed"`
}

// ProjectListResult is the result of project.list: every project ever
// opened, most recently opened first.
type ProjectListResult struct {
	Projects []Project `json:"projects"`
}

// ProjectSetSettingsParams are the params of project.setSettings; absent
// members are unchanged.
type ProjectSetSettingsParams struct {
	ProjectID string   `json:"projectId" rpc:"required"`
	VCS       *VCSMode `json:"vcs,omitempty"`
}
