package vcs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zqagent/sidecar/atomicfile"
	"github.com/zqagent/sidecar/gitenv"
)

// excludeRules are never snapshotted, on top of the workspace's .gitignore
// files and the repository's info/exclude.
const excludeRules = `# written by zqagent: agent state, git directories and dependencies are never snapshotted
.agent/
.git/
node_modules/
`

// initMu serializes the creation of shadow repositories in this process.
var initMu sync.Mutex

// sessions holds the state of each repository and session id, shared by
// every SessionVCS of that session in this process (say, the engine's hook
// and the one serving vcs.restore), so that their git calls never interleave
// and they agree on head and numbering. Entries are small and never removed.
var sessions sync.Map // gitDir + "\x00" + ref component -> *sessionState

// sessionState is the cached view of a session's refs.
type sessionState struct {
	mu       sync.Mutex // guards the fields below and serializes the session's git calls
	prepared bool       // repository and private directory exist
	loaded   bool       // head, headTree and last match the refs
	head     string     // newest snapshot commit; "" = none
	headTree string     // head's tree
	last     int        // highest turn number; 0 = none
}

// SessionVCS tracks one session's turns (the seed's SessionVcs).
type SessionVCS struct {
	plan Plan
	id   string
	now  func() time.Time
	st   *sessionState // shared by all SessionVCS of this repository and session
	repo *repoState    // shared by all SessionVCS of this repository
}

// NewSession returns the tracker of session sessionID under plan. It does no
// I/O: the repository is prepared and the refs read on first use, so a
// session resumed after a restart continues its numbering.
func NewSession(plan Plan, sessionID string) *SessionVCS {
	s := &SessionVCS{plan: plan, id: sessionID, now: time.Now, st: new(sessionState), repo: repoLocks(plan)}
	if plan.Enabled() {
		st, _ := sessions.LoadOrStore(plan.GitDir+"\x00"+refComponent(sessionID), s.st)
		s.st = st.(*sessionState)
	}
	return s
}

// Plan returns the session's plan.
func (s *SessionVCS) Plan() Plan { return s.plan }

// SessionID returns the session's id.
func (s *SessionVCS) SessionID() string { return s.id }

// ns is the session's ref namespace: AgentRef, or under refs/worktree/
// in a confirmed linked worktree (Plan.refPrefix).
func (s *SessionVCS) ns() string { return s.plan.refPrefix() + refComponent(s.id) }

// Enabled reports whether the session tracks anything.
func (s *SessionVCS) Enabled() bool { return s != nil && s.plan.Enabled() }

// git returns the runner for the session's repository and private index.
func (s *SessionVCS) git() *runner {
	return &runner{
		bin:       s.plan.Git,
		dir:       s.plan.Workspace,
		repo:      gitenv.Repo{Project: s.plan.Workspace, GitDir: s.plan.GitDir, WorkTree: s.plan.workTree()},
		indexFile: s.plan.IndexPath(s.id),
		excludes:  filepath.Join(s.plan.privateDir(), "exclude"),
	}
}

// snapshotGit is git() for commands that read the work tree (git add): in
// native mode the repository is opened again, so that a .git or
// core.worktree changed to point outside since the plan is refused, and the
// filter drivers its config names now are blanked. The shadow repository's
// config is the sidecar's own and names none.
func (s *SessionVCS) snapshotGit(ctx context.Context) (*runner, error) {
	g := s.git()
	if s.plan.Mode != ModeNative {
		return g, nil
	}
	var (
		repo gitenv.Repo
		err  error
	)
	if c := s.plan.Confirmed; c != nil {
		repo, err = gitenv.OpenConfirmed(ctx, s.plan.Git, *c)
	} else {
		repo, err = gitenv.Open(ctx, s.plan.Git, s.plan.Workspace)
	}
	if err != nil {
		return nil, err
	}
	if repo.GitDir != s.plan.GitDir {
		return nil, fmt.Errorf("%w: the repository moved from %s to %s", ErrGit, s.plan.GitDir, repo.GitDir)
	}
	g.repo = repo
	return g, nil
}

