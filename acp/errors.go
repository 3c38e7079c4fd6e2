package acp

import (
	"errors"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

var (
	// ErrUnknownSession: a session id this connection neither created nor
	// loaded.
	ErrUnknownSession = errors.New("unknown session: create it with session/new or load it with session/load")
	// ErrLoaded: session/load of a session this connection already has.
	ErrLoaded = errors.New("session is already open in this connection")
	// ErrBadPrompt: a prompt without text or images.
	ErrBadPrompt = errors.New("prompt has no text or image content")
	// ErrClosed: the front door is shutting down.
	ErrClosed = errors.New("acp front door closed")
)

// Codes of the errors we answer with (JSON-RPC's own).
const (
	codeInvalidParams = -32602
	codeInternal      = -32603
)

// wireError is the one place that turns an error into an ACP (JSON-RPC)
// error; its message is what the editor shows. The sidecar's own errors keep
// their message, with their code in data (sidecarCode): invalid input,
// unknown ids and refused paths are invalid params, the rest internal
// errors.
func wireError(err error) error {
	if err == nil {
		return nil
	}
	var re *sdk.RequestError
	if errors.As(err, &re) {
		return re
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		code := codeInternal
		switch ce.Code {
		case protocol.CodeInvalidParams, protocol.CodeNotFound, protocol.CodeForbidden:
			code = codeInvalidParams
		}
		return &sdk.RequestError{Code: code, Message: ce.Message, Data: map[string]any{"sidecarCode": ce.Code}}
	}
	if errors.Is(err, ErrUnknownSession) || errors.Is(err, ErrBadPrompt) || errors.Is(err, ErrLoaded) {
		return &sdk.RequestError{Code: codeInvalidParams, Message: err.Error()}
	}
	return &sdk.RequestError{Code: codeInternal, Message: err.Error()}
}
