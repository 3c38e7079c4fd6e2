package engine

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/tools"
)

//go:embed explore.md
var exploreDescription string

// DefaultExploreMaxIterations is EXPLORE_MAX_ITERATIONS' default.
const DefaultExploreMaxIterations = 30

// ExploreConfig wires the explore tool.
type ExploreConfig struct {
	// NewChild builds the subagent's engine for one call: its own context,
	// PLAN mode, read-only tools, FinalizeOnMaxIterations. parentCallID is the
	// explore call's id, for the hook that forwards the child's events.
	NewChild func(parentCallID string) (*Engine, error)
}

// exploreArgs are explore's arguments; the model's schema is reflected
// from them (tools.ParamsOf).
type exploreArgs struct {
	Task string `json:"task" jsonschema:"required" jsonschema_description:"What to find out, with enough context for someone who has not seen this conversation."`
}

// RegisterExploreTool registers explore: a read-only subagent whose final
// report is the tool's result. Interrupting the parent cancels the tool's
// context, which interrupts the child.
func RegisterExploreTool(reg *tools.Registry, cfg ExploreConfig) {
	reg.MustRegister(tools.Spec{
		Name:   "explore",
		Schema: toolSchema("explore", exploreDescription, tools.ParamsOf[exploreArgs]()),
		Meta:   tools.Metadata{Category: "subagent", RiskLevel: tools.RiskLow, Class: tools.ClassRead, Capabilities: []string{"explore"}},
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var args exploreArgs
			if err := tools.DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			if strings.TrimSpace(args.Task) == "" {
				return nil, fmt.Errorf("%w: task is required", tools.ErrInvalidArgs)
			}
			child, err := cfg.NewChild(call.ID)
			if err != nil {
				return nil, fmt.Errorf("start explore subagent: %w", err)
			}
			defer child.Close()
			return runExplore(ctx, child, args.Task)
		},
	})
}

// runExplore runs the child to the end and returns its last report.
func runExplore(ctx context.Context, child *Engine, task string) (string, error) {
	var report, errMsg string
	var status protocol.TurnStatus
	for ev := range child.Run(ctx, Turn{Input: Input{Text: task}}) {
		switch d := ev.Data.(type) {
		case protocol.AssistantMessageData:
			if strings.TrimSpace(d.Text) != "" {
				report = d.Text
			}
		case protocol.EventErrorData:
			errMsg = d.Error
		case protocol.TurnEndData:
			status = d.Status
		case protocol.UsageData, protocol.RateLimitsData:
			forwardSubagent(ctx, ev)
		}
	}
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case status == protocol.TurnError && report == "":
		return "", errors.New("explore subagent failed: " + errMsg)
	case report == "":
		return "", errors.New("explore subagent produced no report")
	}
	return report, nil
}

func toolSchema(name, desc string, params json.RawMessage) llmToolSchema {
	return llmToolSchema{Type: "function", Function: llmFunction{Name: name, Description: strings.TrimSpace(desc), Parameters: params}}
}
