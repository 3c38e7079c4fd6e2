package mcp

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/shell"
)

// Private-use runes stand in for '$' and for ${...} references while a
// command line is split, so that the shell parser expands nothing.
const (
	dollarMark = '\uE000'
	refOpen    = '\uE001'
	refClose   = '\uE002'
)

// SplitCommandLine splits a command line into words the way a POSIX shell
// would: blanks separate words, single and double quotes group them,
// backslashes escape, and a leading ~ is the home directory. Nothing else is
// expanded ($VAR, $(...) and globs stay literal); command substitution with
// backquotes, redirections and operators are errors.
func SplitCommandLine(s string) ([]string, error) {
	if strings.ContainsAny(s, string([]rune{dollarMark, refOpen, refClose})) {
		return nil, fmt.Errorf("%w: contains reserved characters", ErrCommandLine)
	}
	words, err := splitShell(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrCommandLine, s, err)
	}
	return words, nil
}

func splitShell(s string) ([]string, error) {
	protected := strings.ReplaceAll(s, "$", string(dollarMark))
	words, err := shell.Fields(protected, func(name string) string {
		if name == "HOME" {
			if h, err := os.UserHomeDir(); err == nil {
				return h
			}
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	for i, w := range words {
		words[i] = strings.ReplaceAll(w, string(dollarMark), "$")
	}
	return words, nil
}

// splitProtected splits a config's command string keeping every ${VAR}
// reference inside the word it appears in, so that a value with blanks does
// not become several arguments once expanded.
func splitProtected(s string) ([]string, error) {
	if strings.ContainsAny(s, string([]rune{dollarMark, refOpen, refClose})) {
		return nil, fmt.Errorf("%w: contains reserved characters", ErrCommandLine)
	}
	var refs []string
	marked := varRef.ReplaceAllStringFunc(s, func(m string) string {
		refs = append(refs, m)
		return string(refOpen) + strconv.Itoa(len(refs)-1) + string(refClose)
	})
	words, err := splitShell(marked)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrCommandLine, s, err)
	}
	for i, w := range words {
		words[i] = restoreRefs(w, refs)
	}
	return words, nil
}

func restoreRefs(w string, refs []string) string {
	if !strings.ContainsRune(w, refOpen) {
		return w
	}
	var b strings.Builder
	for {
		i := strings.IndexRune(w, refOpen)
		if i < 0 {
			b.WriteString(w)
			return b.String()
		}
		j := strings.IndexRune(w[i:], refClose)
		if j < 0 {
			b.WriteString(w)
			return b.String()
		}
		b.WriteString(w[:i])
		n, err := strconv.Atoi(w[i+len(string(refOpen)) : i+j])
		if err == nil && n >= 0 && n < len(refs) {
			b.WriteString(refs[n])
		}
		w = w[i+j+len(string(refClose)):]
	}
}
