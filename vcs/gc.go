package vcs

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zqagent/sidecar/gitenv"
)

// repoState is shared by every session of one repository in this process:
// every session operation holds mu shared, and collecting snapshots (which
// moves other sessions' refs and deletes objects) holds it exclusively.
// Lock order: repoState.mu, then a sessionState.mu.
type repoState struct {
	mu sync.RWMutex
	// nextCheck: collectLocked measures the storage again only after it
	// (zero: every time). Guarded by mu held exclusively.
	nextCheck time.Time
}

// repos holds the state of each repository (git dir). Entries are small
// and never removed.
var repos sync.Map // gitDir -> *repoState

// Usage is a project's snapshot storage.
type Usage struct {
	// Bytes is the storage the snapshots take: in shadow mode the
	// repository's object store on disk (space allocated, after
	// collection); in native mode the on-disk size of the objects the
	// sessions' refs reach and no other ref does.
	Bytes int64 `json:"bytes"`
	// CapBytes is the cap in effect (Limits.CapBytes or its default).
	CapBytes int64 `json:"capBytes"`
	// Turns counts the turns whose snapshots are kept.
	Turns int `json:"turns"`
	// ExpiredTurns counts the turns whose snapshots were collected.
	ExpiredTurns int `json:"expiredTurns"`
}

// expiredRecord is a session's list of expired turns, kept as a blob under
// <ns>/expired so that it changes in the same ref transaction that drops
// the turns.
type expiredRecord struct {
	// Last is the highest turn number ever expired; numbering goes on
	// after it even when no turn ref is left.
	Last int `json:"last"`
	// Turns are the expired turns, oldest first, at most maxExpiredKept.
	Turns []Turn `json:"turns"`
}

// Bounds of an expired record: the newest maxExpiredKept turns, each with
// at most maxExpiredFiles files listed.
const (
	maxExpiredKept  = 5000
	maxExpiredFiles = 200
)

// expiredRef holds a session's expiredRecord blob.
func expiredRef(ns string) string { return ns + "/expired" }

// repoLocks returns the shared state of the plan's repository.
func repoLocks(p Plan) *repoState {
	if !p.Enabled() {
		return new(repoState)
	}
	st, _ := repos.LoadOrStore(p.GitDir, new(repoState))
	return st.(*repoState)
}

// lock takes the repository's lock shared and the session's lock; the
// returned func releases both.
func (s *SessionVCS) lock() func() {
	s.repo.mu.RLock()
	s.st.mu.Lock()
	return func() {
		s.st.mu.Unlock()
		s.repo.mu.RUnlock()
	}
}

// repoGit is a runner for the repository without a session index.
func repoGit(p Plan) *runner {
	return &runner{
		bin:  p.Git,
		dir:  p.Workspace,
		repo: gitenv.Repo{Project: p.Workspace, GitDir: p.GitDir, WorkTree: p.workTree()},
	}
}

