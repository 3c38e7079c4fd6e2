package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zqagent/sidecar/atomicfile"
	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/engine/permission"
	"github.com/zqagent/sidecar/llm"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/sandbox"
	"github.com/zqagent/sidecar/sessionfile"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/tools/media"
	"github.com/zqagent/sidecar/vcs"
)

// session.export and session.import: a session as one file (the format is
// package sessionfile's).
//
// An export is a consistent snapshot of a session at rest: the row, the
// history, the compaction state and the log are read in one read
// transaction, and a session whose turn is queued, running, waiting for an
// answer or suspended is refused (-32003 busy): its log would end in the
// middle of a turn. It carries the settings of protocol.SessionSettings
// and the change-tracking mode only (no other member of the settings
// object, no grants, nothing of the keychain or of an MCP server's
// config), the history without its system prompt, and the files of the
// session's attachments folder (not spilled tool results).
//
// An import trusts nothing in the file: sessionfile.Read checks it, and
// the settings that widen what runs without approval are not taken (the
// result names them). It creates everything or nothing: the attachments
// are written into a folder of their own (store.ImportDir), which becomes
// the new session's folder in the transaction that stores its rows, and is
// removed on any failure.

// exportLimits bound session.export and session.import.
var exportLimits = sessionfile.DefaultLimits

// sessionBusyError refuses an export of a session that is not at rest: a
// conflict of kind busy.
type sessionBusyError struct{ msg string }

func (e sessionBusyError) Error() string { return e.msg }

// Is makes it a conflict (-32003) of kind busy.
func (e sessionBusyError) Is(target error) bool {
	return target == ErrConflict || target == engine.ErrBusy
}

