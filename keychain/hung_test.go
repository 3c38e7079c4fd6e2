//go:build linux

package keychain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zqagent/sidecar/keychain/keychaintest"
)

// TestHungKeychain: on a session bus whose Secret Service takes calls and
// never answers, ten concurrent lookups share one keychain call and each
// ends with ErrNoAnswer (also ErrUnavailable, naming the remedy); while that
// call is overdue every other lookup, Set and Delete fail at once without
// asking; a start key serves; Status reports the silence; Close returns
// though the call still waits. It runs in a child process, whose shared
// session bus connection is the hung one.
func TestHungKeychain(t *testing.T) {
	if os.Getenv("ZQAGENT_HUNG_CHILD") == "1" {
		hungChild(t)
		return
	}
	h := keychaintest.StartHung(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHungKeychain$", "-test.v")
	cmd.Env = append(os.Environ(), "ZQAGENT_HUNG_CHILD=1", "DBUS_SESSION_BUS_ADDRESS="+h.Address,
		"ZQSTARTED_API_KEY=", "ZQHUNG_API_KEY=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("child:\n%s", out)
	// Ten lookups of one provider share one call; once it is overdue the
	// keychain is known to be silent, and nothing else asks it.
	if n := h.Calls(); n != 1 {
		t.Fatalf("the service got %d calls", n)
	} else {
		t.Logf("the service got %d calls", n)
	}
}

func hungChild(t *testing.T) {
	k := New(fmt.Sprintf("zqagent-test-hung-%d", os.Getpid()))
	k.timeout = 200 * time.Millisecond
	k.SetStartKeys(nil, map[string]string{"ZQSTARTED_API_KEY": "sk-start-key-123"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() { _, errs[i] = k.Resolve(ctx, "zqhung") })
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrNoAnswer) || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "ZQHUNG_API_KEY") {
			t.Fatalf("lookup %d: %v", i, err)
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the lookups did not give up")
	}
	// The lookup still hangs: later callers are told at once (no timer to
	// wait out), and a start key serves.
	if _, err := k.Get(ctx, "zqhung"); !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("Get: %v", err)
	}
	st := k.Status(ctx, "zqhung")
	if st.Configured || !strings.Contains(st.Error, "did not answer") {
		t.Fatalf("Status: %+v", st)
	}
	if key, err := k.Resolve(ctx, "zqstarted"); err != nil || key != "sk-start-key-123" {
		t.Fatalf("Resolve with a start key: %q %v", key, err)
	}
	if st := k.Status(ctx, "zqstarted"); !st.Configured || st.Source != SourceEnv || !strings.Contains(st.Error, "did not answer") {
		t.Fatalf("Status with a start key: %+v", st)
	}
	if err := k.Set(ctx, "zqhung", "sk-never-stored-1"); !errors.Is(err, ErrNoAnswer) || strings.Contains(err.Error(), "sk-never") {
		t.Fatalf("Set: %v", err)
	}
	if err := k.Delete(ctx, "zqhung"); !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("Delete: %v", err)
	}
	// A cancelled caller gets its ctx's error, not the keychain's.
	cctx, ccancel := context.WithCancel(ctx)
	ccancel()
	if _, err := k.Resolve(cctx, "zqhung"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Resolve cancelled: %v", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- k.Close() }()
	select {
	case err := <-closed:
		t.Logf("Close: %v", err)
	case <-ctx.Done():
		t.Fatal("Close waited for the hung keychain")
	}
	fmt.Println("child ok")
}
