package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/zqagent/sidecar/engine"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/vcs"
)

// DefaultVCSMode is the change tracking of a project that names none: auto
// (the workspace's own repository with private refs when it is a git work
// tree of its own, else a shadow repository in <data-dir>/vcs). Without a git
// binary it is off.
const DefaultVCSMode = vcs.ModeAuto

// vcsSettingKey is the member of a session's settings object that holds its
// change-tracking mode.
const vcsSettingKey = "vcs"

// parseVCSMode checks session.create's vcs member ("" is DefaultVCSMode).
func parseVCSMode(raw string) (vcs.Mode, error) {
	if raw == "" {
		return DefaultVCSMode, nil
	}
	m, err := vcs.ParseMode(raw)
	if err != nil {
		return "", protocol.InvalidField("vcs", "must be off, auto, native or shadow")
	}
	return m, nil
}

// sessionVCSMode reads the change-tracking mode a session was created with
// from its settings; ok is false when it has none (its project's applies).
func sessionVCSMode(ss store.Session) (m vcs.Mode, ok bool) {
	var obj struct {
		VCS string `json:"vcs"`
	}
	_ = json.Unmarshal(ss.Settings, &obj) // best effort, like sessionSettings
	m, err := vcs.ParseMode(obj.VCS)
	if err != nil || obj.VCS == "" {
		return "", false
	}
	return m, true
}

// withVCSMode returns a settings object with the vcs member set, keeping the
// other members.
func withVCSMode(raw json.RawMessage, m vcs.Mode) json.RawMessage {
	obj := map[string]json.RawMessage{}
	_ = json.Unmarshal(raw, &obj) // a bad object is replaced
	if obj == nil {
		obj = map[string]json.RawMessage{}
	}
	b, err := json.Marshal(string(m))
	if err != nil {
		return raw
	}
	obj[vcsSettingKey] = b
	out, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return out
}

// sessionVCS returns the change tracker of a session in its project's
// workspace. Every SessionVCS of a session shares its state (package vcs),
// so this one and the engine's hook stay consistent.
func (b *Backend) sessionVCS(ctx context.Context, ss store.Session, workspace string) *vcs.SessionVCS {
	plan := vcs.ResolvePlan(ctx, workspace, vcs.Config{Mode: b.vcsModeOf(ctx, ss), ShadowRoot: b.shadowRoot(),
		Confirmed: b.gitConfirmedOf(ctx, ss.ProjectID), Limits: b.vcsLimitsOf(ctx, ss.ProjectID)})
	return vcs.NewSession(plan, ss.ID)
}

// shadowRoot is the folder of the shadow repositories: <data-dir>/vcs
// ("" without a data dir, which turns shadow mode off).
func (b *Backend) shadowRoot() string {
	if b.opts.DataDir == "" {
		return ""
	}
	return filepath.Join(b.opts.DataDir, "vcs")
}

// vcsHook is the engine hook that snapshots each turn, nil when tracking is
// off for the session.
func (b *Backend) vcsHook(ctx context.Context, ss store.Session, workspace string) engine.Hook {
	sv := b.sessionVCS(ctx, ss, workspace)
	if !sv.Enabled() {
		b.log.Debug("change tracking off", "session", ss.ID, "status", sv.Plan().Status)
		return nil
	}
	return engine.NewVCSHook(sv)
}

// vcsOf returns a session's tracker for the vcs.* methods.
func (b *Backend) vcsOf(ctx context.Context, sessionID string) (*vcs.SessionVCS, error) {
	ss, err := b.opts.Store.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	pr, err := b.opts.Store.Project(ctx, ss.ProjectID)
	if err != nil {
		return nil, err
	}
	return b.sessionVCS(ctx, ss, pr.Path), nil
}