// ExportSession writes the session to the file at p.Path (see above).
func (b *Backend) ExportSession(ctx context.Context, p protocol.SessionExportParams) (protocol.SessionExportResult, error) {
	dir, name, err := b.exportTarget(p.Path)
	if err != nil {
		return protocol.SessionExportResult{}, err
	}
	st := b.opts.Store
	if h := b.loadedHost(p.SessionID); h != nil {
		if err := atRest(p.SessionID, h.turnState(), 0, 0); err != nil {
			return protocol.SessionExportResult{}, err
		}
		// The host's state may be a write ahead of the store's: let the
		// store catch up (the turn_end that stored it at rest).
		if err := st.Flush(ctx); err != nil {
			return protocol.SessionExportResult{}, err
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return protocol.SessionExportResult{}, protocol.InvalidField("path", fmt.Sprintf("folder %s: %v", dir, err))
	}
	defer root.Close()
	var man sessionfile.Manifest
	err = st.ReadForExport(ctx, p.SessionID, func(v store.ExportView) error {
		state, err := ParseTurnState(v.Session.Status)
		if err != nil {
			return err
		}
		if err := atRest(p.SessionID, state, v.Queued, v.Pending); err != nil {
			return err
		}
		x := sessionfile.Export{
			Session:    exportedSession(v.Session),
			History:    exportedHistory(v.Messages),
			Compaction: v.Compaction,
			Events: func(yield func(sessionfile.Event, error) bool) {
				for e, err := range v.Events {
					if !yield(sessionfile.Event{Seq: e.Seq, TurnID: e.TurnID, Type: e.Type, Data: e.Data, Time: e.Time}, err) {
						return
					}
				}
			},
		}
		atts, err := os.OpenRoot(filepath.Join(st.SessionDir(p.SessionID), media.AttachmentDir))
		switch {
		case errors.Is(err, fs.ErrNotExist): // no attachments
		case err != nil:
			return fmt.Errorf("session.export: attachments: %w", err)
		default:
			defer atts.Close()
			x.Attachments = atts.FS()
		}
		return atomicfile.WriteFunc(root, name, 0o600, atomicfile.SetMode, func(w io.Writer) error {
			man, err = sessionfile.Write(w, x, exportLimits)
			return err
		})
	})
	switch {
	case errors.Is(err, sessionfile.ErrTooLarge):
		return protocol.SessionExportResult{}, fmt.Errorf("%w: session %s is too large to export: %w", ErrConflict, p.SessionID, err)
	case err != nil:
		return protocol.SessionExportResult{}, err
	}
	path := filepath.Join(dir, name)
	res := protocol.SessionExportResult{Path: path, Events: man.Events, Messages: man.Messages, Attachments: len(man.Attachments)}
	if fi, err := root.Lstat(name); err == nil {
		res.Bytes = fi.Size()
	}
	return res, nil
}

// atRest refuses a session whose turns are not at rest.
func atRest(sessionID string, state TurnState, queued, pending int) error {
	switch {
	case state != StateIdle && state != StateInterrupted:
		return sessionBusyError{fmt.Sprintf("session %s is %s: export it when its turn has ended", sessionID, state)}
	case queued > 0:
		return sessionBusyError{fmt.Sprintf("session %s has %d queued turns: export it when they have run", sessionID, queued)}
	case pending > 0:
		return sessionBusyError{fmt.Sprintf("session %s has %d unanswered requests: export it when they are answered", sessionID, pending)}
	}
	return nil
}

// exportTarget checks session.export's path: absolute, in an existing
// folder outside the data directory, not a directory itself. A link at
// the path is replaced by the file (the write renames over it), never
// followed.
func (b *Backend) exportTarget(path string) (dir, name string, err error) {
	clean, err := absPath(path)
	if err != nil {
		return "", "", err
	}
	dir, name = filepath.Dir(clean), filepath.Base(clean)
	if name == string(filepath.Separator) || name == "." || name == ".." {
		return "", "", protocol.InvalidField("path", "names no file")
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return "", "", protocol.InvalidField("path", fmt.Sprintf("folder %s does not exist", dir))
	}
	if b.inDataDir(dir) {
		return "", "", fmt.Errorf("%w: %s is inside the sidecar's data directory", ErrForbidden, clean)
	}
	if fi, err := os.Lstat(clean); err == nil && fi.IsDir() {
		return "", "", protocol.InvalidField("path", clean+" is a directory")
	}
	return dir, name, nil
}

// absPath checks that path is absolute and returns it cleaned.
func absPath(path string) (string, error) {
	if strings.ContainsRune(path, 0) {
		return "", protocol.InvalidField("path", "contains a NUL byte")
	}
	if !filepath.IsAbs(path) {
		return "", protocol.InvalidField("path", "must be an absolute path")
	}
	return filepath.Clean(path), nil
}

// inDataDir reports whether dir (an existing folder) is the data directory
// or inside it, links resolved.
func (b *Backend) inDataDir(dir string) bool {
	if b.opts.DataDir == "" {
		return false
	}
	data, err := filepath.EvalSymlinks(b.opts.DataDir)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return true // cannot tell: refuse
	}
	return confine.Within(data, real)
}

// exportedSettingKeys are the members of a session's settings object an
// export carries: protocol.SessionSettings's and the change-tracking mode.
// Any other member (another writer's) stays behind: it may hold what is
// not ours to copy.
func exportedSettingKeys() []string { return append(slices.Clone(settingsKeys()), vcsSettingKey) }