// BeginTurn snapshots the workspace before a turn, so that the turn's own
// changes are what CommitTurn records. When the workspace changed since the
// last snapshot (the first turn, or edits made outside the agent) it records
// an unnumbered base snapshot. It does nothing when tracking is off. When
// the project's snapshot storage is then over its cap, the oldest turns
// expire (collect).
func (s *SessionVCS) BeginTurn(ctx context.Context) error {
	if !s.Enabled() {
		return nil
	}
	if err := s.beginTurn(ctx); err != nil {
		return err
	}
	if err := s.collect(ctx); err != nil {
		return fmt.Errorf("begin turn: %w", err)
	}
	return nil
}

func (s *SessionVCS) beginTurn(ctx context.Context) error {
	defer s.lock()()
	if err := s.loadLocked(ctx); err != nil {
		return fmt.Errorf("begin turn: %w", err)
	}
	if _, _, err := s.baseLocked(ctx, "snapshot before a turn", "base"); err != nil {
		return fmt.Errorf("begin turn: %w", err)
	}
	return nil
}

// baseLocked snapshots the workspace and, when it differs from head, records
// it as an unnumbered snapshot. It returns the workspace's tree and the
// files the snapshot left out.
func (s *SessionVCS) baseLocked(ctx context.Context, subject, kind string) (string, []OmittedFile, error) {
	tree, omitted, err := s.snapshotLocked(ctx)
	if err != nil {
		return "", nil, err
	}
	if err := s.recordBaseLocked(ctx, tree, omitted, subject, kind); err != nil {
		return "", nil, err
	}
	return tree, omitted, nil
}

// recordBaseLocked records the workspace's tree (from snapshotLocked) as
// an unnumbered snapshot when it differs from head.
func (s *SessionVCS) recordBaseLocked(ctx context.Context, tree string, omitted []OmittedFile, subject, kind string) error {
	if s.st.head != "" && tree == s.st.headTree {
		return nil
	}
	msg := message(subject, s.id, append([]string{"Agent-Kind: " + kind}, omittedTrailers(omitted)...)...)
	commit, err := s.commitLocked(ctx, tree, msg)
	if err != nil {
		return err
	}
	if err := s.updateRefsLocked(ctx, s.headUpdate(commit)); err != nil {
		return err
	}
	s.st.head, s.st.headTree = commit, tree
	return nil
}

// CommitTurn snapshots the workspace after a turn. When something changed
// since the previous snapshot the turn gets the next number (from 1) under
// refs/agent/<session>/turns/<n>; a turn that changed nothing gets no number.
// status is the turn's end status ("completed", "interrupted", ...). Without
// a previous snapshot (no BeginTurn ever) the whole workspace counts as the
// turn's change. Files over the Limits are left out and listed in the
// turn (Turn.Omitted). When the project's snapshot storage is then over
// its cap, the oldest turns expire (collect). It does nothing when
// tracking is off.
func (s *SessionVCS) CommitTurn(ctx context.Context, status string) error {
	return s.CommitTurnID(ctx, status, "")
}

// CommitTurnID is CommitTurn for the turn turnID of the session's host:
// the snapshot records it (Turn.TurnID), so a turn id maps to its numbered
// snapshots however their commits are written again (expiry).
func (s *SessionVCS) CommitTurnID(ctx context.Context, status, turnID string) error {
	if !s.Enabled() {
		return nil
	}
	if err := s.commitTurn(ctx, status, turnID); err != nil {
		return err
	}
	if err := s.collect(ctx); err != nil {
		return fmt.Errorf("commit turn: %w", err)
	}
	return nil
}