// checkRepo runs the checks ensureLocked runs before any git, for
// repository-wide work: native layout again, shadow existence.
func checkRepo(ctx context.Context, p Plan) (exists bool, err error) {
	switch p.Mode {
	case ModeNative:
		if c := p.Confirmed; c != nil {
			return true, c.Verify(ctx)
		}
		return true, gitenv.CheckLayout(ctx, p.Workspace, p.GitDir)
	case ModeShadow:
		_, err := os.Stat(filepath.Join(p.GitDir, "HEAD"))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	return false, ErrDisabled
}

// ProjectUsage returns the snapshot storage of the plan's repository: all
// its sessions (in native mode, those of the plan's ref namespace).
func ProjectUsage(ctx context.Context, p Plan) (Usage, error) {
	u := Usage{CapBytes: p.Limits.withDefaults().CapBytes}
	if !p.Enabled() {
		return u, ErrDisabled
	}
	st := repoLocks(p)
	st.mu.RLock()
	defer st.mu.RUnlock()
	ok, err := checkRepo(ctx, p)
	if err != nil || !ok {
		return u, err
	}
	g := repoGit(p)
	if u.Bytes, err = storageBytes(ctx, p, g); err != nil {
		return u, fmt.Errorf("snapshot usage: %w", err)
	}
	sessions, err := repoTurns(ctx, p, g)
	if err != nil {
		return u, fmt.Errorf("snapshot usage: %w", err)
	}
	for _, rs := range sessions {
		u.Turns += len(rs.turns)
		if rs.expired != "" {
			rec, err := readExpired(ctx, g, rs.expired)
			if err != nil {
				return u, fmt.Errorf("snapshot usage: %w", err)
			}
			u.ExpiredTurns += len(rec.Turns)
		}
	}
	return u, nil
}

// storageBytes measures the snapshot storage (Usage.Bytes).
func storageBytes(ctx context.Context, p Plan, g *runner) (int64, error) {
	if p.Mode == ModeShadow {
		return diskUsage(ctx, filepath.Join(p.GitDir, "objects"))
	}
	ns := strings.TrimSuffix(p.refPrefix(), "/")
	out, err := g.output(ctx, nil, "rev-list", "--objects", "--objects-edge-aggressive", "--disk-usage",
		"--glob="+ns+"/*", "--not", "--exclude="+ns+"/*", "--all")
	if err != nil {
		return 0, err
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return 0, nil
	}
	return strconv.ParseInt(lines[len(lines)-1], 10, 64)
}

// diskUsage sums the space allocated to the files under dir (links are
// not followed).
func diskUsage(ctx context.Context, dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a pack or loose object removed meanwhile
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		total += allocated(fi)
		return nil
	})
	return total, err
}

// repoSession is one session's refs in the repository.
type repoSession struct {
	ns      string
	head    string
	expired string // expiredRecord blob; "" = none
	turns   []repoTurn
}

// repoTurn is one kept turn.
type repoTurn struct {
	n      int
	commit string
	time   int64
}

// repoTurns lists every session's refs under the plan's namespace.
func repoTurns(ctx context.Context, p Plan, g *runner) (map[string]*repoSession, error) {
	prefix := p.refPrefix()
	out, err := g.output(ctx, nil, "for-each-ref",
		"--format=%(refname)%00%(objectname)%00%(committerdate:unix)", strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, err
	}
	sessions := map[string]*repoSession{}
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Split(line, "\x00")
		if len(f) != 3 {
			continue
		}
		rest, ok := strings.CutPrefix(f[0], prefix)
		if !ok {
			continue
		}
		comp, _, ok := strings.Cut(rest, "/")
		if !ok {
			continue
		}
		ns := prefix + comp
		rs := sessions[ns]
		if rs == nil {
			rs = &repoSession{ns: ns}
			sessions[ns] = rs
		}
		switch f[0] {
		case headRef(ns):
			rs.head = f[1]
		case expiredRef(ns):
			rs.expired = f[1]
		default:
			if n, ok := turnNumberIn(ns, f[0]); ok {
				sec, _ := strconv.ParseInt(f[2], 10, 64)
				rs.turns = append(rs.turns, repoTurn{n: n, commit: f[1], time: sec})
			}
		}
	}
	for _, rs := range sessions {
		slices.SortFunc(rs.turns, func(a, b repoTurn) int { return cmp.Compare(a.n, b.n) })
	}
	return sessions, nil
}

// readExpired reads an expiredRecord blob.
func readExpired(ctx context.Context, g *runner, oid string) (expiredRecord, error) {
	var rec expiredRecord
	if oid == "" {
		return rec, nil
	}
	out, err := g.output(ctx, nil, "cat-file", "blob", oid)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(out, &rec); err != nil {
		return rec, fmt.Errorf("%w: the expired-turns record %s: %v", ErrGit, oid, err)
	}
	return rec, nil
}

// collect keeps the repository's snapshot storage under the cap: when
// over it, the oldest turns (of every session of the repository) expire
// until the storage is at most 90% of the cap or no turn is left. A
// failure is returned but changes nothing already collected.
func (s *SessionVCS) collect(ctx context.Context) error {
	s.repo.mu.Lock()
	defer s.repo.mu.Unlock()
	if time.Now().Before(s.repo.nextCheck) {
		return nil
	}
	return collectLocked(ctx, s.plan, s.repo)
}