func (b *Backend) VCSTurns(ctx context.Context, p protocol.SessionIDParams) (protocol.VCSTurnsResult, error) {
	sv, err := b.vcsOf(ctx, p.SessionID)
	if err != nil {
		return protocol.VCSTurnsResult{}, err
	}
	turns, err := sv.ListTurns(ctx)
	if err != nil {
		return protocol.VCSTurnsResult{}, fmt.Errorf("vcs.turns %s: %w", p.SessionID, err)
	}
	out := make([]protocol.VCSTurn, len(turns))
	for i, t := range turns {
		files := make([]protocol.FileChange, len(t.Files))
		for j, f := range t.Files {
			files[j] = protocol.FileChange(f)
		}
		omitted := make([]protocol.OmittedFile, len(t.Omitted))
		for j, o := range t.Omitted {
			omitted[j] = protocol.OmittedFile{Path: o.Path, Size: o.Size, Reason: protocol.OmittedReason(o.Reason)}
		}
		out[i] = protocol.VCSTurn{Number: t.Number, Commit: t.Commit, Status: t.Status, Time: t.Time, Files: files,
			MoreFiles: t.MoreFiles, Expired: t.Expired, Omitted: omitted, OmittedMore: t.OmittedMore, TurnID: t.TurnID}
	}
	pl := sv.Plan()
	return protocol.VCSTurnsResult{Turns: out, Plan: protocol.VCSPlan{Requested: string(pl.Requested), Mode: string(pl.Mode), Status: pl.Status}}, nil
}

func (b *Backend) VCSDiff(ctx context.Context, p protocol.VCSDiffParams) (protocol.VCSDiffResult, error) {
	if p.Turn < 1 {
		return protocol.VCSDiffResult{}, protocol.InvalidField("turn", "must be 1 or more")
	}
	sv, err := b.vcsOf(ctx, p.SessionID)
	if err != nil {
		return protocol.VCSDiffResult{}, err
	}
	diff, err := sv.DiffTurn(ctx, p.Turn)
	if err != nil {
		return protocol.VCSDiffResult{}, fmt.Errorf("vcs.diff %s turn %d: %w", p.SessionID, p.Turn, err)
	}
	return protocol.VCSDiffResult{Diff: diff}, nil
}

func (b *Backend) VCSRestore(ctx context.Context, p protocol.VCSRestoreParams) (protocol.VCSRestoreResult, error) {
	if p.Turn < 1 {
		return protocol.VCSRestoreResult{}, protocol.InvalidField("turn", "must be 1 or more")
	}
	if h := b.loadedHost(p.SessionID); h != nil && h.Running() && !p.DryRun {
		return protocol.VCSRestoreResult{}, fmt.Errorf("%w: session %s is running a turn; interrupt it before restoring", ErrConflict, p.SessionID)
	}
	sv, err := b.vcsOf(ctx, p.SessionID)
	if err != nil {
		return protocol.VCSRestoreResult{}, err
	}
	res, err := sv.RestoreTurn(ctx, p.Turn, vcs.RestoreOptions{Paths: p.Paths, DryRun: p.DryRun})
	if err != nil {
		return protocol.VCSRestoreResult{}, fmt.Errorf("vcs.restore %s turn %d: %w", p.SessionID, p.Turn, err)
	}
	for _, l := range []*[]string{&res.Restored, &res.Overwritten, &res.Deleted, &res.Missing, &res.Skipped} {
		if *l == nil {
			*l = []string{}
		}
	}
	return protocol.VCSRestoreResult(res), nil
}

// VCSUsage is a project's snapshot storage: its shadow repository and its
// own repository's agent refs (the cap applies to each), with the
// project's cap.
func (b *Backend) VCSUsage(ctx context.Context, p protocol.ProjectIDParams) (protocol.VCSUsageResult, error) {
	pr, err := b.opts.Store.Project(ctx, p.ProjectID)
	if err != nil {
		return protocol.VCSUsageResult{}, err
	}
	lim := b.vcsLimitsOf(ctx, pr.ID)
	res := protocol.VCSUsageResult{CapBytes: lim.CapBytes}
	confirmed := b.gitConfirmedOf(ctx, pr.ID)
	for _, mode := range []vcs.Mode{vcs.ModeShadow, vcs.ModeNative} {
		plan := vcs.ResolvePlan(ctx, pr.Path, vcs.Config{Mode: mode, ShadowRoot: b.shadowRoot(), Confirmed: confirmed, Limits: lim})
		if !plan.Enabled() {
			continue // no git, no data dir, or no repository of its own
		}
		u, err := vcs.ProjectUsage(ctx, plan)
		if err != nil {
			return protocol.VCSUsageResult{}, fmt.Errorf("vcs.usage %s: %w", pr.ID, err)
		}
		res.Bytes += u.Bytes
		res.Turns += u.Turns
		res.ExpiredTurns += u.ExpiredTurns
	}
	return res, nil
}
