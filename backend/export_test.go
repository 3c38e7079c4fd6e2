package backend

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/llm/scripted"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/tools/media"
)

// fileMembers returns the decompressed members of a session file.
func fileMembers(t *testing.T, path string) map[string][]byte {
	t.Helper()
	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer zr.Close()
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		out[f.Name] = b
	}
	return out
}

// runIdle waits until the session's turns are over.
func runIdle(t *testing.T, b *Backend, sid string) {
	t.Helper()
	h, err := b.host(t.Context(), sid)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !h.Running() && !h.turnState().Busy() }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, h.WaitIdle(t.Context()))
}

// TestExportImportSession: a session with an attachment, permissive
// settings and a foreign settings member holding a secret is exported and
// imported into another project: the new session has the history, the
// attachment's bytes, the log renumbered, the safe settings; the
// permissive ones are reset and named; the secret is nowhere in the file;
// a next turn sends the whole history to the model.
func TestExportImportSession(t *testing.T) {
	p := scripted.New(scripted.Response{Text: "a cat"}, scripted.Response{Text: "still a cat"})
	b := newTestBackend(t, p)
	ctx := t.Context()
	proj, err := b.OpenProject(ctx, protocol.ProjectOpenParams{Path: t.TempDir(), VCS: protocol.VCSOff})
	require.NoError(t, err)
	sess, err := b.CreateSession(ctx, protocol.SessionCreateParams{ProjectID: proj.ProjectID, Model: "m", Title: "Cats",
		Mode: "auto", ShellPolicy: "all", AllowedCommands: []string{"rm"}, Sandbox: "off", SandboxNetwork: true, Lang: "ko", ReasoningEffort: "high"})
	require.NoError(t, err)
	sid := sess.SessionID
	const secret = "sk-live-0123456789abcdef"
	_, err = b.opts.Store.UpdateSession(ctx, sid, func(ss *store.Session) {
		var obj map[string]any
		require.NoError(t, json.Unmarshal(ss.Settings, &obj))
		obj["mcpEnv"] = map[string]string{"TOKEN": secret} // another writer's member
		ss.Settings, _ = json.Marshal(obj)
	})
	require.NoError(t, err)
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 100)...)
	_, err = b.StartTurn(ctx, sid, "what is this?", []media.Upload{{Name: "cat.png", MimeType: "image/png", DataURL: []byte("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))}})
	require.NoError(t, err)
	runIdle(t, b, sid)

	out := filepath.Join(t.TempDir(), "cats.zqsession")
	res, err := b.ExportSession(ctx, protocol.SessionExportParams{SessionID: sid, Path: out})
	require.NoError(t, err)
	require.Equal(t, out, res.Path)
	require.Equal(t, 1, res.Attachments)
	require.Positive(t, res.Events)
	fi, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, fi.Size(), res.Bytes)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	for name, b := range fileMembers(t, out) {
		require.NotContains(t, string(b), secret, "%s holds the secret", name)
		require.NotContains(t, string(b), "mcpEnv", name)
	}

	other, err := b.OpenProject(ctx, protocol.ProjectOpenParams{Path: t.TempDir(), VCS: protocol.VCSOff})
	require.NoError(t, err)
	imp, err := b.ImportSession(ctx, protocol.SessionImportParams{ProjectID: other.ProjectID, Path: out})
	require.NoError(t, err)
	require.NotEqual(t, sid, imp.SessionID)
	require.Equal(t, "Cats", imp.Session.Title)
	require.Equal(t, other.ProjectID, imp.Session.ProjectID)
	require.Equal(t, []string{"mode", "shellPolicy", "allowedCommands", "sandbox", "sandboxNetwork"}, imp.ResetSettings)
	require.Equal(t, "interactive", imp.Session.Mode)
	require.Equal(t, protocol.SessionSettings{ReasoningEffort: "high", Lang: "ko"}, imp.Session.Settings)

	orig, err := b.SessionView(ctx, protocol.SessionIDParams{SessionID: sid})
	require.NoError(t, err)
	got, err := b.SessionView(ctx, protocol.SessionIDParams{SessionID: imp.SessionID})
	require.NoError(t, err)
	require.Equal(t, orig.Messages, got.Messages)
	require.Len(t, got.Messages[0].AttachmentRefs, 1)
	ref := got.Messages[0].AttachmentRefs[0]
	bs, err := os.ReadFile(filepath.Join(b.opts.Store.SessionDir(imp.SessionID), filepath.FromSlash(ref.Path)))
	require.NoError(t, err)
	require.Equal(t, png, bs)
	origEvs, err := b.opts.Store.EventsAfter(ctx, sid, 0, 0)
	require.NoError(t, err)
	gotEvs, err := b.opts.Store.EventsAfter(ctx, imp.SessionID, 0, 0)
	require.NoError(t, err)
	require.Len(t, gotEvs, len(origEvs))
	for i := range gotEvs {
		require.Equal(t, int64(i+1), gotEvs[i].Seq)
		require.Equal(t, origEvs[i].Type, gotEvs[i].Type)
		require.JSONEq(t, string(origEvs[i].Data), string(gotEvs[i].Data))
	}

	// Its last turn can be forked, like a session's at rest.
	fork, err := b.ForkSession(ctx, protocol.SessionForkParams{SessionID: imp.SessionID})
	require.NoError(t, err)
	forked, err := b.SessionView(ctx, protocol.SessionIDParams{SessionID: fork.SessionID})
	require.NoError(t, err)
	require.Equal(t, orig.Messages, forked.Messages)

	_, err = b.StartTurn(ctx, imp.SessionID, "and now?", nil)
	require.NoError(t, err)
	runIdle(t, b, imp.SessionID)
	reqs := p.Requests()
	last := reqs[len(reqs)-1].Messages
	var texts []string
	for _, m := range last[1:] { // after the system prompt
		texts = append(texts, m.Role+":"+m.Content)
	}
	require.Equal(t, []string{"user:what is this?", "assistant:a cat", "user:and now?"}, texts)
}

// TestExportRefusedUntilAtRest: while a turn runs (or waits behind one)
// the export is a busy conflict and writes nothing.
func TestExportRefusedUntilAtRest(t *testing.T) {
	p := scripted.New(scripted.Response{Text: "one", Gate: "hold"}, scripted.Response{Text: "two"})
	b := newTestBackend(t, p)
	ctx := t.Context()
	proj, err := b.OpenProject(ctx, protocol.ProjectOpenParams{Path: t.TempDir(), VCS: protocol.VCSOff})
	require.NoError(t, err)
	sess, err := b.CreateSession(ctx, protocol.SessionCreateParams{ProjectID: proj.ProjectID, Model: "m"})
	require.NoError(t, err)
	_, err = b.StartTurn(ctx, sess.SessionID, "go", nil)
	require.NoError(t, err)
	<-p.Gate("hold").Reached()
	out := filepath.Join(t.TempDir(), "s.zqsession")
	_, err = b.ExportSession(ctx, protocol.SessionExportParams{SessionID: sess.SessionID, Path: out})
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorIs(t, err, engine.ErrBusy, "kind busy on the wire")
	require.ErrorContains(t, err, "running")
	_, err = os.Stat(out)
	require.ErrorIs(t, err, os.ErrNotExist)
	p.Gate("hold").Release()
	runIdle(t, b, sess.SessionID)
	_, err = b.ExportSession(ctx, protocol.SessionExportParams{SessionID: sess.SessionID, Path: out})
	require.NoError(t, err)
}

// TestExportPaths: a relative path, one in the data directory and a
// directory are refused; a link at the path is replaced by the file, its
// target untouched.
func TestExportPaths(t *testing.T) {
	b := newTestBackend(t, scripted.New())
	ctx := t.Context()
	proj, err := b.OpenProject(ctx, protocol.ProjectOpenParams{Path: t.TempDir(), VCS: protocol.VCSOff})
	require.NoError(t, err)
	sess, err := b.CreateSession(ctx, protocol.SessionCreateParams{ProjectID: proj.ProjectID, Model: "m"})
	require.NoError(t, err)
	export := func(path string) error {
		_, err := b.ExportSession(ctx, protocol.SessionExportParams{SessionID: sess.SessionID, Path: path})
		return err
	}
	var pe *protocol.ParamError
	err = export("relative/s.zqsession")
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "path", pe.Field)
	require.ErrorContains(t, err, "absolute")
	require.ErrorIs(t, export(filepath.Join(b.opts.DataDir, "s.zqsession")), ErrForbidden)
	require.ErrorIs(t, export(filepath.Join(b.opts.DataDir, "sessions", "x", "s.zqsession")), ErrInvalid, "no such folder")
	require.ErrorIs(t, export(filepath.Join(b.opts.DataDir, "sessions", "x.zqsession")), ErrForbidden, "below the data directory too")
	dir := t.TempDir()
	require.ErrorIs(t, export(dir), ErrInvalid)
	require.ErrorIs(t, export(filepath.Join(dir, "missing", "s.zqsession")), ErrInvalid)

	target := filepath.Join(t.TempDir(), "precious.txt")
	require.NoError(t, os.WriteFile(target, []byte("keep me"), 0o644))
	link := filepath.Join(dir, "s.zqsession")
	require.NoError(t, os.Symlink(target, link))
	require.NoError(t, export(link))
	fi, err := os.Lstat(link)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "the link was replaced by the file")
	bs, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(bs), "never followed")
}

