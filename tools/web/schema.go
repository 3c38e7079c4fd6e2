package web

import (
	"encoding/json"
	"strings"

	"github.com/zqagent/sidecar/llm"
)

func schema(name, description string, params json.RawMessage) llm.ToolSchema {
	return llm.ToolSchema{
		Type: "function",
		Function: llm.FunctionSchema{
			Name:        name,
			Description: strings.TrimSpace(description),
			Parameters:  params,
		},
	}
}
