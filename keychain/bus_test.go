//go:build linux

package keychain

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// noBus makes this test's process look like a headless machine: no bus
// address, an empty runtime dir. It skips when the machine has a bus in
// godbus's fixed place, /run/user/<uid>.
func noBus(t *testing.T) {
	t.Helper()
	if discoverBus("", fmt.Sprintf("/run/user/%d", os.Getuid())) != "" {
		t.Skip("this machine has a session bus under /run/user")
	}
	t.Setenv(sessionBusEnv, "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
}

// processesWithEnv lists the live processes whose environment holds kv.
func processesWithEnv(t *testing.T, kv string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(b, []byte(kv+"\x00")) {
			continue
		}
		if e.Name() == fmt.Sprint(os.Getpid()) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
	}
	return out
}

// TestNoBusNeverLaunchesOne: with no session bus, every keychain call is
// ErrUnavailable naming the cause and the remedy, start keys and the
// environment still serve, and no process (dbus-launch, dbus-daemon,
// gnome-keyring-daemon) was started.
func TestNoBusNeverLaunchesOne(t *testing.T) {
	noBus(t)
	rnd := make([]byte, 8)
	_, _ = rand.Read(rnd)
	marker := "ZQAGENT_BUS_TEST_MARK=" + hex.EncodeToString(rnd)
	name, val, _ := strings.Cut(marker, "=")
	t.Setenv(name, val)
	t.Setenv("ZQNOBUS_API_KEY", "sk-from-live-env")

	k := New(fmt.Sprintf("zqagent-test-nobus-%d", os.Getpid()))
	defer k.Close()
	k.SetStartKeys(map[string]string{"zqgiven": "sk-from-stdin"}, map[string]string{"ZQSTART_API_KEY": "sk-from-start-env"})

	err := k.Set(context.Background(), "zqnobus", "sk-never-stored-123")
	require.ErrorIs(t, err, ErrUnavailable)
	for _, want := range []string{"no D-Bus session bus", "DBUS_SESSION_BUS_ADDRESS is unset", "set ZQNOBUS_API_KEY"} {
		require.Contains(t, err.Error(), want)
	}
	require.NotContains(t, err.Error(), "sk-never")
	_, err = k.Get(context.Background(), "zqnobus")
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorIs(t, k.Delete(context.Background(), "zqnobus"), ErrUnavailable)

	for _, c := range []struct{ provider, key, source string }{
		{"zqgiven", "sk-from-stdin", SourceStdin},
		{"zqstart", "sk-from-start-env", SourceEnv},
		{"zqnobus", "sk-from-live-env", SourceEnv},
	} {
		st := k.Status(context.Background(), c.provider)
		require.True(t, st.Configured, c.provider)
		require.Equal(t, c.source, st.Source, c.provider)
		require.Contains(t, st.Error, "no D-Bus session bus", c.provider)
		got, err := k.Resolve(context.Background(), c.provider)
		require.NoError(t, err, c.provider)
		require.Equal(t, c.key, got, c.provider)
	}
	_, err = k.Resolve(context.Background(), "zqnone")
	require.ErrorIs(t, err, ErrUnavailable)
	require.Contains(t, err.Error(), "ZQNONE_API_KEY")
	require.Empty(t, os.Getenv(sessionBusEnv), "no address was made up")
	require.Empty(t, processesWithEnv(t, marker), "a keychain call started a process")
}

func TestDiscoverBus(t *testing.T) {
	runtime, runUser := t.TempDir(), t.TempDir()
	require.Empty(t, discoverBus(runtime, runUser))
	require.Empty(t, discoverBus("", ""))

	// A dbus-session file under /run/user/<uid> names the address.
	require.NoError(t, os.WriteFile(filepath.Join(runUser, "dbus-session"), []byte("DBUS_SESSION_BUS_ADDRESS=unix:abstract=/tmp/dbus-x\n"), 0o600))
	require.Equal(t, "unix:abstract=/tmp/dbus-x", discoverBus(runtime, runUser))
	require.NoError(t, os.WriteFile(filepath.Join(runUser, "dbus-session"), []byte("DBUS_SESSION_BUS_ADDRESS=autolaunch:\n"), 0o600))
	require.Empty(t, discoverBus(runtime, runUser))

	// A plain file named bus is not a bus.
	require.NoError(t, os.WriteFile(filepath.Join(runtime, "bus"), nil, 0o600))
	require.Empty(t, discoverBus(runtime, runUser))
	require.NoError(t, os.Remove(filepath.Join(runtime, "bus")))

	// The socket $XDG_RUNTIME_DIR/bus wins, its path escaped.
	dir := filepath.Join(t.TempDir(), "run dir")
	require.NoError(t, os.Mkdir(dir, 0o700))
	ln, err := net.Listen("unix", filepath.Join(dir, "bus"))
	require.NoError(t, err)
	defer ln.Close()
	require.Equal(t, "unix:path="+strings.ReplaceAll(filepath.Join(dir, "bus"), " ", "%20"), discoverBus(dir, runUser))

	// checkBus uses it and writes the address for godbus.
	if discoverBus("", fmt.Sprintf("/run/user/%d", os.Getuid())) == "" {
		t.Setenv(sessionBusEnv, "")
		t.Setenv("XDG_RUNTIME_DIR", dir)
		require.Empty(t, checkBus())
		require.Equal(t, discoverBus(dir, ""), os.Getenv(sessionBusEnv))
	}
	t.Setenv(sessionBusEnv, "autolaunch:")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if discoverBus("", fmt.Sprintf("/run/user/%d", os.Getuid())) == "" {
		require.Contains(t, checkBus(), "no D-Bus session bus", "autolaunch: is no address")
	}
	t.Setenv(sessionBusEnv, "unix:path=/nonexistent")
	require.Empty(t, checkBus(), "an explicit address is dialled, never launched")
}
