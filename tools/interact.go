package tools

import "context"

// The interactive tools' vocabulary: what ask_user, propose_plan and
// request_directory ask and what the user answers. The tools live in
// tools/interact; the engine implements Interactor (it emits the event,
// persists the pending request and waits for the answer), so both read
// these types here and the engine imports no tool package.

// Question is what ask_user asks.
type Question struct {
	Question  string   `json:"question"`
	Options   []string `json:"options"`
	AllowText bool     `json:"allowText"`
	Multi     bool     `json:"multi"`
}

// Plan is what propose_plan proposes.
type Plan struct {
	Plan string `json:"plan"`
}

// PlanAnswer is the user's verdict on a plan.
type PlanAnswer struct {
	Approved bool   `json:"approved"`
	Feedback string `json:"feedback,omitempty"`
}

// DirRequest is what request_directory asks for, as it really is: Path is
// the absolute real path (symlinks resolved), which is exactly what a grant
// covers. When the model named it through a symlink, RequestedPath is what
// it named, Link the symlink on the way and LinkTarget what the link says.
type DirRequest struct {
	Reason         string `json:"reason"`
	Path           string `json:"path"`
	Writable       bool   `json:"writable"`
	OutsideProject bool   `json:"outsideProject"` // Path is not inside the workspace
	RequestedPath  string `json:"requestedPath,omitempty"`
	Link           string `json:"link,omitempty"`
	LinkTarget     string `json:"linkTarget,omitempty"`
}

// DirAnswer is the user's decision on a directory request. Path, when set,
// is the directory the user picked instead of the requested one. Writable
// is whether write access is granted: a handler that grants as asked sets
// it to the request's Writable; it is ignored when not granted.
type DirAnswer struct {
	Granted  bool   `json:"granted"`
	Path     string `json:"path,omitempty"`
	Writable bool   `json:"writable,omitempty"`
}

// Interactor answers the interactive tools (package tools/interact); the
// engine implements it (emit the event, persist the pending request, wait
// for the answer or ctx).
// callID is the model's tool call id (Call.ID). A returned error becomes
// the tool's error; ctx ends when the turn is interrupted.
type Interactor interface {
	AskUser(ctx context.Context, callID string, q Question) (string, error)
	ProposePlan(ctx context.Context, callID string, p Plan) (PlanAnswer, error)
	RequestDirectory(ctx context.Context, callID string, d DirRequest) (DirAnswer, error)
}