func (s *SessionVCS) commitTurn(ctx context.Context, status, turnID string) error {
	defer s.lock()()
	if err := s.loadLocked(ctx); err != nil {
		return fmt.Errorf("commit turn: %w", err)
	}
	tree, omitted, err := s.snapshotLocked(ctx)
	if err != nil {
		return fmt.Errorf("commit turn: %w", err)
	}
	if s.st.head != "" && tree == s.st.headTree {
		return nil
	}
	n := s.st.last + 1
	status = oneLine(status)
	trailers := []string{"Agent-Kind: turn", fmt.Sprintf("Agent-Turn: %d", n), "Agent-Status: " + status}
	if id := oneLine(turnID); id != "" {
		trailers = append(trailers, "Agent-Turn-Id: "+id)
	}
	msg := message(fmt.Sprintf("turn %d: %s", n, status), s.id, append(trailers, omittedTrailers(omitted)...)...)
	commit, err := s.commitLocked(ctx, tree, msg)
	if err != nil {
		return fmt.Errorf("commit turn: %w", err)
	}
	if err := s.updateRefsLocked(ctx, "create "+turnRef(s.ns(), n)+" "+commit, s.headUpdate(commit)); err != nil {
		return fmt.Errorf("commit turn: %w", err)
	}
	s.st.head, s.st.headTree, s.st.last = commit, tree, n
	return nil
}

// Forget deletes the session's refs, private index and exclude file. Files
// in the workspace are not touched. The snapshot objects become
// unreachable: a shadow repository frees them at once, a native one's own
// git gc later (the sidecar never prunes the user's repository).
func (s *SessionVCS) Forget(ctx context.Context) error {
	if !s.Enabled() {
		return nil
	}
	if err := s.forget(ctx); err != nil {
		return err
	}
	if err := s.free(ctx); err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	return nil
}

func (s *SessionVCS) forget(ctx context.Context) error {
	defer s.lock()()
	if s.plan.Mode == ModeShadow {
		if _, err := os.Stat(filepath.Join(s.plan.GitDir, "HEAD")); errors.Is(err, fs.ErrNotExist) {
			return nil // no shadow repository, nothing to forget
		}
	}
	if err := s.ensureLocked(ctx); err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	refs, err := s.refsLocked(ctx)
	if err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	var lines []string
	for _, r := range refs {
		lines = append(lines, "delete "+r.name+" "+r.oid)
	}
	if len(lines) > 0 {
		if err := s.updateRefsLocked(ctx, lines...); err != nil {
			return fmt.Errorf("forget: %w", err)
		}
	}
	if err := s.removePrivate(filepath.Base(s.plan.IndexPath(s.id)), "exclude-"+refComponent(s.id)); err != nil {
		return fmt.Errorf("forget: %w", err)
	}
	s.st.loaded, s.st.head, s.st.headTree, s.st.last = false, "", "", 0
	return nil
}

// headUpdate is the update-ref line that moves head to commit.
func (s *SessionVCS) headUpdate(commit string) string {
	if s.st.head == "" {
		return "create " + headRef(s.ns()) + " " + commit
	}
	return "update " + headRef(s.ns()) + " " + commit + " " + s.st.head
}

// ensureLocked checks a native repository again and creates the shadow
// repository and the private directory. Every operation (snapshots,
// listing, diffs, restore, forget) calls it under the session's lock
// before its first git run, so a .git folder that has come to lead outside
// the workspace since the plan (a link, an alternates entry,
// gitenv.CheckLayout) is refused before anything is read or written.
func (s *SessionVCS) ensureLocked(ctx context.Context) error {
	if s.plan.Mode == ModeNative {
		check := func() error { return gitenv.CheckLayout(ctx, s.plan.Workspace, s.plan.GitDir) }
		if c := s.plan.Confirmed; c != nil {
			check = func() error { return c.Verify(ctx) }
		}
		if err := check(); err != nil {
			return err
		}
	}
	if s.st.prepared {
		return nil
	}
	if s.plan.Mode == ModeShadow {
		if err := initShadow(ctx, s.plan); err != nil {
			return err
		}
	}
	dir, err := s.openPrivate()
	if err != nil {
		return err
	}
	defer dir.Close()
	if cur, err := readPrivate(dir, "exclude"); err != nil || string(cur) != excludeRules {
		if err := writePrivate(dir, "exclude", []byte(excludeRules)); err != nil {
			return fmt.Errorf("vcs exclude file: %w", err)
		}
	}
	s.st.prepared = true
	return nil
}