// slowMeasure is how long measuring the storage may take before it is
// throttled: a measurement that took longer is not repeated for 20 times
// as long, so that on a very large repository it costs at most ~5% of the
// time. (Storage can then go over the cap by what those snapshots add.)
const slowMeasure = 100 * time.Millisecond

// collectLocked is collect with the repository's lock held exclusively.
func collectLocked(ctx context.Context, p Plan, st *repoState) error {
	ok, err := checkRepo(ctx, p)
	if err != nil || !ok {
		return err
	}
	lim := p.Limits.withDefaults()
	g := repoGit(p)
	start := time.Now()
	used, err := storageBytes(ctx, p, g)
	if d := time.Since(start); d > slowMeasure {
		st.nextCheck = time.Now().Add(20 * d)
	}
	if err != nil || used <= lim.CapBytes {
		return err
	}
	target := lim.CapBytes / 10 * 9
	for used > target {
		sessions, err := repoTurns(ctx, p, g)
		if err != nil {
			return err
		}
		var all []repoTurn
		owner := map[string]*repoSession{}
		for _, rs := range sessions {
			for _, t := range rs.turns {
				all = append(all, t)
				owner[t.commit+"\x00"+strconv.Itoa(t.n)] = rs
			}
		}
		if len(all) == 0 {
			return nil // only the newest snapshots are left
		}
		slices.SortFunc(all, func(a, b repoTurn) int {
			return cmp.Or(cmp.Compare(a.time, b.time), cmp.Compare(a.n, b.n))
		})
		// Expire the share of turns the excess is of the storage, at
		// least one, then measure again.
		k := max(1, int(int64(len(all))*(used-target)/used))
		expire := map[*repoSession]int{} // session -> highest number to expire
		for _, t := range all[:min(k, len(all))] {
			rs := owner[t.commit+"\x00"+strconv.Itoa(t.n)]
			expire[rs] = max(expire[rs], t.n)
		}
		var lines []string
		for rs, upTo := range expire {
			l, err := expireTurns(ctx, g, rs, upTo)
			if err != nil {
				return err
			}
			lines = append(lines, l...)
		}
		if err := applyRefs(ctx, g, lines); err != nil {
			return err
		}
		forgetLoaded(p.GitDir)
		if err := pruneLocked(ctx, p); err != nil {
			return err
		}
		if used, err = storageBytes(ctx, p, g); err != nil {
			return err
		}
	}
	return nil
}

// applyRefs applies update-ref --stdin lines as one transaction.
func applyRefs(ctx context.Context, g *runner, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	in := "start\n" + strings.Join(lines, "\n") + "\nprepare\ncommit\n"
	if _, err := g.output(ctx, strings.NewReader(in), "update-ref", "--stdin"); err != nil {
		return fmt.Errorf("collect snapshots: %w", err)
	}
	return nil
}

// forgetLoaded makes every session of the repository read its refs again.
func forgetLoaded(gitDir string) {
	sessions.Range(func(k, v any) bool {
		if strings.HasPrefix(k.(string), gitDir+"\x00") {
			st := v.(*sessionState)
			st.mu.Lock()
			st.loaded = false
			st.mu.Unlock()
		}
		return true
	})
}

