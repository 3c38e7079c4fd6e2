package vcs

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// testShadowRoot stands for the sidecar's data dir in tests.
var testShadowRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vcs-shadow-")
	if err != nil {
		panic(err)
	}
	testShadowRoot = dir
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}
