package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
)

// rssKiB is a process's resident set size.
func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			n, err := strconv.Atoi(strings.Fields(line)[1])
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestE2EBigFramesCostNoLastingMemory (issue 15): a 50 MB turn.start text
// is refused with -32602, an error for a 50 MB id stays under 1 KB, and
// after the connection closes the sidecar's RSS comes back near where it
// was.
func TestE2EBigFramesCostNoLastingMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	p := spawn(t, dataDir)
	c := p.connect(t)
	proj := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	pid, err := c.OpenProject(tctx(t), proj)
	require.NoError(t, err)
	sid, err := c.CreateSession(tctx(t), pid, nil)
	require.NoError(t, err)
	base := rssKiB(t, p.cmd.Process.Pid)

	big := bytes.Repeat([]byte("a"), 50<<20)
	err = c.Call(tctx(t), "turn.start", map[string]any{"sessionId": sid, "text": string(big)}, nil)
	require.Equal(t, client.CodeInvalidParams, client.Code(err), "a 50 MB text is refused")
	require.Contains(t, err.Error(), "text")

	// An id of 50 MB: the error has a null id and a short message.
	idFrame := append(append([]byte(`{"jsonrpc":"2.0","id":"`), big...), `","method":"session.list","params":{}}`...)
	require.NoError(t, c.WriteRaw(tctx(t), idFrame))
	for {
		select {
		case n := <-c.Notifications():
			if n.Method != "" {
				continue
			}
			require.Less(t, len(n.Params), 1024, "the error does not echo the id")
			require.Contains(t, string(n.Params), `"id":null`)
			goto closed
		case <-tctx(t).Done():
			t.Fatal("no answer to the 50 MB id")
		}
	}
closed:
	require.NoError(t, c.Close())

	// RSS returns near the baseline once the connection is gone.
	deadline := time.Now().Add(20 * time.Second)
	for {
		rss := rssKiB(t, p.cmd.Process.Pid)
		if rss <= base+20<<10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RSS stays at %d KiB after the big frames (was %d KiB)", rss, base)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
