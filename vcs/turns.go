package vcs

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// FileChange is one file a turn changed.
type FileChange struct {
	// Path is the file's path relative to the workspace, with '/'.
	Path string `json:"path"`
	// Status is A (added), M (modified), D (deleted) or R (renamed).
	Status string `json:"status"`
	// OldPath is the path before a rename.
	OldPath string `json:"oldPath,omitempty"`
}

// Turn is a turn that changed something.
type Turn struct {
	// Number counts the session's changing turns from 1.
	Number int `json:"number"`
	// Commit is the snapshot after the turn.
	Commit string `json:"commit"`
	// Status is how the turn ended ("completed", "interrupted", ...).
	Status string `json:"status"`
	// Time is when the snapshot was taken.
	Time time.Time `json:"time"`
	// Files are the turn's changes.
	Files []FileChange `json:"files"`
	// MoreFiles counts the changes of an expired turn not kept in Files.
	MoreFiles int `json:"moreFiles,omitempty"`
	// Omitted are the files the turn's snapshot left out (Limits), and
	// OmittedMore counts those not listed.
	Omitted     []OmittedFile `json:"omitted,omitempty"`
	OmittedMore int           `json:"omittedMore,omitempty"`
	// Expired is set when the turn's snapshot was collected to keep the
	// project's storage under its cap: it can no longer be diffed or
	// restored.
	Expired bool `json:"expired,omitempty"`
	// TurnID is the session host's turn the snapshot belongs to
	// (CommitTurnID); "" for one taken without it.
	TurnID string `json:"turnId,omitempty"`
}

// ListTurns returns the turns that changed something, oldest first,
// expired ones included (Turn.Expired). With tracking off it returns an
// empty list.
func (s *SessionVCS) ListTurns(ctx context.Context) ([]Turn, error) {
	if !s.Enabled() {
		return []Turn{}, nil
	}
	defer s.lock()()
	if err := s.loadLocked(ctx); err != nil {
		return nil, fmt.Errorf("list turns: %w", err)
	}
	g := s.git()
	out, err := g.output(ctx, nil, "for-each-ref",
		"--format=%(refname)%00%(objectname)%00%(committerdate:unix)%00%(contents:body)%00",
		strings.TrimSuffix(turnsPrefix(s.ns()), "/"))
	if err != nil {
		return nil, fmt.Errorf("list turns: %w", err)
	}
	turns := parseTurnRefs(s.ns(), string(out))
	if err := addFiles(ctx, g, turns); err != nil {
		return nil, fmt.Errorf("list turns: %w", err)
	}
	rec, err := s.expiredLocked(ctx)
	if err != nil {
		return nil, fmt.Errorf("list turns: %w", err)
	}
	turns = append(rec.Turns, turns...)
	sort.SliceStable(turns, func(a, b int) bool { return turns[a].Number < turns[b].Number })
	if turns == nil {
		turns = []Turn{}
	}
	return turns, nil
}

// addFiles fills in the Files of turns from one diff-tree of their
// commits against their parents.
func addFiles(ctx context.Context, g *runner, turns []Turn) error {
	if len(turns) == 0 {
		return nil
	}
	var in strings.Builder
	for _, t := range turns {
		in.WriteString(t.Commit)
		in.WriteByte('\n')
	}
	out, err := g.output(ctx, strings.NewReader(in.String()),
		"diff-tree", "--stdin", "-r", "-z", "--root", "--name-status", "-M", "--no-ext-diff")
	if err != nil {
		return err
	}
	files := parseDiffTree(string(out))
	for i := range turns {
		turns[i].Files = files[turns[i].Commit]
		if turns[i].Files == nil {
			turns[i].Files = []FileChange{}
		}
	}
	return nil
}

// parseTurnRefs parses for-each-ref records of
// "refname NUL oid NUL unix NUL body NUL" (each followed by a newline),
// keeping the session's turn refs, sorted by number.
func parseTurnRefs(ns, out string) []Turn {
	f := strings.Split(out, "\x00")
	var turns []Turn
	for i := 0; i+4 <= len(f); i += 4 {
		name := strings.TrimLeft(f[i], "\n")
		n, ok := turnNumberIn(ns, name)
		if !ok {
			continue
		}
		t := Turn{Number: n, Commit: strings.TrimSpace(f[i+1])}
		if sec, err := strconv.ParseInt(strings.TrimSpace(f[i+2]), 10, 64); err == nil {
			t.Time = time.Unix(sec, 0).UTC()
		}
		for line := range strings.SplitSeq(f[i+3], "\n") {
			if v, ok := strings.CutPrefix(line, "Agent-Status: "); ok {
				t.Status = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "Agent-Turn-Id: "); ok {
				t.TurnID = strings.TrimSpace(v)
			}
		}
		t.Omitted, t.OmittedMore = parseOmitted(f[i+3])
		turns = append(turns, t)
	}
	sort.Slice(turns, func(a, b int) bool { return turns[a].Number < turns[b].Number })
	return turns
}

