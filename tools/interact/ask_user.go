package interact

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/zqagent/sidecar/tools"
)

//go:embed ask_user.md
var askUserDescription string

// Limits of a question.
const (
	maxOptions        = 20
	maxQuestionLength = 4000
)

type askArgs struct {
	Question  string   `json:"question" jsonschema:"required" jsonschema_description:"The question for the user."`
	Options   []string `json:"options" jsonschema_description:"Suggested answers to pick from."`
	AllowText *bool    `json:"allow_text" jsonschema_description:"Whether the user may type a free answer (default true)."`
	Multi     bool     `json:"multi" jsonschema_description:"Whether several options may be picked (default false)."`
}

// AskResult is what ask_user returns to the model.
type AskResult struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// RegisterAskTool registers ask_user, answered by h.AskUser.
func RegisterAskTool(reg *tools.Registry, h tools.Interactor) {
	reg.MustRegister(tools.Spec{
		Name:   "ask_user",
		Schema: schema("ask_user", askUserDescription, tools.ParamsOf[askArgs]()),
		Meta:   interactiveMeta,
		Handler: func(ctx context.Context, call tools.Call) (any, error) {
			var a askArgs
			if err := tools.DecodeArgs(call.Args, &a); err != nil {
				return nil, err
			}
			q, err := a.question()
			if err != nil {
				return nil, err
			}
			if h == nil {
				return nil, noHandler("ask_user")
			}
			answer, err := h.AskUser(ctx, call.ID, q)
			if err != nil {
				return nil, fmt.Errorf("ask_user: %w", err)
			}
			return AskResult{Question: q.Question, Answer: answer}, nil
		},
	})
}

// question validates and normalizes the model's arguments: trimmed
// question, non-empty unique options, free text allowed unless turned off
// (and always when there are no options, or nobody could answer).
func (a askArgs) question() (tools.Question, error) {
	q := tools.Question{Question: strings.TrimSpace(a.Question), Multi: a.Multi, AllowText: true}
	if q.Question == "" {
		return tools.Question{}, fmt.Errorf("%w: question is required", tools.ErrInvalidArgs)
	}
	if len(q.Question) > maxQuestionLength {
		return tools.Question{}, fmt.Errorf("%w: question is longer than %d characters", tools.ErrInvalidArgs, maxQuestionLength)
	}
	seen := map[string]bool{}
	q.Options = []string{}
	for _, o := range a.Options {
		o = strings.TrimSpace(o)
		if o == "" || seen[o] {
			continue
		}
		seen[o] = true
		q.Options = append(q.Options, o)
	}
	if len(q.Options) > maxOptions {
		return tools.Question{}, fmt.Errorf("%w: %d options, at most %d", tools.ErrInvalidArgs, len(q.Options), maxOptions)
	}
	if a.AllowText != nil && !*a.AllowText && len(q.Options) > 0 {
		q.AllowText = false
	}
	if len(q.Options) < 2 {
		q.Multi = false
	}
	return q, nil
}
