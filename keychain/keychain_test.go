package keychain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// godbus keeps the process's shared session bus connection, with its
	// reader goroutines, for the life of the process (go-keyring uses
	// dbus.SessionBus()). Nothing of ours may stay behind.
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.newConn.func1"),
		goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.(*Conn).inWorker"),
		goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.(*Conn).outWorker"),
		goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.(*unixTransport).ReadMessage"),
	)
}

func TestEnvVar(t *testing.T) {
	for in, want := range map[string]string{
		"openai": "OPENAI_API_KEY", "deepseek": "DEEPSEEK_API_KEY", "OpenAI": "OPENAI_API_KEY",
		"my-local": "MY_LOCAL_API_KEY", "lm studio": "LM_STUDIO_API_KEY", "1min": "_1MIN_API_KEY",
		"": "API_KEY", "ünï": "_N__API_KEY",
	} {
		if got := EnvVar(in); got != want {
			t.Errorf("EnvVar(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateKey(t *testing.T) {
	for _, c := range []struct {
		key string
		ok  bool
	}{
		{"sk-proj-abc123", true},
		{strings.Repeat("k", MaxKeyBytes), true},
		{"", false},
		{strings.Repeat("k", MaxKeyBytes+1), false},
		{"sk-abc\n", false},
		{"sk-\nabc", false},
		{"sk-\x00abc", false},
		{"sk-\tabc", false},
		{" sk-abc", false},
		{"sk-\xffabc", false},
		{"sk-\u0085abc", false},
	} {
		err := ValidateKey(c.key)
		if (err == nil) != c.ok {
			t.Errorf("ValidateKey(%q) = %v, want ok=%v", c.key, err, c.ok)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) {
				t.Errorf("ValidateKey(%q): %v is not ErrInvalidKey", c.key, err)
			}
			if len(c.key) > 3 && strings.Contains(err.Error(), strings.TrimSpace(c.key)) {
				t.Errorf("error quotes the key: %v", err)
			}
		}
	}
	for _, p := range []string{"", " openai", "a\nb", strings.Repeat("p", 200)} {
		if err := ValidateProvider(p); !errors.Is(err, ErrInvalidProvider) {
			t.Errorf("ValidateProvider(%q) = %v", p, err)
		}
	}
}

func TestMapErr(t *testing.T) {
	for _, c := range []struct {
		in    error
		want  error
		cause string
	}{
		{keyring.ErrNotFound, ErrNotFound, ""},
		{keyring.ErrSetDataTooBig, ErrInvalidKey, ""},
		{keyring.ErrUnsupportedPlatform, ErrUnavailable, "no supported keychain"},
		{dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown", Body: []any{"The name org.freedesktop.secrets was not provided by any .service files"}}, ErrUnavailable, "no Secret Service"},
		{errors.New("dial unix /nonexistent: connect: no such file or directory"), ErrUnavailable, "no D-Bus session bus"},
		{errors.New("dbus: couldn't determine address of session bus"), ErrUnavailable, "keychain error"},
		{fmt.Errorf("failed to unlock correct collection '/org/freedesktop/secrets/aliases/default'"), ErrUnavailable, "locked"},
		{dbus.Error{Name: "org.freedesktop.DBus.Error.NoReply"}, ErrUnavailable, "did not answer"},
	} {
		err := mapErr("openai", c.in)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.cause) {
			t.Errorf("mapErr(%v) = %v, want %v with %q", c.in, err, c.want, c.cause)
		}
		if errors.Is(err, ErrUnavailable) && !strings.Contains(err.Error(), "OPENAI_API_KEY") {
			t.Errorf("unavailable error without the remedy: %v", err)
		}
	}
}

// TestNoSecretService runs the keychain in a child process whose session
// bus address points nowhere: every keychain call is ErrUnavailable with a
// message naming the cause and the remedy, and env-var keys still resolve.
func TestNoSecretService(t *testing.T) {
	if os.Getenv("ZQAGENT_KEYCHAIN_CHILD") == "1" {
		noSecretServiceChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoSecretService$", "-test.v")
	cmd.Env = append(os.Environ(),
		"ZQAGENT_KEYCHAIN_CHILD=1",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/zqagent-bus",
		"XDG_RUNTIME_DIR=/nonexistent",
		"ZQTEST_API_KEY=sk-from-env-123",
	)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func noSecretServiceChild(t *testing.T) {
	k := New("zqagent-test-nobus")
	defer k.Close()
	err := k.Set(context.Background(), "zqtest", "sk-should-not-be-stored")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Set: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"D-Bus", "set ZQTEST_API_KEY", "gnome-keyring"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("Set error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "sk-should-not-be-stored") {
		t.Fatalf("error carries the key: %s", msg)
	}
	if _, err := k.Get(context.Background(), "zqtest"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Get: %v", err)
	}
	if err := k.Delete(context.Background(), "zqtest"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Delete: %v", err)
	}
	st := k.Status(context.Background(), "zqtest")
	if !st.Configured || st.Source != SourceEnv || st.Error == "" || st.EnvVar != "ZQTEST_API_KEY" {
		t.Fatalf("Status: %+v", st)
	}
	key, err := k.Resolve(context.Background(), "zqtest")
	if err != nil || key != "sk-from-env-123" {
		t.Fatalf("Resolve with env: %q %v", key, err)
	}
	_, err = k.Resolve(context.Background(), "other")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "OTHER_API_KEY") {
		t.Fatalf("Resolve without env: %v", err)
	}
	if st := k.Status(context.Background(), "other"); st.Configured || st.Source != "" || st.Error == "" {
		t.Fatalf("Status other: %+v", st)
	}
	fmt.Println("child ok")
}

func TestResolveCancelled(t *testing.T) {
	k := New("")
	defer k.Close()
	if k.Service() != DefaultService {
		t.Fatalf("service %q", k.Service())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := k.Resolve(ctx, "openai"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Resolve on a cancelled ctx: %v", err)
	}
}

func TestStatusJSON(t *testing.T) {
	b, err := json.Marshal(Status{Provider: "openai", Configured: true, Source: SourceEnv, EnvVar: "OPENAI_API_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"provider":"openai","configured":true,"source":"env","envVar":"OPENAI_API_KEY"}` {
		t.Fatalf("json %s", b)
	}
}

// FuzzEnvVar: any provider name maps to a valid environment variable name.
func FuzzEnvVar(f *testing.F) {
	for _, s := range []string{"openai", "deepseek", "my-local", "", "9", "ü", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, provider string) {
		v := EnvVar(provider)
		if !strings.HasSuffix(v, "API_KEY") || (v[0] >= '0' && v[0] <= '9') {
			t.Fatalf("EnvVar(%q) = %q", provider, v)
		}
		for _, r := range v {
			if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
				t.Fatalf("EnvVar(%q) = %q has %q", provider, v, r)
			}
		}
		_ = ValidateKey(provider)
		_ = ValidateProvider(provider)
	})
}
