package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/netproxy"
)

// Sentinels of this package; they are wrapped in *llm.Error.
var (
	// ErrTimeout: the endpoint sent no response headers within Options.Timeout.
	ErrTimeout = errors.New("model request timed out")
	// ErrBadBaseURL: Options.BaseURL is not an http(s) URL.
	ErrBadBaseURL = errors.New("invalid base URL")
	// ErrBadProxy: Options.Proxy is not a usable SOCKS5 URL.
	ErrBadProxy = netproxy.ErrBadProxy
)

// maxErrMsg bounds the length of an error message taken from a response body.
const maxErrMsg = 600

// apiFailure is what an error says about the HTTP exchange, whatever SDK type
// carried it.
type apiFailure struct {
	status  int
	message string
	code    string
	errType string
	param   string
}

// failureOf extracts the API error details of err; ok is false for errors that
// are not answers of the endpoint (network, context, local).
func failureOf(err error) (f apiFailure, ok bool) {
	var apiErr *goopenai.APIError
	if errors.As(err, &apiErr) {
		f = apiFailure{status: apiErr.HTTPStatusCode, message: apiErr.Message, errType: apiErr.Type}
		if apiErr.Code != nil {
			f.code = fmt.Sprint(apiErr.Code)
		}
		if apiErr.Param != nil {
			f.param = *apiErr.Param
		}
		return f, true
	}
	var reqErr *goopenai.RequestError
	if errors.As(err, &reqErr) {
		msg := strings.TrimSpace(string(reqErr.Body))
		if msg == "" {
			msg = http.StatusText(reqErr.HTTPStatusCode)
		}
		return apiFailure{status: reqErr.HTTPStatusCode, message: msg}, true
	}
	var se *streamError
	if errors.As(err, &se) {
		return se.f, true
	}
	return apiFailure{}, false
}

// streamError is an error reported inside a stream (a Responses "error" or
// "response.failed" event) rather than as an HTTP status.
type streamError struct{ f apiFailure }

func (e *streamError) Error() string {
	if e.f.code != "" {
		return e.f.code + ": " + e.f.message
	}
	return e.f.message
}

// classify turns any failure of a request into an *llm.Error. ctx errors are
// returned unchanged so that the engine sees context.Canceled. key is removed
// from every message.
func classify(err error, key string) error {
	if err == nil {
		return nil
	}
	var le *llm.Error
	if errors.As(err, &le) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if !errors.Is(err, ErrTimeout) && !errors.Is(err, llm.ErrStreamIdle) {
			return err
		}
	}
	switch {
	case errors.Is(err, llm.ErrStreamIdle):
		return &llm.Error{Kind: llm.KindNetwork, Msg: "the model stream produced nothing for too long", Err: llm.ErrStreamIdle}
	case errors.Is(err, ErrTimeout):
		return &llm.Error{Kind: llm.KindNetwork, Msg: "no response from the model endpoint in time", Err: err}
	}
	if f, ok := failureOf(err); ok {
		msg := redact(truncate(f.message, maxErrMsg), key)
		if f.code != "" && !strings.Contains(msg, f.code) {
			msg = f.code + ": " + msg
		}
		return &llm.Error{Kind: kindOf(f), Status: f.status, Msg: msg, Err: err}
	}
	if isNetwork(err) {
		return &llm.Error{Kind: llm.KindNetwork, Msg: redact(err.Error(), key), Err: err}
	}
	return &llm.Error{Kind: llm.KindUnknown, Msg: redact(err.Error(), key), Err: err}
}

// kindOf maps an API failure to its kind.
func kindOf(f apiFailure) llm.Kind {
	text := f.code + " " + f.errType + " " + f.message
	if llm.LooksLikeOverflow(text) {
		return llm.KindContextOverflow
	}
	switch {
	case f.status == http.StatusUnauthorized || f.status == http.StatusForbidden:
		return llm.KindAuth
	case f.status == http.StatusTooManyRequests:
		return llm.KindRateLimit
	case f.status >= 500:
		return llm.KindServer
	case f.status >= 400:
		return llm.KindBadRequest
	}
	// In-stream errors carry no status: judge by code.
	low := strings.ToLower(text)
	switch {
	case strings.Contains(low, "rate_limit") || strings.Contains(low, "rate limit"):
		return llm.KindRateLimit
	case strings.Contains(low, "invalid_api_key") || strings.Contains(low, "authentication"):
		return llm.KindAuth
	case strings.Contains(low, "invalid_request") || strings.Contains(low, "invalid_prompt"):
		return llm.KindBadRequest
	}
	return llm.KindServer
}

// isNetwork reports whether err is a transport failure: connection refused or
// reset, EOF before an answer, timeouts, DNS.
func isNetwork(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, ErrTimeout) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	low := strings.ToLower(err.Error())
	for _, s := range []string{"connection reset", "connection refused", "broken pipe",
		"forcibly closed", "server closed", "unexpected eof", "no such host", "tls handshake"} {
		if strings.Contains(low, s) {
			return true
		}
	}
	return false
}

// retryableStatus reports whether an API answer is worth a silent SDK-style
// retry (429 and 5xx), except quota exhaustion which does not heal.
func retryableStatus(err error) bool {
	f, ok := failureOf(err)
	if !ok || f.status == 0 {
		return false
	}
	if f.code == "insufficient_quota" {
		return false
	}
	return f.status == http.StatusTooManyRequests || f.status >= 500
}

// fallback classes of a Responses API failure (seed §10.1).
type fallback int

const (
	noFallback       fallback = iota
	fallbackAlways            // endpoint unsupported: fall back and remember per model
	fallbackThisTime          // incompatible parameters: fall back this time only
)

// fallbackOf judges a failure of the Responses API.
func fallbackOf(err error) fallback {
	f, ok := failureOf(err)
	if !ok || f.status == 0 {
		return noFallback
	}
	low := strings.ToLower(f.message + " " + f.code + " " + f.param)
	switch f.status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		if f.status == http.StatusNotFound && strings.Contains(low, "model") && !strings.Contains(low, "/responses") &&
			!strings.Contains(low, "url") && !strings.Contains(low, "route") && !strings.Contains(low, "endpoint") {
			// "The model `x` does not exist": the chat endpoint would say the same.
			return noFallback
		}
		return fallbackAlways
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		if llm.LooksLikeOverflow(low) {
			return noFallback
		}
		for _, s := range []string{"invalid url", "unknown url", "unknown endpoint", "no route", "not found"} {
			if strings.Contains(low, s) {
				return fallbackAlways
			}
		}
		for _, s := range []string{"unsupported parameter", "unsupported_parameter", "unknown parameter",
			"unknown_parameter", "unrecognized", "not supported", "unsupported value", "unsupported_value",
			"unknown field", "extra inputs are not permitted", "extra_forbidden", "invalid type for",
			"unexpected field", "additional properties"} {
			if strings.Contains(low, s) {
				return fallbackThisTime
			}
		}
	}
	return noFallback
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// redact removes the API key from s.
func redact(s, key string) string {
	if len(key) < 4 {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}
