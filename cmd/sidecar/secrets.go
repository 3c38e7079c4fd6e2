package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/zqagent/sidecar/keychain"
	procenv "github.com/zqagent/sidecar/proc"
	"github.com/zqagent/sidecar/protocol"
)

// Secrets reach the sidecar in one of two ways, and end up in memory only:
//
//   - the shell's secrets line on stdin (--secrets-stdin), the first line
//     before stdin's EOF-means-exit role begins:
//     {"token":"…","keys":{"openai":"sk-…"}} — both fields optional;
//   - the environment: ZQAGENT_TOKEN and the key variables (*_API_KEY, see
//     proc.IsSecret). They are removed from the process's environment at
//     start. The kernel keeps the initial environment of a process readable
//     in /proc/<pid>/environ (for root, and for the same user unless the
//     process is not dumpable), so on Unix the sidecar first re-executes
//     itself with them removed, handing them over on an inherited pipe.
//
// On Linux the process is also made not dumpable (see hardenProcess). Root's
// children can still read the process's memory (/proc/<pid>/mem): the keys
// are in it.

// secretsLineMax bounds the secrets line.
const secretsLineMax = 64 << 10

// secretsLineTimeout bounds the wait for the secrets line.
const secretsLineTimeout = 15 * time.Second

// startSecrets are the secrets the process got at start.
type startSecrets struct {
	token string
	keys  map[string]string // provider → key, from the secrets line
	env   map[string]string // secret variable → value, from the environment
}

// takeSecrets collects the secrets (re-executing the process first when
// the environment holds any, where the OS allows), removes them from the
// environment, and makes a random token when none was passed.
func takeSecrets(log *slog.Logger, fromStdin bool, stdin io.Reader) (startSecrets, error) {
	env, handedOver, err := handedOverSecrets()
	if err != nil {
		return startSecrets{}, err
	}
	if !handedOver {
		env = secretEnv(os.Environ())
		if len(env) > 0 {
			reexecWithout(log, env) // returns only when it could not
		}
	}
	hardenProcess(log)
	for name := range secretEnv(os.Environ()) {
		os.Unsetenv(name)
	}
	s := startSecrets{token: env["ZQAGENT_TOKEN"], env: env}
	delete(s.env, "ZQAGENT_TOKEN")
	if s.token != "" {
		if err := validateToken(s.token); err != nil {
			return startSecrets{}, fmt.Errorf("ZQAGENT_TOKEN: %w", err)
		}
	}
	if fromStdin {
		line, err := readSecretsLine(stdin, secretsLineTimeout)
		if err != nil {
			return startSecrets{}, fmt.Errorf("--secrets-stdin: %w", err)
		}
		if line.Token != "" {
			s.token = line.Token
		}
		s.keys = line.Keys
	}
	if s.token == "" {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return startSecrets{}, fmt.Errorf("token: %w", err)
		}
		s.token = hex.EncodeToString(b)
	}
	return s, nil
}

// secretEnv returns the secret variables of environ (proc.IsSecret) that
// have a value.
func secretEnv(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if ok && name != "" && val != "" && procenv.IsSecret(name) {
			out[name] = val
		}
	}
	return out
}

// secretsLine is the shell's secrets line on stdin.
type secretsLine = protocol.SecretsLine

// readSecretsLine reads one line from r, byte by byte so that nothing after
// it is consumed, and parses it. It gives up after timeout.
func readSecretsLine(r io.Reader, timeout time.Duration) (secretsLine, error) {
	type result struct {
		line []byte
		err  error
	}
	ch := make(chan result, 1)
	// The reader is abandoned on timeout; the process then exits.
	go func() {
		var buf []byte
		b := make([]byte, 1)
		for len(buf) <= secretsLineMax {
			n, err := r.Read(b)
			if n == 1 {
				if b[0] == '\n' {
					ch <- result{line: buf}
					return
				}
				buf = append(buf, b[0])
				continue
			}
			if errors.Is(err, io.EOF) {
				ch <- result{err: errors.New("stdin closed before the secrets line")}
				return
			}
			if err != nil {
				ch <- result{err: fmt.Errorf("read stdin: %w", err)}
				return
			}
		}
		ch <- result{err: fmt.Errorf("secrets line longer than %d bytes", secretsLineMax)}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			return secretsLine{}, res.err
		}
		return parseSecretsLine(res.line)
	case <-time.After(timeout):
		return secretsLine{}, fmt.Errorf("no secrets line on stdin within %s", timeout)
	}
}

