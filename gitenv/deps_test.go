package gitenv_test

import (
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestLeaf keeps the package a leaf: tools/git, tools/shell and vcs
// all import it, so it imports only the standard library.
func TestLeaf(t *testing.T) {
	deptest.DepChecker{StdOnly: "tools/git, tools/shell and vcs all import gitenv"}.Check(t)
}