// expireTurns returns the ref updates that expire rs's turns numbered up
// to upTo: their refs are deleted and recorded in the session's expired
// record, and the session's snapshot chain is cut just before the oldest
// turn kept (its pre-turn snapshot becomes a root), or at head when none
// is kept, by writing the kept commits again with the new parents. The
// cut-off commits are then reachable from nothing.
func expireTurns(ctx context.Context, g *runner, rs *repoSession, upTo int) ([]string, error) {
	var gone, kept []repoTurn
	for _, t := range rs.turns {
		if t.n <= upTo {
			gone = append(gone, t)
		} else {
			kept = append(kept, t)
		}
	}
	if len(gone) == 0 || rs.head == "" {
		return nil, nil
	}
	rec, err := readExpired(ctx, g, rs.expired)
	if err != nil {
		return nil, err
	}
	details, err := turnDetails(ctx, g, rs.ns, gone)
	if err != nil {
		return nil, err
	}
	for _, t := range details {
		t.Expired = true
		if len(t.Files) > maxExpiredFiles {
			t.MoreFiles, t.Files = len(t.Files)-maxExpiredFiles, t.Files[:maxExpiredFiles]
		}
		rec.Turns = append(rec.Turns, t)
		rec.Last = max(rec.Last, t.Number)
	}
	if over := len(rec.Turns) - maxExpiredKept; over > 0 {
		rec.Turns = rec.Turns[over:]
	}
	// The cut: the oldest kept turn's parent (its pre-turn snapshot), or
	// head.
	boundary := rs.head
	if len(kept) > 0 {
		parents, err := g.trimmed(ctx, "rev-parse", kept[0].commit+"^@")
		if err != nil {
			return nil, err
		}
		if parents != "" {
			boundary = strings.Fields(parents)[0]
		} else {
			boundary = kept[0].commit
		}
	}
	mapped, err := rewriteFrom(ctx, g, boundary, rs.head)
	if err != nil {
		return nil, err
	}
	blob, err := writeBlobJSON(ctx, g, rec)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, t := range gone {
		lines = append(lines, "delete "+turnRef(rs.ns, t.n)+" "+t.commit)
	}
	for _, t := range kept {
		if nw, ok := mapped[t.commit]; ok && nw != t.commit {
			lines = append(lines, "update "+turnRef(rs.ns, t.n)+" "+nw+" "+t.commit)
		}
	}
	if nw := mapped[rs.head]; nw != "" && nw != rs.head {
		lines = append(lines, "update "+headRef(rs.ns)+" "+nw+" "+rs.head)
	}
	if rs.expired == "" {
		lines = append(lines, "create "+expiredRef(rs.ns)+" "+blob)
	} else {
		lines = append(lines, "update "+expiredRef(rs.ns)+" "+blob+" "+rs.expired)
	}
	return lines, nil
}

// turnDetails reads the listing of turns (status, time, files, omitted
// files) as ListTurns shows them.
func turnDetails(ctx context.Context, g *runner, ns string, ts []repoTurn) ([]Turn, error) {
	args := []string{"for-each-ref",
		"--format=%(refname)%00%(objectname)%00%(committerdate:unix)%00%(contents:body)%00"}
	for _, t := range ts {
		args = append(args, turnRef(ns, t.n))
	}
	out, err := g.output(ctx, nil, args...)
	if err != nil {
		return nil, err
	}
	turns := parseTurnRefs(ns, string(out))
	if err := addFiles(ctx, g, turns); err != nil {
		return nil, err
	}
	return turns, nil
}

// rewriteFrom writes the chain of snapshot commits from boundary to head
// again, boundary without parents and each later one on the rewritten
// one before it, same trees, messages and dates. It returns old -> new
// ids; boundary already without parents maps everything to itself.
func rewriteFrom(ctx context.Context, g *runner, boundary, head string) (map[string]string, error) {
	out, err := g.output(ctx, nil, "rev-list", "--reverse", "--topo-order", head, "^"+boundary)
	if err != nil {
		return nil, err
	}
	chain := append([]string{boundary}, strings.Fields(string(out))...)
	bodies, err := catCommits(ctx, g, chain)
	if err != nil {
		return nil, err
	}
	mapped := map[string]string{}
	for i, old := range chain {
		body := bodies[i]
		var parent string
		if i > 0 {
			parent = mapped[commitParent(bodies[i])]
			if parent == "" {
				return nil, fmt.Errorf("%w: snapshot %s is not on a single chain", ErrGit, old)
			}
		}
		nb := withParent(body, parent)
		if nb == body {
			mapped[old] = old
			continue
		}
		id, err := g.output(ctx, strings.NewReader(nb), "hash-object", "-t", "commit", "-w", "--stdin")
		if err != nil {
			return nil, err
		}
		mapped[old] = strings.TrimSpace(string(id))
	}
	return mapped, nil
}

