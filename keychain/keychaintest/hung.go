//go:build linux

// Package keychaintest gives tests a keychain that never answers: a private
// D-Bus session bus (a dbus-daemon of its own on a socket in a temp dir)
// on which one connection owns org.freedesktop.secrets, the Secret
// Service's name, and takes every call without ever replying, as a
// Secret Service waiting on an unlock prompt nobody answers does. Point a
// process at it with DBUS_SESSION_BUS_ADDRESS.
package keychaintest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// SecretServiceName is the bus name the Secret Service owns.
const SecretServiceName = "org.freedesktop.secrets"

// busConfig is a session bus with no activatable services (so no real
// gnome-keyring can be started on it) that lets its peers own any name.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// HungService is a running never-answering Secret Service.
type HungService struct {
	// Address is the bus address, for DBUS_SESSION_BUS_ADDRESS.
	Address string
	calls   atomic.Int64
}

// Calls is how many method calls the service received (and never answered).
func (h *HungService) Calls() int64 { return h.calls.Load() }

// StartHung starts a private session bus and a Secret Service on it that
// never answers; both end when the test ends (the service first, so that
// the bus fails the calls still waiting, then the bus). The test is
// skipped when dbus-daemon is not installed.
func StartHung(t testing.TB) *HungService {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon not installed (apt-get install dbus)")
	}
	dir, err := os.MkdirTemp("", "zqbus-") // short: a socket path is limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	conf := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, busConfig, filepath.Join(dir, "bus")), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config-file="+conf, "--nofork", "--nopidfile", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addrc := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		addrc <- strings.TrimSpace(line)
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(30 * time.Second):
		t.Fatal("dbus-daemon printed no address")
	}
	if addr == "" {
		t.Fatal("dbus-daemon printed no address")
	}

	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connect to the private bus: %v", err)
	}
	reply, err := conn.RequestName(SecretServiceName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		conn.Close()
		t.Fatalf("own %s: %v %v", SecretServiceName, reply, err)
	}
	h := &HungService{Address: addr}
	// Eavesdrop hands every incoming message to msgs and handles none: a
	// method call is never answered.
	msgs := make(chan *dbus.Message, 64)
	conn.Eavesdrop(msgs)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for m := range msgs {
			if m.Type == dbus.TypeMethodCall {
				h.calls.Add(1)
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close() // closes msgs; the bus fails the calls waiting on us
		<-drained
	})
	return h
}
