// Package keychain owns API keys: they live in the OS keychain only (macOS
// Keychain, Windows Credential Manager, the Secret Service on Linux, through
// github.com/zalando/go-keyring), under one service name per install and the
// provider profile name as account, or were handed to the process at start
// (the shell's secrets line on stdin, or the provider's environment
// variable), held in memory only. There is no plaintext fallback. Nothing
// here returns a key except Get and Resolve, and no error or Status carries
// a key or a part of one.
//
// On Linux and the BSDs the keychain is the Secret Service on the D-Bus
// session bus; with no bus running (a headless machine) the keychain is not
// available and no bus is ever started (see checkBus).
//
// A provider's key is read from the keychain once and cached until Set or
// Delete changes it (a change made outside this process, in Keychain Access
// or Seahorse, is seen after a restart). Every keychain call is bounded by
// LookupTimeout: a keychain that does not answer (one waiting on an unlock
// prompt nobody answers) is ErrNoAnswer, never a hang, and while one of its
// calls is overdue every other call fails at once without asking it.
//
// Concurrency: a Keyring is safe for concurrent use. Each keychain call
// runs on a goroutine of its own, so that callers can give up; callers of
// the same provider share one lookup. Close waits for the calls briefly and
// then abandons them (see Close).
package keychain

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zalando/go-keyring"
)

// DefaultService is the keychain service name of a release install.
const DefaultService = "zqagent"

// MaxKeyBytes bounds a key: under every backend's limit (macOS refuses
// service+account+secret over about 3000 bytes, Windows secrets over 2560).
const MaxKeyBytes = 2048

const maxProviderLen = 128

// Store is what the protocol's keys.* methods need.
type Store interface {
	Set(ctx context.Context, provider, key string) error
	Get(ctx context.Context, provider string) (string, error)
	Delete(ctx context.Context, provider string) error
}

var _ Store = (*Keyring)(nil)

// Status reports whether a provider has a key, and where it comes from.
type Status struct {
	Provider   string `json:"provider"`
	Configured bool   `json:"configured"`
	Source     string `json:"source"` // "keychain" | "stdin" | "env" | ""
	// EnvVar is the environment variable checked for the provider.
	EnvVar string `json:"envVar"`
	Error  string `json:"error,omitempty"` // why the keychain could not be read
}

// Key sources.
const (
	SourceKeychain = "keychain"
	// SourceStdin: the shell passed the key on the sidecar's stdin at start.
	SourceStdin = "stdin"
	SourceEnv   = "env"
)

// Keyring stores keys under one service name.
type Keyring struct {
	service string
	timeout time.Duration  // LookupTimeout (tests shorten it)
	wg      sync.WaitGroup // keychain calls, each on its own goroutine

	nextCall  atomic.Uint64
	startedMu sync.Mutex           // guards started; taken after mu when both are held
	started   map[uint64]time.Time // keychain calls not yet returned, by when they started

	mu    sync.Mutex         // guards given, env, cache
	given map[string]string  // provider → key passed on stdin at start
	env   map[string]string  // key variable → value, of the environment at start
	cache map[string]*lookup // provider → its keychain lookup, done or in flight
}

// New returns a Keyring for service; "" is DefaultService. Give dev and
// release builds different names so they do not share keys.
func New(service string) *Keyring {
	if strings.TrimSpace(service) == "" {
		service = DefaultService
	}
	return &Keyring{service: service, timeout: LookupTimeout, cache: map[string]*lookup{}, started: map[uint64]time.Time{}}
}

// SetStartKeys hands the Keyring the keys the process got at start, which
// it keeps in memory only: given by provider (the shell's secrets line on
// stdin) and env by variable name (the key variables of the environment the
// process started with, which the process then removes from its own
// environment so that no child inherits them). After the keychain, a
// provider's key comes from given, then env[EnvVar(provider)], then the
// live environment. The maps are copied.
func (k *Keyring) SetStartKeys(given, env map[string]string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.given, k.env = maps.Clone(given), maps.Clone(env)
}

// startKey returns provider's key from outside the keychain and where it
// came from; ok is false when there is none.
func (k *Keyring) startKey(provider string) (key, source string, ok bool) {
	k.mu.Lock()
	given, fromEnv := k.given[provider], k.env[EnvVar(provider)]
	k.mu.Unlock()
	switch {
	case given != "":
		return given, SourceStdin, true
	case fromEnv != "":
		return fromEnv, SourceEnv, true
	}
	if v, ok := os.LookupEnv(EnvVar(provider)); ok && v != "" {
		return v, SourceEnv, true
	}
	return "", "", false
}

