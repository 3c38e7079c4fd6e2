package engine

import (
	"errors"
	"strings"

	"github.com/zqagent/sidecar/llm"
)

// Texts for people. An error event keeps its English error (stable, for
// logs and the model) and carries message: what happened and what to do,
// in the session's language. The texts are sections of the prompt files
// (prompts/<lang>.txt), every language having every one of them:
//
//	error.<key>     an error event's message (ErrorMessage)
//	reason.<reason> a turn_end's message for its reason (ReasonMessage)
//	kind.<kind>     a JSON-RPC error's data.message (KindMessage)

// messagePrefixes are the section prefixes of the texts for people.
var messagePrefixes = []string{"error.", "reason.", "kind."}

func messageSections(sec map[string]string) map[string]string {
	out := map[string]string{}
	for name, text := range sec {
		for _, p := range messagePrefixes {
			if strings.HasPrefix(name, p) {
				out[name] = text
			}
		}
	}
	return out
}

// Message returns the text for people of a section ("error.auth") in a
// language, "" when there is none.
func Message(lang, key string) string { return Prompts(lang).Messages[key] }

// ErrorKey is the message key of an error event of type errType caused by
// err (nil when only the type is known): the type itself, or for a config
// error the more precise no_model or no_api_key, and nothing_to_retry for
// a retry with nothing to retry.
func ErrorKey(errType string, err error) string {
	switch {
	case err == nil:
	case errors.Is(err, ErrNothingToRetry):
		return "nothing_to_retry"
	case errors.Is(err, llm.ErrNoModel):
		return "no_model"
	case errors.Is(err, llm.ErrNoAPIKey):
		return "no_api_key"
	}
	return errType
}

// ErrorMessage is the message of an error event in a language: the text of
// its key (ErrorKey), "" for an error type without one.
func ErrorMessage(lang, errType string, err error) string {
	return Message(lang, "error."+ErrorKey(errType, err))
}

// ReasonMessage is the message of a turn_end with that reason in a
// language ("" for none).
func ReasonMessage(lang, reason string) string {
	if reason == "" {
		return ""
	}
	return Message(lang, "reason."+reason)
}

// KindMessage is the data.message of a JSON-RPC error of that kind in a
// language ("" for a kind meant for programs, such as invalid_params).
func KindMessage(lang, kind string) string {
	if m := Message(lang, "kind."+kind); m != "" {
		return m
	}
	switch kind {
	case "no_model", "no_api_key", "keychain_unavailable", "busy", "nothing_to_retry", "config":
		return Message(lang, "error."+kind)
	}
	return ""
}
