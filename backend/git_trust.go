package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zqagent/sidecar/gitenv"
	"github.com/zqagent/sidecar/protocol"
	"github.com/zqagent/sidecar/store"
)

// Git trust: a project that a git worktree's or an enclosing repository
// holds (gitenv.Discover) becomes a git project only once the user
// confirmed exactly that repository (project.trustGit with the hash the
// card showed). The confirmation is kept in the sidecar's database under
// the setting "git.trust/<projectId>" — in the data dir, never in the
// project, so a repository cannot confirm itself — as the confirmed
// gitenv.Candidate: its resolved paths and its hash, which covers the
// bytes of the .git file, commondir and gitdir. It holds only while
// Discover finds the same hash: a rewritten .git file or a moved
// repository is untrusted again and needs a new answer.

// ErrGitStaleHash: project.trustGit with a hash the project's repository
// no longer has (or with none to trust).
var ErrGitStaleHash = errors.New("the project's repository changed since it was shown")

// gitTrustWriteTimeout bounds the write of a confirmation, which runs even
// when the request that asked for it is cancelled.
const gitTrustWriteTimeout = 5 * time.Second

func gitTrustKey(projectID string) string { return "git.trust/" + projectID }

// gitState is what a project's git looks like now.
type gitState struct {
	own       bool              // the project has a .git of its own
	candidate *gitenv.Candidate // the worktree's or enclosing repository; nil when none
	trusted   bool              // candidate is the one the user confirmed
}

// confirmed is the candidate when it is trusted, else nil.
func (g gitState) confirmed() *gitenv.Candidate {
	if g.trusted {
		return g.candidate
	}
	return nil
}

// gitStateOf discovers a project's repository and checks it against the
// stored confirmation. An unreadable confirmation counts as none.
func (b *Backend) gitStateOf(ctx context.Context, pr store.Project) gitState {
	g := gitState{own: isGitRepo(pr.Path)}
	c, err := gitenv.Discover(pr.Path)
	if err != nil || c == nil {
		return g
	}
	g.candidate = c
	if saved, err := b.gitTrust(ctx, pr.ID); err == nil && saved != nil && saved.Hash == c.Hash && saved.Project == c.Project {
		g.trusted = true
	}
	return g
}

// gitTrust reads a project's stored confirmation (nil when none).
func (b *Backend) gitTrust(ctx context.Context, projectID string) (*gitenv.Candidate, error) {
	raw, err := b.opts.Store.Setting(ctx, gitTrustKey(projectID))
	if errors.Is(err, store.ErrNotFound) || (err == nil && len(raw) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read git trust: %w", err)
	}
	var c gitenv.Candidate
	if err := json.Unmarshal(raw, &c); err != nil {
		b.log.Warn("git trust unreadable; the repository is untrusted", "project", projectID, "err", err)
		return nil, nil
	}
	return &c, nil
}

// setGitTrust stores c as a project's confirmation (nil removes it) and
// makes the project's loaded sessions rebuild their engines, so their git
// tools, commands and snapshots follow.
func (b *Backend) setGitTrust(ctx context.Context, projectID string, c *gitenv.Candidate) error {
	var raw json.RawMessage
	if c != nil {
		var err error
		if raw, err = json.Marshal(c); err != nil {
			return fmt.Errorf("save git trust: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gitTrustWriteTimeout)
	defer cancel()
	if err := b.opts.Store.SetSetting(ctx, gitTrustKey(projectID), raw); err != nil {
		return fmt.Errorf("save git trust: %w", err)
	}
	b.reloadEngines(projectID)
	return nil
}

// wireCandidate is a gitState's candidate on the wire (nil when none).
func (g gitState) wireCandidate() *protocol.GitCandidate {
	c := g.candidate
	if c == nil {
		return nil
	}
	return &protocol.GitCandidate{
		Kind: protocol.GitCandidateKind(c.Kind), Repository: c.Repository,
		GitDir: c.GitDir, CommonDir: c.CommonDir, Hash: c.Hash, Trusted: g.trusted,
	}
}

func (b *Backend) TrustGit(ctx context.Context, p protocol.ProjectTrustGitParams) (protocol.Project, error) {
	pr, err := b.opts.Store.Project(ctx, p.ProjectID)
	if err != nil {
		return protocol.Project{}, err
	}
	c, err := gitenv.Discover(pr.Path)
	if err != nil {
		return protocol.Project{}, fmt.Errorf("project.trustGit: %w", err)
	}
	switch {
	case c == nil:
		return protocol.Project{}, fmt.Errorf("project.trustGit: %w: %s is not held by a worktree's or an enclosing repository any more; open the project again", ErrGitStaleHash, pr.Path)
	case c.Hash != p.Hash:
		return protocol.Project{}, fmt.Errorf("project.trustGit: %w: shown %s, the repository now is %s (%s %s); open the project again", ErrGitStaleHash, p.Hash, c.Hash, c.Kind, c.Repository)
	}
	if err := b.setGitTrust(ctx, pr.ID, c); err != nil {
		return protocol.Project{}, err
	}
	ps, err := b.projectSettings(ctx, pr.ID)
	if err != nil {
		return protocol.Project{}, err
	}
	return b.projectInfo(ctx, pr, ps), nil
}

func (b *Backend) UntrustGit(ctx context.Context, p protocol.ProjectIDParams) (protocol.Project, error) {
	pr, err := b.opts.Store.Project(ctx, p.ProjectID)
	if err != nil {
		return protocol.Project{}, err
	}
	if err := b.setGitTrust(ctx, pr.ID, nil); err != nil {
		return protocol.Project{}, err
	}
	ps, err := b.projectSettings(ctx, pr.ID)
	if err != nil {
		return protocol.Project{}, err
	}
	return b.projectInfo(ctx, pr, ps), nil
}

// gitConfirmedOf is the confirmed repository of a project for its
// sessions' engines and trackers; nil when it has none (or its own .git).
func (b *Backend) gitConfirmedOf(ctx context.Context, projectID string) *gitenv.Candidate {
	pr, err := b.opts.Store.Project(ctx, projectID)
	if err != nil {
		return nil
	}
	return b.gitStateOf(ctx, pr).confirmed()
}
