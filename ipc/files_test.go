package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/protocol"
)

// latestCall keeps the newest call by arrival: a newer one cancels the
// older (cause errSuperseded); an older one that begins after a newer is
// refused at once; a call that ended leaves nothing to cancel.
func TestLatestCall(t *testing.T) {
	var l latestCall
	bg := context.Background()
	ctx1, done1, err := l.begin(bg, 1)
	require.NoError(t, err)
	ctx3, done3, err := l.begin(bg, 3)
	require.NoError(t, err)
	require.ErrorIs(t, context.Cause(ctx1), errSuperseded, "the older call is cancelled")
	require.NoError(t, ctx3.Err())
	_, _, err = l.begin(bg, 2)
	require.ErrorIs(t, err, errSuperseded, "an older call that begins late is refused")
	require.NoError(t, ctx3.Err())
	done1() // the superseded call ending changes nothing for the newer
	require.NoError(t, ctx3.Err())
	done3()
	require.ErrorIs(t, ctx3.Err(), context.Canceled)
	require.NotErrorIs(t, context.Cause(ctx3), errSuperseded, "it ended, it was not superseded")
	ctx4, done4, err := l.begin(bg, 4)
	require.NoError(t, err)
	defer done4()
	require.NoError(t, ctx4.Err())
}

// files.search over a real connection: results, the errors, and a newer
// call of the connection superseding the older one.
func TestFilesSearchMethod(t *testing.T) {
	ts := startServer(t)
	c := ts.dial(t)
	pid := ts.project(t, c)
	dir := filepath.Join(ts.dir, "proj")
	for _, p := range []string{"cmd/api/server.go", "src/service/errors/view.go", "server.go", "notes.log"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), nil, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\n"), 0o644))

	var res protocol.FilesSearchResult
	require.NoError(t, c.Call(tctx(t), "files.search", map[string]any{"projectId": pid, "query": "server.go", "limit": 2}, &res))
	require.False(t, res.Truncated)
	require.Equal(t, []protocol.FileMatch{
		{Path: "server.go", Score: res.Results[0].Score, Positions: []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{Path: "cmd/api/server.go", Score: res.Results[1].Score, Positions: []int{8, 9, 10, 11, 12, 13, 14, 15, 16}},
	}, res.Results)
	require.GreaterOrEqual(t, res.Results[0].Score, res.Results[1].Score)
	require.NoError(t, c.Call(tctx(t), "files.search", map[string]any{"projectId": pid, "query": "log"}, &res))
	for _, m := range res.Results {
		require.NotEqual(t, "notes.log", m.Path, "ignored by .gitignore")
	}

	e := callErr(t, c, "files.search", map[string]any{"projectId": pid, "query": "x", "limit": 201})
	require.Equal(t, protocol.CodeInvalidParams, e.Code)
	require.Equal(t, "limit", e.Data.Field)
	e = callErr(t, c, "files.search", map[string]any{"projectId": pid, "query": string(make([]byte, 257))})
	require.Equal(t, "query", e.Data.Field)
	e = callErr(t, c, "files.search", map[string]any{"projectId": "nope", "query": "x"})
	require.Equal(t, protocol.CodeNotFound, e.Code)
	require.NoError(t, c.Call(tctx(t), "project.close", map[string]any{"projectId": pid}, nil))
	e = callErr(t, c, "files.search", map[string]any{"projectId": pid, "query": "x"})
	require.Equal(t, protocol.CodeNotFound, e.Code, "a closed project: %s", e.Message)
}

// Two searches sent one after the other on a connection: the second
// always answers; the first is superseded unless it ended before the
// second began (each matches 10,000 paths: it rarely does).
func TestFilesSearchNewerSupersedesOlder(t *testing.T) {
	ts := startServer(t)
	c := ts.dial(t)
	pid := ts.project(t, c)
	dir := filepath.Join(ts.dir, "proj")
	for d := range 50 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%d", d))
		require.NoError(t, os.MkdirAll(sub, 0o755))
		for f := range 200 {
			require.NoError(t, os.WriteFile(filepath.Join(sub, fmt.Sprintf("service_%d.go", f)), nil, 0o644))
		}
	}
	require.NoError(t, c.Call(tctx(t), "files.search", map[string]any{"projectId": pid, "query": ""}, nil)) // built

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
				if n.Method == "" { // the batch's answer (mcp.status comes too)
					require.NoError(t, json.Unmarshal(n.Params, &answers), "%s", n.Params)
				}
			case <-tctx(t).Done():
				t.Fatal("no answer")
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
					require.Equal(t, protocol.CodeConflict, a.Error.Code)
					require.Equal(t, protocol.KindSuperseded, a.Error.Data.Kind)
					superseded++
				}
			}
		}
	}
	require.Positive(t, superseded, "the older call was never superseded")
}
