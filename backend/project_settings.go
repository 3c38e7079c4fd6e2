package backend

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
	"github.com/zqagent/sidecar/vcs"
)

func projectSettingsKey(projectID string) string { return "project.settings/" + projectID }

// projectSettings reads a project's settings, defaults filled in.
func (b *Backend) projectSettings(ctx context.Context, projectID string) (protocol.ProjectSettings, error) {
	ps := protocol.ProjectSettings{VCS: protocol.VCSMode(DefaultVCSMode), SnapshotCapBytes: vcs.DefaultCapBytes}
	raw, err := b.opts.Store.Setting(ctx, projectSettingsKey(projectID))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ps, nil
	case err != nil:
		return ps, fmt.Errorf("project settings: %w", err)
	}
	var saved protocol.ProjectSettings
	if err := json.Unmarshal(raw, &saved); err != nil {
		b.log.Warn("project settings unreadable; using the defaults", "project", projectID, "err", err)
		return ps, nil
	}
	if m, err := vcs.ParseMode(string(saved.VCS)); err == nil && saved.VCS != "" {
		ps.VCS = protocol.VCSMode(m)
	}
	if saved.SnapshotCapBytes != 0 && vcs.CheckCap(saved.SnapshotCapBytes) == nil {
		ps.SnapshotCapBytes = saved.SnapshotCapBytes
	}
	return ps, nil
}

// saveProjectSettings stores a project's settings (already checked) and
// makes the project's loaded sessions rebuild their engines before their
// next turn. A default stays unstored, so it follows the default.
func (b *Backend) saveProjectSettings(ctx context.Context, projectID string, ps protocol.ProjectSettings) error {
	stored := ps
	if stored.SnapshotCapBytes == vcs.DefaultCapBytes {
		stored.SnapshotCapBytes = 0
	}
	raw, err := json.Marshal(stored)
	if err != nil {
		return err
	}
	if err := b.opts.Store.SetSetting(ctx, projectSettingsKey(projectID), raw); err != nil {
		return fmt.Errorf("project settings: %w", err)
	}
	b.reloadEngines(projectID)
	return nil
}

// setProjectVCS stores a project's vcs mode (already checked).
func (b *Backend) setProjectVCS(ctx context.Context, projectID string, m vcs.Mode) (protocol.ProjectSettings, error) {
	ps, err := b.projectSettings(ctx, projectID)
	if err != nil {
		return ps, err
	}
	ps.VCS = protocol.VCSMode(m)
	return ps, b.saveProjectSettings(ctx, projectID, ps)
}

func (b *Backend) SetProjectSettings(ctx context.Context, p protocol.ProjectSetSettingsParams) (protocol.Project, error) {
	pr, err := b.opts.Store.Project(ctx, p.ProjectID)
	if err != nil {
		return protocol.Project{}, err
	}
	ps, err := b.projectSettings(ctx, pr.ID)
	if err != nil {
		return protocol.Project{}, err
	}
	next := ps
	if p.VCS != nil {
		m, err := parseVCSMode(string(*p.VCS))
		if err != nil {
			return protocol.Project{}, err
		}
		next.VCS = protocol.VCSMode(m)
	}
	if c := p.SnapshotCapBytes; c != nil {
		if *c < 0 || vcs.CheckCap(*c) != nil {
			return protocol.Project{}, protocol.InvalidField("snapshotCapBytes",
				fmt.Sprintf("must be 0 (the default, %d) or at least %d", vcs.DefaultCapBytes, vcs.MinCapBytes))
		}
		next.SnapshotCapBytes = cmp.Or(*c, vcs.DefaultCapBytes)
	}
	if next != ps {
		if err := b.saveProjectSettings(ctx, pr.ID, next); err != nil {
			return protocol.Project{}, err
		}
	}
	return b.projectInfo(ctx, pr, next), nil
}

// vcsLimitsOf are the snapshot limits of a project's sessions.
func (b *Backend) vcsLimitsOf(ctx context.Context, projectID string) vcs.Limits {
	ps, err := b.projectSettings(ctx, projectID)
	if err != nil {
		b.log.Warn("read project settings", "project", projectID, "err", err)
	}
	return vcs.Limits{CapBytes: ps.SnapshotCapBytes}
}

// vcsModeOf is a session's change tracking: its own vcs when it was created
// with one, else its project's.
func (b *Backend) vcsModeOf(ctx context.Context, ss store.Session) vcs.Mode {
	if m, ok := sessionVCSMode(ss); ok {
		return m
	}
	ps, err := b.projectSettings(ctx, ss.ProjectID)
	if err != nil {
		b.log.Warn("read project settings", "project", ss.ProjectID, "err", err)
		return DefaultVCSMode
	}
	m, err := vcs.ParseMode(string(ps.VCS))
	if err != nil {
		return DefaultVCSMode
	}
	return m
}
