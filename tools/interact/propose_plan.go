package interact

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/tools"
)

//go:embed propose_plan.md
var proposePlanDescription string

const maxPlanLength = 64 << 10

// PlanResult is what propose_plan returns to the model.
type PlanResult struct {
	Approved bool   `json:"approved"`
	Feedback string `json:"feedback,omitempty"`
	// Next tells the model what to do now.
	Next string `json:"next"`
}

// Instructions in PlanResult.Next.
const (
	nextApproved = "The user approved the plan. Carry it out now, taking the feedback (if any) into account."
	nextRejected = "The user rejected the plan. Stop: do not carry it out or make any change. Revise the plan according to the feedback and propose it again with propose_plan, or ask the user what they want."
)

type planArgs struct {
	Plan string `json:"plan" jsonschema:"required" jsonschema_description:"The plan, in Markdown."`
}

// RegisterPlanTool registers propose_plan, answered by h.ProposePlan.
func RegisterPlanTool(reg *tools.Registry, h tools.Interactor) {
	reg.MustRegister(tools.Spec{
		Name:   "propose_plan",
		Schema: schema("propose_plan", proposePlanDescription, tools.ParamsOf[planArgs]()),
		Meta:   interactiveMeta,
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var a planArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			plan := strings.TrimSpace(a.Plan)
			if plan == "" {
				return nil, fmt.Errorf("%w: plan is required", tools.ErrInvalidArgs)
			}
			if len(plan) > maxPlanLength {
				return nil, fmt.Errorf("%w: plan is longer than %d bytes; summarise it", tools.ErrInvalidArgs, maxPlanLength)
			}
			if h == nil {
				return nil, noHandler("propose_plan")
			}
			ans, err := h.ProposePlan(ctx, call.ID, tools.Plan{Plan: plan})
			if err != nil {
				return nil, fmt.Errorf("propose_plan: %w", err)
			}
			res := PlanResult{Approved: ans.Approved, Feedback: strings.TrimSpace(ans.Feedback), Next: nextRejected}
			if ans.Approved {
				res.Next = nextApproved
			}
			return res, nil
		},
	})
}