// turnNumber returns n for the ref refs/agent/<session>/turns/<n>.
func turnNumber(sessionID, name string) (int, bool) { return turnNumberIn(AgentRef(sessionID), name) }

// turnNumberIn returns n for the ref <ns>/turns/<n>.
func turnNumberIn(ns, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, turnsPrefix(ns))
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

// parseDiffTree parses `git diff-tree --stdin -z --name-status` output: a
// commit id token, then per change a status token ("A", "M", "D", "T", or
// "R<score>" / "C<score>" followed by two paths) and a path. Status letters
// are upper case and commit ids lower-case hex, so the two never mix up.
func parseDiffTree(out string) map[string][]FileChange {
	files := map[string][]FileChange{}
	tok := strings.Split(out, "\x00")
	commit := ""
	for i := 0; i < len(tok); i++ {
		t := strings.TrimLeft(tok[i], "\n")
		if t == "" {
			continue
		}
		if isHex(t) {
			commit = t
			if _, ok := files[commit]; !ok {
				files[commit] = []FileChange{}
			}
			continue
		}
		switch t[0] {
		case 'R', 'C':
			if i+2 >= len(tok) {
				return files
			}
			fc := FileChange{Status: "R", OldPath: tok[i+1], Path: tok[i+2]}
			if t[0] == 'C' {
				fc = FileChange{Status: "A", Path: tok[i+2]}
			}
			files[commit] = append(files[commit], fc)
			i += 2
		case 'A', 'M', 'D', 'T', 'U', 'X':
			if i+1 >= len(tok) {
				return files
			}
			st := t[:1]
			if st != "A" && st != "D" {
				st = "M"
			}
			files[commit] = append(files[commit], FileChange{Status: st, Path: tok[i+1]})
			i++
		}
	}
	return files
}

// isHex reports whether s looks like an object id (40 or 64 lower-case hex
// digits).
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// DiffTurn returns turn n's change as a patch (git show --patch, without the
// commit header). Returns ErrTurnNotFound for an unknown n, ErrTurnExpired
// for a turn whose snapshot was collected and ErrDisabled when tracking is
// off.
func (s *SessionVCS) DiffTurn(ctx context.Context, n int) (string, error) {
	if !s.Enabled() {
		return "", ErrDisabled
	}
	defer s.lock()()
	if err := s.loadLocked(ctx); err != nil {
		return "", fmt.Errorf("diff turn: %w", err)
	}
	commit, err := s.turnCommitLocked(ctx, n)
	if err != nil {
		return "", fmt.Errorf("diff turn: %w", err)
	}
	out := &capWriter{max: MaxDiffBytes}
	if err := s.git().run(ctx, nil, nil, out, "show", "--format=", "--patch", "-M",
		"--no-color", "--no-ext-diff", "--no-textconv", commit); err != nil {
		return "", fmt.Errorf("diff turn %d: %w", n, err)
	}
	patch := strings.TrimLeft(out.buf.String(), "\n")
	if out.dropped > 0 {
		patch += fmt.Sprintf("\n[diff truncated: %d more bytes]\n", out.dropped)
	}
	return patch, nil
}

// MaxDiffBytes bounds the patch DiffTurn returns; a longer one is cut and
// ends with a "[diff truncated: N more bytes]" line.
const MaxDiffBytes = 8 << 20

// turnCommitLocked returns turn n's commit or ErrTurnNotFound.
func (s *SessionVCS) turnCommitLocked(ctx context.Context, n int) (string, error) {
	if n < 1 {
		return "", fmt.Errorf("%w: %d", ErrTurnNotFound, n)
	}
	name := turnRef(s.ns(), n)
	out, err := s.git().output(ctx, nil, "for-each-ref", "--format=%(refname)%00%(objectname)", name)
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if ref, oid, ok := strings.Cut(line, "\x00"); ok && ref == name {
			return oid, nil
		}
	}
	if err := s.expiredTurnError(ctx, n); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%w: %d", ErrTurnNotFound, n)
}
