// Package oslocale finds the user's language from the operating system: the
// POSIX locale variables (LC_ALL, LC_MESSAGES, LANG, the first one set that
// names a language), else on macOS and Windows the user's preferred UI
// language. It returns the tag as the system spells it ("ko_KR.UTF-8",
// "zh-Hant-TW"); mapping it to a prompt language is the caller's
// (engine.MatchLang).
//
// Get may start a short-lived process on macOS (defaults read), so callers
// that ask often cache its answer. It is safe for concurrent use.
package oslocale

import (
	"os"
	"strings"
)

// envVars are the POSIX variables that name the message language, in the
// order they win.
var envVars = []string{"LC_ALL", "LC_MESSAGES", "LANG"}

// Get returns the user's language tag, or "" when the system names none.
func Get() string {
	if t := FromEnv(os.Getenv); t != "" {
		return t
	}
	return preferred()
}

// FromEnv returns the first of LC_ALL, LC_MESSAGES and LANG (read with
// getenv) that names a language; "C" and "POSIX" (with or without a codeset)
// name none.
func FromEnv(getenv func(string) string) string {
	for _, k := range envVars {
		v := strings.TrimSpace(getenv(k))
		base, _, _ := strings.Cut(v, ".")
		if v == "" || base == "C" || base == "POSIX" {
			continue
		}
		return v
	}
	return ""
}
