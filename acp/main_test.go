package acp

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The keychain's D-Bus connection lives for the process.
		goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.newConn.func1"),
		goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.(*Conn).inWorker"),
		goleak.IgnoreAnyFunction("github.com/godbus/dbus/v5.(*Conn).outWorker"),
	)
}