func exportedSession(ss store.Session) sessionfile.Session {
	obj := map[string]json.RawMessage{}
	_ = json.Unmarshal(ss.Settings, &obj) // a bad object exports as {}
	out := map[string]json.RawMessage{}
	for _, k := range exportedSettingKeys() {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	settings, err := json.Marshal(out)
	if err != nil {
		settings = json.RawMessage("{}")
	}
	var usage json.RawMessage
	if len(ss.Usage) > 0 && json.Valid(ss.Usage) && strings.HasPrefix(strings.TrimSpace(string(ss.Usage)), "{") {
		usage = ss.Usage
	}
	return sessionfile.Session{
		ID: ss.ID, Title: ss.Title, TitleSource: ss.TitleSource, Model: ss.Model, Mode: ss.Mode, Agent: ss.Agent,
		Provider: ss.Provider, TaskCount: ss.TaskCount, CreatedAt: ss.CreatedAt, UpdatedAt: ss.UpdatedAt,
		Settings: settings, Usage: usage,
	}
}

// exportedHistory is the history without its system prompt (the importing
// session's agent writes its own) and without inline attachments.
func exportedHistory(msgs []llm.Message) []llm.Message {
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		msgs = msgs[1:]
	}
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		m.Attachments = nil
		out[i] = m
	}
	return out
}

// ImportSession reads the file at p.Path into a new session of project
// p.ProjectID (see above).
func (b *Backend) ImportSession(ctx context.Context, p protocol.SessionImportParams) (protocol.SessionImportResult, error) {
	if _, err := b.projectOf(ctx, p.ProjectID); err != nil {
		return protocol.SessionImportResult{}, err
	}
	path, err := absPath(p.Path)
	if err != nil {
		return protocol.SessionImportResult{}, err
	}
	f, fi, err := confine.OpenReadPath(path)
	if err != nil {
		return protocol.SessionImportResult{}, protocol.InvalidField("path", err.Error())
	}
	defer f.Close()
	if fi.IsDir() {
		return protocol.SessionImportResult{}, protocol.InvalidField("path", path+" is a directory")
	}
	st := b.opts.Store
	tmp, err := st.ImportDir()
	if err != nil {
		return protocol.SessionImportResult{}, err
	}
	defer os.RemoveAll(tmp) // gone already when the import moved it into place
	attDir := filepath.Join(tmp, media.AttachmentDir)
	if err := os.Mkdir(attDir, 0o700); err != nil {
		return protocol.SessionImportResult{}, fmt.Errorf("session.import: %w", err)
	}
	root, err := os.OpenRoot(attDir)
	if err != nil {
		return protocol.SessionImportResult{}, fmt.Errorf("session.import: %w", err)
	}
	c, err := sessionfile.Read(f, fi.Size(), root, exportLimits)
	root.Close()
	if err != nil {
		if errors.Is(err, sessionfile.ErrInvalid) || errors.Is(err, sessionfile.ErrTooLarge) || errors.Is(err, sessionfile.ErrVersion) {
			return protocol.SessionImportResult{}, protocol.InvalidField("path", err.Error())
		}
		return protocol.SessionImportResult{}, fmt.Errorf("session.import: %w", err)
	}
	ss, reset, err := b.importedSession(ctx, p.ProjectID, c.Manifest.Session)
	if err != nil {
		return protocol.SessionImportResult{}, err
	}
	evs := make([]store.Event, len(c.Events))
	for i, e := range c.Events {
		evs[i] = store.Event{TurnID: e.TurnID, Type: e.Type, Data: e.Data, Time: e.Time}
	}
	in := store.ImportInput{Session: ss, Events: evs, History: c.History, Compaction: c.Compaction, Files: tmp,
		Mark: lastTurnMark(evs, len(c.History))}
	ss, err = st.ImportSession(ctx, in)
	if err != nil {
		return protocol.SessionImportResult{}, err
	}
	return protocol.SessionImportResult{SessionID: ss.ID, Session: b.sessionInfo(ctx, ss), ResetSettings: reset}, nil
}

