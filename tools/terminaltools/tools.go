package terminaltools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/terminal/termtext"
	"github.com/zqagent/sidecar/tools"
)

//go:embed terminal_list.md
var terminalListDescription string

//go:embed terminal_read.md
var terminalReadDescription string

// Limits of terminal_read.
const (
	DefaultLines = 200
	MaxLines     = 2000
	MaxBytes     = 64 << 10
)

type terminalReadArgs struct {
	TerminalID string `json:"terminal_id" jsonschema:"required" jsonschema_description:"The terminal's id, from terminal_list."`
	Lines      int    `json:"lines" jsonschema:"minimum=1,maximum=2000" jsonschema_description:"Number of last lines to return (default 200)."`
}

var readMeta = tools.Metadata{
	Category:     "terminal",
	RiskLevel:    tools.RiskLow,
	Class:        tools.ClassRead,
	Capabilities: []string{"terminal", "read"},
}

// ListResult is what terminal_list returns.
type ListResult struct {
	Terminals []tools.TerminalInfo `json:"terminals"`
}

// RegisterTerminalTools registers terminal_list and terminal_read over src,
// confined to projectID.
func RegisterTerminalTools(reg *tools.Registry, src tools.TerminalSource, projectID string) {
	reg.MustRegister(tools.Spec{
		Name:   "terminal_list",
		Schema: schema("terminal_list", terminalListDescription, tools.ParamsOf[struct{}]()),
		Meta:   readMeta,
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			if err := tools.DecodeArgs(call.Args, &struct{}{}); err != nil {
				return nil, err
			}
			if src == nil {
				return nil, tools.Errorf("unavailable", "%w: no terminals here", tools.ErrUnavailable)
			}
			list, err := src.ListTerminals(ctx, projectID)
			if err != nil {
				return nil, fmt.Errorf("list terminals: %w", err)
			}
			if list == nil {
				list = []tools.TerminalInfo{}
			}
			return ListResult{Terminals: list}, nil
		},
	})
	reg.MustRegister(tools.Spec{
		Name:   "terminal_read",
		Schema: schema("terminal_read", terminalReadDescription, tools.ParamsOf[terminalReadArgs]()),
		Meta:   readMeta,
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var a terminalReadArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			id := strings.TrimSpace(a.TerminalID)
			if id == "" {
				return nil, fmt.Errorf("%w: terminal_id is required", tools.ErrInvalidArgs)
			}
			if src == nil {
				return nil, tools.Errorf("unavailable", "%w: no terminals here", tools.ErrUnavailable)
			}
			lines := a.Lines
			if lines <= 0 {
				lines = DefaultLines
			}
			lines = min(lines, MaxLines)
			text, err := src.ReadTerminal(ctx, projectID, id, lines, MaxBytes)
			if err != nil {
				return nil, fmt.Errorf("read terminal %s: %w", id, err)
			}
			// The cap holds even if the source ignores it.
			if len(text) > MaxBytes {
				text = termtext.Tail(text, 0, MaxBytes)
			}
			if text == "" {
				return fmt.Sprintf("(terminal %s has no output yet)", id), nil
			}
			return text, nil
		},
	})
}

func schema(name, description string, params json.RawMessage) llm.ToolSchema {
	return llm.ToolSchema{Type: "function", Function: llm.FunctionSchema{
		Name:        name,
		Description: strings.TrimSpace(description),
		Parameters:  params,
	}}
}