// catCommits reads the raw commit objects of ids.
func catCommits(ctx context.Context, g *runner, ids []string) ([]string, error) {
	out, err := g.output(ctx, strings.NewReader(strings.Join(ids, "\n")+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(strings.NewReader(string(out)))
	bodies := make([]string, 0, len(ids))
	for _, id := range ids {
		header, err := r.ReadString('\n')
		f := strings.Fields(header)
		if err != nil || len(f) != 3 || f[0] != id || f[1] != "commit" {
			return nil, fmt.Errorf("%w: git cat-file: unexpected %q for %s", ErrGit, strings.TrimSpace(header), id)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size < 0 {
			return nil, fmt.Errorf("%w: git cat-file: bad size %q", ErrGit, f[2])
		}
		buf := make([]byte, size+1) // content and newline
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("%w: git cat-file: %v", ErrGit, err)
		}
		bodies = append(bodies, string(buf[:size]))
	}
	return bodies, nil
}

// commitParent is the first parent named in a raw commit ("" = none).
func commitParent(body string) string {
	header, _, _ := strings.Cut(body, "\n\n")
	for line := range strings.SplitSeq(header, "\n") {
		if p, ok := strings.CutPrefix(line, "parent "); ok {
			return p
		}
	}
	return ""
}

// withParent is a raw commit with its parent lines replaced by parent
// (none when "").
func withParent(body, parent string) string {
	header, msg, _ := strings.Cut(body, "\n\n")
	var b strings.Builder
	for line := range strings.SplitSeq(header, "\n") {
		if strings.HasPrefix(line, "parent ") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
		if strings.HasPrefix(line, "tree ") && parent != "" {
			b.WriteString("parent " + parent + "\n")
		}
	}
	b.WriteByte('\n')
	b.WriteString(msg)
	return b.String()
}

// writeBlobJSON writes v as a blob and returns its id.
func writeBlobJSON(ctx context.Context, g *runner, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	out, err := g.output(ctx, strings.NewReader(string(b)), "hash-object", "-w", "--stdin")
	return strings.TrimSpace(string(out)), err
}

// pruneLocked frees the objects no ref reaches in a shadow repository
// (the sidecar's own; a native repository is the user's, whose own gc
// frees them). The blobs every session's private index holds are kept:
// a tree written from each index is named to prune.
func pruneLocked(ctx context.Context, p Plan) error {
	if p.Mode != ModeShadow {
		return nil
	}
	keep := []string{"prune", "--expire=now", "--"}
	entries, err := os.ReadDir(p.privateDir())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("prune snapshots: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), "index-") || strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		g := repoGit(p)
		g.indexFile = filepath.Join(p.privateDir(), e.Name())
		tree, err := g.trimmed(ctx, "write-tree", "--missing-ok")
		if err != nil {
			// An index git cannot read: drop it, the session's next
			// snapshot builds it again.
			_ = os.Remove(g.indexFile)
			continue
		}
		keep = append(keep, tree)
	}
	if _, err := repoGit(p).output(ctx, nil, keep...); err != nil {
		return fmt.Errorf("prune snapshots: %w", err)
	}
	return nil
}

// free collects what a session's deletion left unreachable (shadow mode).
func (s *SessionVCS) free(ctx context.Context) error {
	s.repo.mu.Lock()
	defer s.repo.mu.Unlock()
	if ok, err := checkRepo(ctx, s.plan); err != nil || !ok {
		return err
	}
	return pruneLocked(ctx, s.plan)
}

// expiredLocked reads the session's expired record.
func (s *SessionVCS) expiredLocked(ctx context.Context) (expiredRecord, error) {
	oid, err := s.git().trimmed(ctx, "for-each-ref", "--format=%(objectname)", expiredRef(s.ns()))
	if err != nil {
		return expiredRecord{}, err
	}
	return readExpired(ctx, s.git(), oid)
}

// expiredTurnError says turn n's snapshot expired, or is nil when it did
// not.
func (s *SessionVCS) expiredTurnError(ctx context.Context, n int) error {
	rec, err := s.expiredLocked(ctx)
	if err != nil {
		return err
	}
	for _, t := range rec.Turns {
		if t.Number == n {
			return fmt.Errorf("%w: turn %d of session %s (snapshot taken %s) was collected to keep the project's snapshot storage under its cap",
				ErrTurnExpired, n, s.id, t.Time.Format(time.RFC3339))
		}
	}
	if n <= rec.Last {
		return fmt.Errorf("%w: turn %d of session %s was collected to keep the project's snapshot storage under its cap", ErrTurnExpired, n, s.id)
	}
	return nil
}
