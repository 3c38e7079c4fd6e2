package llm

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinels a provider wraps so that the engine can classify failures.
var (
	// ErrNoModel: no model was configured; the engine never guesses one.
	ErrNoModel = errors.New("no model configured")
	// ErrNoAPIKey: the provider has no API key.
	ErrNoAPIKey = errors.New("no API key configured")
	// ErrStreamIdle: the stream produced nothing for longer than the idle watchdog.
	ErrStreamIdle = errors.New("model stream stalled")
	// ErrIncomplete: the stream ended without a finish reason or tool calls.
	ErrIncomplete = errors.New("model stream ended early")
)

// Kind classifies a provider error.
type Kind int

// Error kinds.
const (
	KindUnknown         Kind = iota
	KindAuth                 // 401/403
	KindRateLimit            // 429
	KindServer               // 5xx
	KindNetwork              // connection reset, DNS, timeouts, idle stream
	KindContextOverflow      // the prompt does not fit the model's window
	KindBadRequest           // other 4xx
	KindConfig               // no model, no key, bad base URL
	KindUnsupported          // endpoint not supported (404/405 on /responses)
)

var kindNames = [...]string{"unknown", "auth", "rate_limit", "server", "network", "context_overflow", "bad_request", "config", "unsupported"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error is a classified provider failure.
type Error struct {
	Kind   Kind
	Status int // HTTP status when there was one
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("llm %s (HTTP %d): %s", e.Kind, e.Status, e.Msg)
	}
	return fmt.Sprintf("llm %s: %s", e.Kind, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Retriable reports whether the same request may succeed later.
func (e *Error) Retriable() bool {
	switch e.Kind {
	case KindRateLimit, KindServer, KindNetwork, KindContextOverflow, KindUnknown:
		return true
	}
	return false
}

// KindOf returns the kind of err, KindUnknown when it is not an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	if errors.Is(err, ErrNoModel) || errors.Is(err, ErrNoAPIKey) {
		return KindConfig
	}
	if errors.Is(err, ErrStreamIdle) {
		return KindNetwork
	}
	return KindUnknown
}

// IsRetriable reports whether err is worth a retry by the user.
func IsRetriable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Retriable()
	}
	switch KindOf(err) {
	case KindConfig:
		return false
	}
	return true
}

// overflowMarkers are substrings by which OpenAI, DeepSeek, Qwen, Moonshot and
// common gateways (vLLM, LiteLLM, OpenRouter, Ollama) report a prompt that does
// not fit the context window.
var overflowMarkers = []string{
	"context_length_exceeded",
	"maximum context length",
	"context length",
	"context window",
	"too many tokens",
	"prompt is too long",
	"input is too long",
	"exceeds the model's maximum",
	"reduce the length of the messages",
	"string_above_max_length",
	"tokens exceed",
	"exceeded model token limit",
	"input tokens exceed",
	"request too large",
}

// IsContextOverflow reports whether err (or its message) says the prompt was
// too long for the model.
func IsContextOverflow(err error) bool {
	if err == nil {
		return false
	}
	if KindOf(err) == KindContextOverflow {
		return true
	}
	return LooksLikeOverflow(err.Error())
}

// LooksLikeOverflow reports whether an API error message describes a context
// overflow.
func LooksLikeOverflow(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range overflowMarkers {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}
