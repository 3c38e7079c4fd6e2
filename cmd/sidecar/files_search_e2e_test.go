package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/ipc/client"
	"github.com/zqagent/sidecar/protocol"
)

// TestE2EFilesSearch: the real binary answers files.search over the
// documented protocol — ranked paths with UTF-16 positions, the ignore
// rules of list_files, no link out of the project, hostile names left
// out — keeps its index current from the project's watcher (a file
// created, then removed, is seen by a later search), and lets a newer
// call of a connection supersede the older one.
func TestE2EFilesSearch(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	proj := filepath.Join(t.TempDir(), "proj")
	outside := t.TempDir()
	files := map[string]string{
		"cmd/api/server.go":          "",
		"src/service/errors/view.go": "",
		"server.go":                  "",
		"web/𝄞/Server.tsx":           "",
		"build/server.log":           "",
		".gitignore":                 "build/\n",
		"node_modules/server/x.js":   "",
	}
	for p, c := range files {
		full := filepath.Join(proj, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(outside, "server.secret"), nil, 0o644))
	if runtime.GOOS != "windows" {
		require.NoError(t, os.Symlink(filepath.Join(outside, "server.secret"), filepath.Join(proj, "server-link")))
		require.NoError(t, os.WriteFile(filepath.Join(proj, "server\nnewline.go"), nil, 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(proj, "server\xff.go"), nil, 0o644))
	}
	p := spawn(t, dataDir)
	c := p.connect(t) // every frame is checked against protocol/schema.json
	pid, err := c.OpenProject(tctx(t), proj)
	require.NoError(t, err)

	search := func(q string, limit int) protocol.FilesSearchResult {
		t.Helper()
		var res protocol.FilesSearchResult
		require.NoError(t, c.Call(tctx(t), "files.search", map[string]any{"projectId": pid, "query": q, "limit": limit}, &res))
		return res
	}
	paths := func(res protocol.FilesSearchResult) []string {
		out := []string{}
		for _, m := range res.Results {
			out = append(out, m.Path)
		}
		return out
	}

	res := search("server", 0)
	require.Equal(t, []string{"server.go", "cmd/api/server.go", "web/𝄞/Server.tsx", "src/service/errors/", "src/service/errors/view.go"}, paths(res))
	require.Equal(t, []int{0, 1, 2, 3, 4, 5}, res.Results[0].Positions)
	require.Equal(t, []int{8, 9, 10, 11, 12, 13}, res.Results[1].Positions)
	require.Equal(t, []int{7, 8, 9, 10, 11, 12}, res.Results[2].Positions, "UTF-16 offsets: 𝄞 counts two")
	require.False(t, res.Truncated)

	// The watcher keeps the index current: no re-walk, just the change.
	require.NoError(t, os.WriteFile(filepath.Join(proj, "cmd", "api", "serverless.go"), nil, 0o644))
	require.Eventually(t, func() bool {
		return slices.Contains(paths(search("serverless", 5)), "cmd/api/serverless.go")
	}, 30*time.Second, 20*time.Millisecond, "a created file is found")
	require.NoError(t, os.Remove(filepath.Join(proj, "server.go")))
	require.Eventually(t, func() bool {
		return !slices.Contains(paths(search("server.go", 5)), "server.go")
	}, 30*time.Second, 20*time.Millisecond, "a removed file is gone")

	err = c.Call(tctx(t), "files.search", map[string]any{"projectId": pid, "query": "x", "limit": 1000}, nil)
	require.Equal(t, client.CodeInvalidParams, client.Code(err))

	// A newer call supersedes the older one of the same connection.
	for d := range 50 {
		dir := filepath.Join(proj, fmt.Sprintf("pkg%d", d))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for f := range 200 {
			require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("service_%d.go", f)), nil, 0o644))
		}
	}
	require.Eventually(t, func() bool { return len(search("pkg49/service_199", 1).Results) == 1 }, 60*time.Second, 50*time.Millisecond)
	superseded := 0
	for i := 0; i < 20 && superseded == 0; i++ {
		batch := fmt.Sprintf(`[{"jsonrpc":"2.0","id":"a%d","method":"files.search","params":{"projectId":%q,"query":"se"}},`+
			`{"jsonrpc":"2.0","id":"b%d","method":"files.search","params":{"projectId":%q,"query":"sv"}}]`, i, pid, i, pid)
		require.NoError(t, c.WriteRaw(tctx(t), []byte(batch)))
		var answers []struct {
			ID     string                      `json:"id"`
			Result *protocol.FilesSearchResult `json:"result"`
			Error  *protocol.Error             `json:"error"`
		}
		for answers == nil {
			select {
			case n := <-c.Notifications():
				if n.Method == "" { // the batch's answer
					require.NoError(t, json.Unmarshal(n.Params, &answers), "%s", n.Params)
				}
			case <-tctx(t).Done():
				t.Fatal("no answer to the batch")
			}
		}
		require.Len(t, answers, 2)
		for _, a := range answers {
			switch a.ID {
			case fmt.Sprint("b", i):
				require.Nil(t, a.Error, "the newer call answers")
				require.NotEmpty(t, a.Result.Results)
			case fmt.Sprint("a", i):
				if a.Error != nil {
					require.Equal(t, client.CodeConflict, a.Error.Code)
					require.Equal(t, protocol.KindSuperseded, a.Error.Data.Kind)
					superseded++
				}
			}
		}
	}
	require.Positive(t, superseded, "the older call was never superseded")
}