// importedSession is the row of the new session: the file's title and
// settings, less those that widen what runs without approval and those
// this sidecar does not know (a value of a newer version, a profile or
// agent it does not have): those get the default, and reset lists them.
// Settings that are not a JSON object of the right shape refuse the file.
func (b *Backend) importedSession(ctx context.Context, projectID string, in sessionfile.Session) (store.Session, []string, error) {
	var set protocol.SessionSettings
	if err := json.Unmarshal(in.Settings, &set); err != nil {
		return store.Session{}, nil, protocol.InvalidField("path", fmt.Sprintf("%s: session settings: %v", sessionfile.ManifestName, err))
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(in.Settings, &obj) // an object: Unmarshal into set took it
	reset := []string{}
	mode, err := permission.ParseMode(in.Mode)
	if err != nil || mode == permission.ModeAuto {
		mode = permission.ModeInteractive
		reset = append(reset, "mode")
	}
	if policy, err := permission.ParseShellPolicy(set.ShellPolicy); err != nil || policy != permission.PolicyApprove {
		set.ShellPolicy = ""
		reset = append(reset, "shellPolicy")
	}
	if len(set.AllowedCommands) > 0 {
		set.AllowedCommands = nil
		reset = append(reset, "allowedCommands")
	}
	if sb, err := sandbox.ParseMode(set.Sandbox); err != nil || sb == sandbox.ModeOff {
		set.Sandbox = ""
		reset = append(reset, "sandbox")
	}
	if set.SandboxNetwork {
		set.SandboxNetwork = false
		reset = append(reset, "sandboxNetwork")
	}
	if set.ApprovalTimeoutMS < 0 {
		set.ApprovalTimeoutMS = 0
		reset = append(reset, "approvalTimeoutMs")
	}
	if validEffort(set.ReasoningEffort) != nil {
		set.ReasoningEffort = ""
		reset = append(reset, "reasoningEffort")
	}
	if set.Lang, err = parseLang(set.Lang); err != nil {
		set.Lang = ""
		reset = append(reset, "lang")
	}
	if set.Lang == "" {
		set.Lang = b.defaultLang() // kept, as session.create keeps it
	}
	settings := withSettings(nil, set)
	if raw, ok := obj[vcsSettingKey]; ok {
		if m, err := importedVCSMode(raw); err == nil {
			settings = withVCSMode(settings, m)
		} else {
			reset = append(reset, "vcs")
		}
	}
	provider := in.Provider
	if _, err := b.profile(ctx, provider); err != nil {
		provider = ""
		reset = append(reset, "provider")
	}
	agent := in.Agent
	if _, err := b.agent(ctx, agent); err != nil {
		agent = ""
		reset = append(reset, "agent")
	}
	return store.Session{
		ProjectID: projectID, Title: in.Title, TitleSource: in.TitleSource, Model: in.Model, Mode: string(mode),
		Agent: agent, Provider: provider, TaskCount: in.TaskCount, Settings: settings, Usage: in.Usage,
	}, reset, nil
}

// importedVCSMode reads the change-tracking mode of a file's settings.
func importedVCSMode(raw json.RawMessage) (vcs.Mode, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return parseVCSMode(s)
}

// lastTurnMark is the mark of an imported session's last finished turn (a
// turn_end whose turn has a turn_start), less the turns a session_rewound
// dropped: the imported history, of n messages, is that turn's (a session
// at rest stores its last turn's history, and a rewind cuts it back to
// just before the first dropped turn), so session.fork can fork it.
// Earlier turns get none: where their history ended is not in the file.
// Nil when no turn finished.
func lastTurnMark(evs []store.Event, n int) *store.TurnMark {
	started := map[string]bool{}
	for _, e := range evs {
		if e.Type == string(protocol.EventTurnStart) && e.TurnID != "" {
			started[e.TurnID] = true
		}
	}
	live := map[string]bool{}
	for _, t := range liveTurns(evs) {
		live[t.TurnID] = true
	}
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		if e.Type != string(protocol.EventTurnEnd) || e.TurnID == "" {
			continue
		}
		if started[e.TurnID] && !live[e.TurnID] {
			continue // dropped by a rewind: the history is no longer its
		}
		if !started[e.TurnID] {
			return nil
		}
		return &store.TurnMark{TurnID: e.TurnID, Messages: n, Seq: int64(i + 1)}
	}
	return nil
}
