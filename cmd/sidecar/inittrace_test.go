package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// Package initializers run on every start, before the ready line, whether
// or not what they prepare is used. The sidecar keeps them small: a large
// one costs start time and idle memory on each spawn (upstream's
// santhosh-tekuri/jsonschema compiled every draft's metaschema in init,
// 1.7 MB and ~5 ms; third_party/jsonschema compiles them on first use).
// The bounds are on bytes allocated, which do not depend on the machine's
// load; GODEBUG=inittrace=1 reports them per package.
const (
	maxInitBytesPerPackage = 256 << 10
	maxInitBytesTotal      = 1 << 20
)

var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, [0-9.]+ ms clock, ([0-9]+) bytes, ([0-9]+) allocs$`)

func TestPackageInitsAreSmall(t *testing.T) {
	cmd := exec.Command(sidecarBin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run())

	var total, n int
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		m := initLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n++
		b, err := strconv.Atoi(m[2])
		require.NoError(t, err)
		total += b
		if b > maxInitBytesPerPackage {
			t.Errorf("init of %s allocates %d bytes (%s allocs) on every start; bound %d: prepare it on first use", m[1], b, m[3], maxInitBytesPerPackage)
		}
	}
	require.Greater(t, n, 50, "GODEBUG=inittrace=1 reported no inits:\n%s", stderr.String())
	require.LessOrEqual(t, total, maxInitBytesTotal, "package inits allocate %d bytes in all on every start", total)
	t.Logf("%d package inits allocate %d bytes", n, total)
}
