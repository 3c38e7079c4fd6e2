package backend

import (
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
	ps := protocol.ProjectSettings{VCS: protocol.VCSMode(DefaultVCSMode)}
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
	return ps, nil
}

// setProjectVCS stores a project's vcs mode (already checked) and makes the
// project's loaded sessions rebuild their engines before their next turn.
func (b *Backend) setProjectVCS(ctx context.Context, projectID string, m vcs.Mode) (protocol.ProjectSettings, error) {
	ps, err := b.projectSettings(ctx, projectID)
	if err != nil {
		return ps, err
	}
	ps.VCS = protocol.VCSMode(m)
	raw, err := json.Marshal(ps)
	if err != nil {
		return ps, err
	}
	if err := b.opts.Store.SetSetting(ctx, projectSettingsKey(projectID), raw); err != nil {
		return ps, fmt.Errorf("project settings: %w", err)
	}
	b.reloadEngines(projectID)
	return ps, nil
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
	if p.VCS != nil {
		m, err := parseVCSMode(string(*p.VCS))
		if err != nil {
			return protocol.Project{}, err
		}
		if ps, err = b.setProjectVCS(ctx, pr.ID, m); err != nil {
			return protocol.Project{}, err
		}
	}
	return b.projectInfo(ctx, pr, ps), nil
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
