package web

import (
	"encoding/json"
	"strings"

	"github.com/zqagent/sidecar/llm"
)

func schema(name, description, params string) llm.ToolSchema {
	return llm.ToolSchema{
		Type: "function",
		Function: llm.FunctionSchema{
			Name:        name,
			Description: strings.TrimSpace(description),
			Parameters:  json.RawMessage(params),
		},
	}
}
