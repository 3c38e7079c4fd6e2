package backend

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The process-wide D-Bus session connection go-keyring opens on
		// Linux (real keychain tests: mcp_oauth_test.go) lives until exit.
		goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.newConn.func1"),
		goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.(*Conn).inWorker"),
		goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.(*Conn).outWorker"),
	)
}