// openPrivate opens the private folder (privateDir), creating it, with no
// link followed: the git directory is opened as an os.Root and the folder
// must be a real directory in it, so that nothing the sidecar writes there
// (the exclude file; the index files git writes) lands outside it.
func (s *SessionVCS) openPrivate() (*os.Root, error) {
	gitDir, err := os.OpenRoot(s.plan.GitDir)
	if err != nil {
		return nil, fmt.Errorf("vcs directory: %w", err)
	}
	defer gitDir.Close()
	name := filepath.Base(s.plan.privateDir())
	fi, err := gitDir.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		if err := gitDir.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("vcs directory: %w", err)
		}
		fi, err = gitDir.Lstat(name)
	}
	if err != nil {
		return nil, fmt.Errorf("vcs directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is a link or a file, not a directory; snapshots refuse to follow it", ErrGit, s.plan.privateDir())
	}
	dir, err := gitDir.OpenRoot(name)
	if err != nil {
		return nil, fmt.Errorf("vcs directory: %w", err)
	}
	return dir, nil
}

// removePrivate removes the files names of the private folder, following
// no link.
func (s *SessionVCS) removePrivate(names ...string) error {
	dir, err := s.openPrivate()
	if err != nil {
		return err
	}
	defer dir.Close()
	for _, name := range names {
		if err := dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writePrivate writes the file name of the private folder dir atomically.
func writePrivate(dir *os.Root, name string, data []byte) error {
	return atomicfile.Write(dir, name, data, 0o644, atomicfile.SetMode)
}

// readPrivate reads the regular file name of the private folder dir,
// following no link.
func readPrivate(dir *os.Root, name string) ([]byte, error) {
	fi, err := dir.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	return dir.ReadFile(name)
}

// initShadow creates the shadow repository when it does not exist yet, in
// the sidecar's data dir. It is bare (no hooks, no templates) and marked
// non-bare so that GIT_WORK_TREE applies.
func initShadow(ctx context.Context, p Plan) error {
	initMu.Lock()
	defer initMu.Unlock()
	if _, err := os.Stat(filepath.Join(p.GitDir, "HEAD")); err == nil {
		return nil
	}
	if err := os.MkdirAll(p.GitDir, 0o700); err != nil {
		return fmt.Errorf("shadow repository: %w", err)
	}
	g := &runner{bin: p.Git, dir: p.GitDir}
	if _, err := g.output(ctx, nil, "init", "--quiet", "--bare", "--template=", p.GitDir); err != nil {
		return fmt.Errorf("shadow repository: %w", err)
	}
	g.repo = gitenv.Repo{GitDir: p.GitDir}
	if _, err := g.output(ctx, nil, "config", "core.bare", "false"); err != nil {
		return fmt.Errorf("shadow repository: %w", err)
	}
	return nil
}

// ref is one of the session's refs.
type ref struct{ name, oid, tree string }

// refsLocked lists the session's refs.
func (s *SessionVCS) refsLocked(ctx context.Context) ([]ref, error) {
	out, err := s.git().output(ctx, nil, "for-each-ref",
		"--format=%(refname)%00%(objectname)%00%(tree)", s.ns())
	if err != nil {
		return nil, err
	}
	var refs []ref
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 3 || f[0] == "" {
			continue
		}
		refs = append(refs, ref{name: f[0], oid: f[1], tree: f[2]})
	}
	return refs, nil
}

// loadLocked prepares the repository and reads head and the last turn
// number from the refs unless they are known.
func (s *SessionVCS) loadLocked(ctx context.Context) error {
	if err := s.ensureLocked(ctx); err != nil {
		return err
	}
	if s.st.loaded {
		return nil
	}
	refs, err := s.refsLocked(ctx)
	if err != nil {
		return err
	}
	s.st.head, s.st.headTree, s.st.last = "", "", 0
	for _, r := range refs {
		if r.name == headRef(s.ns()) {
			s.st.head, s.st.headTree = r.oid, r.tree
		} else if n, ok := turnNumberIn(s.ns(), r.name); ok && n > s.st.last {
			s.st.last = n
		} else if r.name == expiredRef(s.ns()) {
			rec, err := readExpired(ctx, s.git(), r.oid)
			if err != nil {
				return err
			}
			s.st.last = max(s.st.last, rec.Last)
		}
	}
	s.st.loaded = true
	return nil
}

// snapshotLocked stages the whole workspace into the private index (git add
// -A semantics: untracked files included, ignored and excluded ones not,
// nor those over the Limits) and returns its tree and the files it left
// out.
func (s *SessionVCS) snapshotLocked(ctx context.Context) (string, []OmittedFile, error) {
	tree, omitted, err := s.snapshotTreeLocked(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("snapshot: %w", err)
	}
	return tree, omitted, nil
}

func (s *SessionVCS) snapshotTreeLocked(ctx context.Context) (string, []OmittedFile, error) {
	g, err := s.snapshotGit(ctx)
	if err != nil {
		return "", nil, err
	}
	if err := dropGitlinks(ctx, g); err != nil {
		return "", nil, err
	}
	root, err := os.OpenRoot(s.plan.Workspace)
	if err != nil {
		return "", nil, err
	}
	defer root.Close()
	omitted, err := s.omittedLocked(ctx, g, root)
	if err != nil {
		return "", nil, err
	}
	if g.excludes, err = s.leaveOutLocked(ctx, g, omitted); err != nil {
		return "", nil, err
	}
	if _, err := g.output(ctx, nil, "add", "--all", "--ignore-errors", "--", "."); err != nil {
		// Unreadable files (say, root-owned build output) are left out of
		// the snapshot rather than stopping tracking altogether.
		var ge *gitError
		if !errors.As(err, &ge) || strings.Contains(ge.stderr, "fatal:") || !strings.Contains(ge.stderr, "unable to index file") {
			return "", nil, err
		}
		slog.Warn("vcs snapshot skipped unreadable files", "session", s.id, "err", ge.stderr)
	}
	args := []string{"write-tree"}
	if p := s.plan.prefix(); p != "" {
		args = append(args, "--prefix="+p) // the folder's tree: paths relative to it
	}
	tree, err := g.trimmed(ctx, args...)
	if err != nil {
		return "", nil, err
	}
	return tree, omitted, nil
}

// commitLocked writes a commit of tree whose parent is head.
func (s *SessionVCS) commitLocked(ctx context.Context, tree, msg string) (string, error) {
	args := []string{"commit-tree", "--no-gpg-sign", tree}
	if s.st.head != "" {
		args = append(args, "-p", s.st.head)
	}
	args = append(args, "-F", "-")
	date := fmt.Sprintf("%d +0000", s.now().Unix())
	out, err := s.git().outputEnv(ctx, strings.NewReader(msg),
		[]string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, args...)
	if err != nil {
		return "", fmt.Errorf("snapshot commit: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// updateRefsLocked applies update-ref --stdin lines as one transaction.
func (s *SessionVCS) updateRefsLocked(ctx context.Context, lines ...string) error {
	in := strings.Join(lines, "\n") + "\n"
	if _, err := s.git().output(ctx, strings.NewReader(in), "update-ref", "--stdin"); err != nil {
		// Someone else (another process) may have moved the refs: read
		// them again next time.
		s.st.loaded = false
		return fmt.Errorf("update refs: %w", err)
	}
	return nil
}

// message builds a snapshot commit message with trailers.
func message(subject, sessionID string, trailers ...string) string {
	var b strings.Builder
	b.WriteString(subject)
	b.WriteString("\n\nAgent-Session: ")
	b.WriteString(oneLine(sessionID))
	b.WriteByte('\n')
	for _, t := range trailers {
		b.WriteString(t)
		b.WriteByte('\n')
	}
	return b.String()
}

// oneLine flattens s to one trimmed line of at most 200 bytes of valid
// UTF-8.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "?")), " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "")
	}
	return s
}
