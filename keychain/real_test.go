package keychain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

// realKeyring returns a Keyring with a service name unique to this run, on
// the real OS keychain; the test is skipped unless the suite runs under
// testdata/with-keyring.sh (or ZQAGENT_KEYRING_TEST=1 on a desktop whose
// keychain is unlocked).
func realKeyring(t *testing.T) *Keyring {
	t.Helper()
	if os.Getenv("ZQAGENT_KEYRING_TEST") != "1" {
		t.Skip("real keychain tests need ZQAGENT_KEYRING_TEST=1: run under keychain/testdata/with-keyring.sh")
	}
	service := fmt.Sprintf("zqagent-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	k := New(service)
	t.Cleanup(func() {
		_ = keyring.DeleteAll(service)
		_ = k.Close()
	})
	return k
}

func TestRealRoundTrip(t *testing.T) {
	k := realKeyring(t)
	const provider = "zqreal"
	t.Setenv(EnvVar(provider), "")
	const key = "sk-real-0123456789abcdef"

	if st := k.Status(context.Background(), provider); st.Configured || st.Source != "" || st.Error != "" {
		t.Fatalf("status before set: %+v", st)
	}
	if _, err := k.Get(context.Background(), provider); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get before set: %v", err)
	}
	if err := k.Set(context.Background(), provider, key); err != nil {
		t.Fatalf("Set: %v", err)
	}
	got, err := k.Get(context.Background(), provider)
	if err != nil || got != key {
		t.Fatalf("Get: %q %v", got, err)
	}
	st := k.Status(context.Background(), provider)
	if !st.Configured || st.Source != SourceKeychain {
		t.Fatalf("status after set: %+v", st)
	}
	b, _ := json.Marshal(st)
	if strings.Contains(string(b), key) || strings.Contains(string(b), key[:8]) || strings.Contains(fmt.Sprintf("%+v", st), key[:8]) {
		t.Fatalf("status carries the key: %s", b)
	}
	if r, err := k.Resolve(context.Background(), provider); err != nil || r != key {
		t.Fatalf("Resolve: %q %v", r, err)
	}
	// Replacing a key.
	if err := k.Set(context.Background(), provider, key+"-2"); err != nil {
		t.Fatalf("Set again: %v", err)
	}
	if got, _ := k.Get(context.Background(), provider); got != key+"-2" {
		t.Fatalf("replaced key: %q", got)
	}
	// Another install's service name does not see it.
	other := New(k.Service() + "-dev")
	t.Cleanup(func() { _ = keyring.DeleteAll(other.Service()) })
	if _, err := other.Get(context.Background(), provider); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other service sees the key: %v", err)
	}
	if err := k.Delete(context.Background(), provider); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := k.Get(context.Background(), provider); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after delete: %v", err)
	}
	if err := k.Delete(context.Background(), provider); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Delete twice: %v", err)
	}
	if st := k.Status(context.Background(), provider); st.Configured {
		t.Fatalf("status after delete: %+v", st)
	}
	if _, err := k.Resolve(context.Background(), provider); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "ZQREAL_API_KEY") {
		t.Fatalf("Resolve after delete: %v", err)
	}
	if err := k.Set(context.Background(), provider, "bad\nkey"); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Set invalid: %v", err)
	}
}

func TestRealKeychainWinsOverEnv(t *testing.T) {
	k := realKeyring(t)
	const provider = "zqboth"
	t.Setenv(EnvVar(provider), "sk-env-key")
	if st := k.Status(context.Background(), provider); !st.Configured || st.Source != SourceEnv {
		t.Fatalf("env only: %+v", st)
	}
	if r, err := k.Resolve(context.Background(), provider); err != nil || r != "sk-env-key" {
		t.Fatalf("Resolve env: %q %v", r, err)
	}
	if err := k.Set(context.Background(), provider, "sk-keychain-key"); err != nil {
		t.Fatal(err)
	}
	if st := k.Status(context.Background(), provider); st.Source != SourceKeychain {
		t.Fatalf("both: %+v", st)
	}
	// Read at the moment of use: a key changed in the UI applies at once.
	if r, _ := k.Resolve(context.Background(), provider); r != "sk-keychain-key" {
		t.Fatalf("Resolve both: %q", r)
	}
	if err := k.Set(context.Background(), provider, "sk-keychain-key-2"); err != nil {
		t.Fatal(err)
	}
	if r, _ := k.Resolve(context.Background(), provider); r != "sk-keychain-key-2" {
		t.Fatalf("Resolve after change: %q", r)
	}
}

func TestRealLargeKey(t *testing.T) {
	k := realKeyring(t)
	big := strings.Repeat("k", MaxKeyBytes)
	if err := k.Set(context.Background(), "zqbig", big); err != nil {
		t.Fatalf("Set max size: %v", err)
	}
	if got, err := k.Get(context.Background(), "zqbig"); err != nil || got != big {
		t.Fatalf("Get max size: %d bytes, %v", len(got), err)
	}
	if err := k.Set(context.Background(), "zqbig", big+"k"); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Set over max: %v", err)
	}
}

// TestRealLookedUpOncePerChange: a key is read from the keychain once and
// cached; a change made behind the Keyring's back is not seen, one made by
// Set or Delete is at once.
func TestRealLookedUpOncePerChange(t *testing.T) {
	k := realKeyring(t)
	ctx := context.Background()
	const provider = "zqcache"
	t.Setenv(EnvVar(provider), "")
	if err := k.Set(ctx, provider, "sk-cache-1"); err != nil {
		t.Fatal(err)
	}
	if r, err := k.Resolve(ctx, provider); err != nil || r != "sk-cache-1" {
		t.Fatalf("Resolve: %q %v", r, err)
	}
	if err := keyring.Set(k.Service(), provider, "sk-cache-behind"); err != nil {
		t.Fatal(err)
	}
	if r, _ := k.Resolve(ctx, provider); r != "sk-cache-1" {
		t.Fatalf("a change behind the Keyring's back was read: %q (the keychain was asked again)", r)
	}
	if err := k.Set(ctx, provider, "sk-cache-2"); err != nil {
		t.Fatal(err)
	}
	if r, _ := k.Resolve(ctx, provider); r != "sk-cache-2" {
		t.Fatalf("after Set: %q", r)
	}
	if err := k.Delete(ctx, provider); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Resolve(ctx, provider); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after Delete: %v", err)
	}
	// A key stored behind its back after "none" is not seen either: none
	// is cached too.
	if err := keyring.Set(k.Service(), provider, "sk-cache-behind-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Resolve(ctx, provider); !errors.Is(err, ErrNotFound) {
		t.Fatalf("none was not cached: %v", err)
	}
}