// parseSecretsLine decodes the secrets line strictly: one JSON object with
// only the fields "token" (a string) and "keys" (an object of strings),
// exact spelling, no duplicate, no trailing data; each value is checked.
// Errors never quote a value.
func parseSecretsLine(line []byte) (secretsLine, error) {
	var out secretsLine
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := expectDelim(dec, '{'); err != nil {
		return out, err
	}
	seen := map[string]bool{}
	for dec.More() {
		name, err := objectKey(dec, seen)
		if err != nil {
			return out, err
		}
		switch name {
		case "token":
			if out.Token, err = stringValue(dec, "token"); err != nil {
				return out, err
			}
			if err := validateToken(out.Token); err != nil {
				return out, fmt.Errorf("token: %w", err)
			}
		case "keys":
			if out.Keys, err = keysObject(dec); err != nil {
				return out, err
			}
		default:
			return out, fmt.Errorf("unknown field %q (the fields are token and keys)", clip(name))
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return out, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return out, errors.New("data after the secrets object")
	}
	return out, nil
}

func keysObject(dec *json.Decoder) (map[string]string, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	keys, seen := map[string]string{}, map[string]bool{}
	for dec.More() {
		provider, err := objectKey(dec, seen)
		if err != nil {
			return nil, fmt.Errorf("keys: %w", err)
		}
		if err := keychain.ValidateProvider(provider); err != nil {
			return nil, fmt.Errorf("keys: %w", err)
		}
		key, err := stringValue(dec, "keys."+provider)
		if err != nil {
			return nil, err
		}
		if err := keychain.ValidateKey(key); err != nil {
			return nil, fmt.Errorf("keys.%s: %w", provider, err)
		}
		keys[provider] = key
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, fmt.Errorf("keys: %w", err)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	return keys, nil
}

// objectKey reads an object key and refuses one already in seen.
func objectKey(dec *json.Decoder, seen map[string]bool) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", errNotJSON(err)
	}
	name, ok := tok.(string)
	if !ok {
		return "", errors.New("not a JSON object")
	}
	if seen[name] {
		return "", fmt.Errorf("duplicate field %q", clip(name))
	}
	seen[name] = true
	return name, nil
}

func stringValue(dec *json.Decoder, field string) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", errNotJSON(err)
	}
	s, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string", field)
	}
	return s, nil
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return errNotJSON(err)
	}
	if tok != d {
		return errors.New("not a JSON object")
	}
	return nil
}

// errNotJSON reports a syntax error by offset only: the message of a
// json.SyntaxError may quote a character of a secret.
func errNotJSON(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("the secrets line is not valid JSON (at byte %d)", se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the secrets line is not valid JSON (it ends early)")
	}
	return errors.New("the secrets line is not valid JSON")
}

// clip shortens a field name for an error message.
func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// validateToken checks a connection token: 16 to 512 characters that may
// appear in an HTTP header and a WebSocket subprotocol (RFC 7230 tchar).
// The error never quotes the token.
func validateToken(tok string) error {
	if len(tok) < 16 || len(tok) > 512 {
		return fmt.Errorf("%d characters; it must have 16 to 512", len(tok))
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return fmt.Errorf("character %d is not allowed (use letters, digits and -._~)", i+1)
		}
	}
	return nil
}
