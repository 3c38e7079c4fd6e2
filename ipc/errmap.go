package ipc

import (
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/llm"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/store"
)

type errCode struct {
	err  error
	code int
}

// hostedErrors maps the sentinels of the packages the server hosts to wire
// codes (this package's own are in sentinelCodes).
var hostedErrors = []errCode{
	{store.ErrNotFound, CodeNotFound},
	{store.ErrAlreadyAnswered, CodeConflict},
	{store.ErrInvalid, CodeInvalidParams},
	{engine.ErrBusy, CodeConflict},
	{engine.ErrNothingToRetry, CodeConflict},
	{engine.ErrClosed, CodeConflict},
	{permission.ErrUnknownMode, CodeInvalidParams},
	{permission.ErrUnknownPolicy, CodeInvalidParams},
	{permission.ErrUnknownOutcome, CodeInvalidParams},
	{permission.ErrUnknownDefaultApproval, CodeInvalidParams},
	{llm.ErrNoModel, CodeConfig},
	{llm.ErrNoAPIKey, CodeConfig},
}

func hostedErrorCodes() []errCode { return hostedErrors }