// Service is the keychain service name.
func (k *Keyring) Service() string { return k.service }

// ValidateProvider checks a provider profile name used as keychain account.
func ValidateProvider(provider string) error {
	if provider == "" || len(provider) > maxProviderLen || !utf8.ValidString(provider) || strings.TrimSpace(provider) != provider {
		return fmt.Errorf("%w: %q", ErrInvalidProvider, provider)
	}
	for _, r := range provider {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: control character", ErrInvalidProvider)
		}
	}
	return nil
}

// ValidateKey checks a key's shape: non-empty, valid UTF-8, no surrounding
// whitespace, no newline or other control characters, at most MaxKeyBytes.
// The error never quotes the key.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(key) > MaxKeyBytes:
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrInvalidKey, len(key), MaxKeyBytes)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidKey)
	case strings.TrimSpace(key) != key:
		return fmt.Errorf("%w: leading or trailing whitespace", ErrInvalidKey)
	}
	for _, r := range key {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: contains a newline or another control character", ErrInvalidKey)
		}
	}
	return nil
}

// EnvVar is the environment variable that may hold provider's key:
// OPENAI_API_KEY for "openai", DEEPSEEK_API_KEY for "deepseek", and the
// name upper-cased with every other character made '_' plus "_API_KEY"
// for the rest ("my-local" → MY_LOCAL_API_KEY).
func EnvVar(provider string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(provider) {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" {
		return "API_KEY"
	}
	if name[0] >= '0' && name[0] <= '9' {
		name = "_" + name
	}
	return name + "_API_KEY"
}

// Set stores key for provider, replacing any previous key. It gives up
// with ErrNoAnswer after LookupTimeout (or when ctx ends); the cached key
// of provider is forgotten either way, and again when a call that gave up
// lands late.
func (k *Keyring) Set(ctx context.Context, provider, key string) error {
	if err := ValidateProvider(provider); err != nil {
		return err
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	if err := k.change(ctx, provider, func() error { return keyring.Set(k.service, provider, key) }); err != nil {
		return fmt.Errorf("store key for %s: %w", provider, err)
	}
	return nil
}

// Get returns provider's key from the keychain (not the environment):
// ErrNotFound when there is none, ErrUnavailable when the keychain cannot
// be used, ErrNoAnswer (also ErrUnavailable) when it did not answer within
// LookupTimeout. A key or ErrNotFound is cached until Set or Delete; an
// error is not, so the next call asks the keychain again (once the call
// that did not answer has returned).
func (k *Keyring) Get(ctx context.Context, provider string) (string, error) {
	if err := ValidateProvider(provider); err != nil {
		return "", err
	}
	return k.wait(ctx, provider, k.lookup(provider))
}

// Delete removes provider's key; ErrNotFound when there is none. Like Set,
// it gives up with ErrNoAnswer after LookupTimeout.
func (k *Keyring) Delete(ctx context.Context, provider string) error {
	if err := ValidateProvider(provider); err != nil {
		return err
	}
	if err := k.change(ctx, provider, func() error { return keyring.Delete(k.service, provider) }); err != nil {
		return fmt.Errorf("delete key for %s: %w", provider, err)
	}
	return nil
}

// Status reports whether provider has a key and where it comes from; the
// keychain wins over the start keys (SetStartKeys) and the environment. It
// never carries the key, and it is bounded like Get.
func (k *Keyring) Status(ctx context.Context, provider string) Status {
	st := Status{Provider: provider, EnvVar: EnvVar(provider)}
	_, err := k.Get(ctx, provider)
	switch {
	case err == nil:
		st.Configured, st.Source = true, SourceKeychain
		return st
	case errors.Is(err, ErrNotFound):
	default:
		st.Error = err.Error()
	}
	if _, src, ok := k.startKey(provider); ok {
		st.Configured, st.Source = true, src
	}
	return st
}

// Resolve returns the key to use now: the keychain's, else the start key
// or the environment variable's. When neither has one it returns
// ErrNotFound, or the ErrUnavailable error (which names the remedy) when
// the keychain could not be read or did not answer within LookupTimeout.
// It gives up with ctx's error when ctx ends first. The keychain is asked
// once per change (see Get), not at every call.
func (k *Keyring) Resolve(ctx context.Context, provider string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	key, err := k.Get(ctx, provider)
	if err == nil {
		return key, nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if v, _, ok := k.startKey(provider); ok {
		return v, nil
	}
	if errors.Is(err, ErrNotFound) {
		return "", fmt.Errorf("%w for %s: store one in the app's settings or set %s", ErrNotFound, provider, EnvVar(provider))
	}
	return "", err
}