// TestImportRefusesHostileFile: a file with a zip-slip entry, one with a
// bad manifest and one that is not a file are refused as invalid params
// naming path, and nothing is created: no session, no folder.
func TestImportRefusesHostileFile(t *testing.T) {
	b := newTestBackend(t, scripted.New())
	ctx := t.Context()
	proj, err := b.OpenProject(ctx, protocol.ProjectOpenParams{Path: t.TempDir(), VCS: protocol.VCSOff})
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name string, members map[string]string) string {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range []string{"manifest.json", "events.jsonl", "history.jsonl", "attachments/../../../evil.txt"} {
			if body, ok := members[n]; ok {
				w, err := zw.Create(n)
				require.NoError(t, err)
				_, err = io.WriteString(w, body)
				require.NoError(t, err)
			}
		}
		require.NoError(t, zw.Close())
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o600))
		return p
	}
	manifest := `{"format":"zqagent-session","version":1,"exportedAt":"2026-12-06T09:00:00Z","session":{"id":"x","title":"t","titleSource":"auto","model":"","mode":"","agent":"","provider":"","taskCount":0,"createdAt":"2026-12-06T09:00:00Z","updatedAt":"2026-12-06T09:00:00Z","settings":{}},"events":0,"messages":0,"attachments":[]}`
	good := write("good.zqsession", map[string]string{"manifest.json": manifest, "events.jsonl": "", "history.jsonl": ""})
	slip := write("slip.zqsession", map[string]string{"manifest.json": manifest, "events.jsonl": "", "history.jsonl": "", "attachments/../../../evil.txt": "pwned"})
	badJSON := write("bad.zqsession", map[string]string{"manifest.json": `{"format":"zqagent-session","version":1,`, "events.jsonl": "", "history.jsonl": ""})
	before, err := os.ReadDir(filepath.Join(b.opts.DataDir, "sessions"))
	if err != nil {
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	for _, tc := range []struct{ path, msg string }{
		{slip, "unexpected entry"},
		{badJSON, "manifest.json"},
		{dir, "directory"},
		{filepath.Join(dir, "missing.zqsession"), "no such file"},
		{"relative.zqsession", "absolute"},
	} {
		_, err := b.ImportSession(ctx, protocol.SessionImportParams{ProjectID: proj.ProjectID, Path: tc.path})
		var pe *protocol.ParamError
		require.ErrorAs(t, err, &pe, tc.path)
		require.Equal(t, "path", pe.Field)
		require.ErrorContains(t, err, tc.msg)
	}
	list, err := b.ListSessions(ctx, protocol.SessionListParams{ProjectID: proj.ProjectID})
	require.NoError(t, err)
	require.Empty(t, list.Sessions)
	after, err := os.ReadDir(filepath.Join(b.opts.DataDir, "sessions"))
	require.NoError(t, err)
	require.Equal(t, len(before), len(after), "no folder left behind")
	for _, d := range []string{dir, filepath.Dir(dir), b.opts.DataDir, filepath.Dir(b.opts.DataDir)} {
		_, err := os.Stat(filepath.Join(d, "evil.txt"))
		require.ErrorIs(t, err, os.ErrNotExist)
	}

	// The same file without the hostile entry is taken.
	imp, err := b.ImportSession(ctx, protocol.SessionImportParams{ProjectID: proj.ProjectID, Path: good})
	require.NoError(t, err)
	require.Equal(t, "t", imp.Session.Title)
	require.Empty(t, imp.ResetSettings)
	require.False(t, strings.HasPrefix(imp.SessionID, "import-"))

	// Values this sidecar does not know get the default, and are named.
	odd := strings.NewReplacer(`"mode":""`, `"mode":"yolo"`, `"agent":""`, `"agent":"nobody"`, `"provider":""`, `"provider":"nope"`,
		`"settings":{}`, `"settings":{"lang":"xx","vcs":"weird","shellPolicy":"workspace","reasoningEffort":"max","approvalTimeoutMs":5000}`).Replace(manifest)
	require.NotEqual(t, manifest, odd)
	imp, err = b.ImportSession(ctx, protocol.SessionImportParams{ProjectID: proj.ProjectID,
		Path: write("odd.zqsession", map[string]string{"manifest.json": odd, "events.jsonl": "", "history.jsonl": ""})})
	require.NoError(t, err)
	require.Equal(t, []string{"mode", "shellPolicy", "reasoningEffort", "lang", "vcs", "provider", "agent"}, imp.ResetSettings)
	require.Equal(t, "interactive", imp.Session.Mode)
	require.Equal(t, protocol.SessionSettings{ApprovalTimeoutMS: 5000, Lang: imp.Session.Settings.Lang}, imp.Session.Settings)
	require.NotEmpty(t, imp.Session.Settings.Lang, "the default language, stored as session.create stores it")

	// Settings of the wrong shape refuse the file.
	bad := strings.Replace(manifest, `"settings":{}`, `"settings":{"allowedCommands":"rm"}`, 1)
	_, err = b.ImportSession(ctx, protocol.SessionImportParams{ProjectID: proj.ProjectID,
		Path: write("bad-settings.zqsession", map[string]string{"manifest.json": bad, "events.jsonl": "", "history.jsonl": ""})})
	var pe *protocol.ParamError
	require.ErrorAs(t, err, &pe)
	require.ErrorContains(t, err, "session settings")
}
