package interact

import (
	"encoding/json"
	"strings"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/tools"
)

var interactiveMeta = tools.Metadata{
	Category:     "interactive",
	RiskLevel:    tools.RiskLow,
	Class:        tools.ClassInteractive,
	Capabilities: []string{"interactive"},
}

func schema(name, description string, params json.RawMessage) llm.ToolSchema {
	return llm.ToolSchema{Type: "function", Function: llm.FunctionSchema{
		Name:        name,
		Description: strings.TrimSpace(description),
		Parameters:  params,
	}}
}

// noHandler is the error returned when h is nil.
func noHandler(tool string) error {
	return tools.Errorf("unavailable", "%s: %w; continue without asking, making and stating a reasonable assumption", tool, ErrNoHandler)
}
