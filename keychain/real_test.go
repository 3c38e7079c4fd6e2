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

	if st := k.Status(provider); st.Configured || st.Source != "" || st.Error != "" {
		t.Fatalf("status before set: %+v", st)
	}
	if _, err := k.Get(provider); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get before set: %v", err)
	}
	if err := k.Set(provider, key); err != nil {
		t.Fatalf("Set: %v", err)
	}
	got, err := k.Get(provider)
	if err != nil || got != key {
		t.Fatalf("Get: %q %v", got, err)
	}
	st := k.Status(provider)
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
	if err := k.Set(provider, key+"-2"); err != nil {
		t.Fatalf("Set again: %v", err)
	}
	if got, _ := k.Get(provider); got != key+"-2" {
		t.Fatalf("replaced key: %q", got)
	}
	// Another install's service name does not see it.
	other := New(k.Service() + "-dev")
	t.Cleanup(func() { _ = keyring.DeleteAll(other.Service()) })
	if _, err := other.Get(provider); !errors.Is(err, ErrNotFound) {
		t.Fatalf("other service sees the key: %v", err)
	}
	if err := k.Delete(provider); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := k.Get(provider); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after delete: %v", err)
	}
	if err := k.Delete(provider); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Delete twice: %v", err)
	}
	if st := k.Status(provider); st.Configured {
		t.Fatalf("status after delete: %+v", st)
	}
	if _, err := k.Resolve(context.Background(), provider); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "ZQREAL_API_KEY") {
		t.Fatalf("Resolve after delete: %v", err)
	}
	if err := k.Set(provider, "bad\nkey"); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Set invalid: %v", err)
	}
}

func TestRealKeychainWinsOverEnv(t *testing.T) {
	k := realKeyring(t)
	const provider = "zqboth"
	t.Setenv(EnvVar(provider), "sk-env-key")
	if st := k.Status(provider); !st.Configured || st.Source != SourceEnv {
		t.Fatalf("env only: %+v", st)
	}
	if r, err := k.Resolve(context.Background(), provider); err != nil || r != "sk-env-key" {
		t.Fatalf("Resolve env: %q %v", r, err)
	}
	if err := k.Set(provider, "sk-keychain-key"); err != nil {
		t.Fatal(err)
	}
	if st := k.Status(provider); st.Source != SourceKeychain {
		t.Fatalf("both: %+v", st)
	}
	// Read at the moment of use: a key changed in the UI applies at once.
	if r, _ := k.Resolve(context.Background(), provider); r != "sk-keychain-key" {
		t.Fatalf("Resolve both: %q", r)
	}
	if err := k.Set(provider, "sk-keychain-key-2"); err != nil {
		t.Fatal(err)
	}
	if r, _ := k.Resolve(context.Background(), provider); r != "sk-keychain-key-2" {
		t.Fatalf("Resolve after change: %q", r)
	}
}

func TestRealLargeKey(t *testing.T) {
	k := realKeyring(t)
	big := strings.Repeat("k", MaxKeyBytes)
	if err := k.Set("zqbig", big); err != nil {
		t.Fatalf("Set max size: %v", err)
	}
	if got, err := k.Get("zqbig"); err != nil || got != big {
		t.Fatalf("Get max size: %d bytes, %v", len(got), err)
	}
	if err := k.Set("zqbig", big+"k"); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Set over max: %v", err)
	}
}
