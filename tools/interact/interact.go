package interact

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

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

// Handlers answer the interactive tools; the engine implements them (emit
// the event, persist the pending request, wait for the answer or ctx).
// callID is the model's tool call id (Call.ID). A returned error becomes
// the tool's error; ctx ends when the turn is interrupted.
type Handlers interface {
	AskUser(ctx context.Context, callID string, q Question) (string, error)
	ProposePlan(ctx context.Context, callID string, p Plan) (PlanAnswer, error)
	RequestDirectory(ctx context.Context, callID string, d DirRequest) (DirAnswer, error)
}

var interactiveMeta = tools.Metadata{
	Category:     "interactive",
	RiskLevel:    tools.RiskLow,
	Class:        tools.ClassInteractive,
	Capabilities: []string{"interactive"},
}

func schema(name, description, params string) llm.ToolSchema {
	return llm.ToolSchema{Type: "function", Function: llm.FunctionSchema{
		Name:        name,
		Description: strings.TrimSpace(description),
		Parameters:  json.RawMessage(params),
	}}
}

// noHandler is the error returned when h is nil.
func noHandler(tool string) error {
	return tools.Errorf("unavailable", "%s: %w; continue without asking, making and stating a reasonable assumption", tool, ErrNoHandler)
}
