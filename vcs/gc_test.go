package vcs

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// capSession is session with limits.
func capSession(t testing.TB, ws string, mode Mode, id string, lim Limits) *SessionVCS {
	t.Helper()
	p := ResolvePlan(context.Background(), ws, Config{ShadowRoot: testShadowRoot, Mode: mode, Limits: lim})
	require.True(t, p.Enabled(), "plan: %+v", p)
	return NewSession(p, id)
}

// randomText is n bytes of random base64 lines: text to git, and close to
// incompressible (zlib keeps about 3/4 of it), so every rewrite is a new
// blob of about that size on disk.
func randomText(t testing.TB, n int) []byte {
	t.Helper()
	raw := make([]byte, n*3/4)
	_, err := rand.Read(raw)
	require.NoError(t, err)
	enc := base64.StdEncoding.EncodeToString(raw)
	out := make([]byte, 0, n+n/76+1)
	for i := 0; i < len(enc) && len(out) < n; i += 76 {
		out = append(out, enc[i:min(i+76, len(enc))]...)
		out = append(out, '\n')
	}
	for len(out) < n {
		out = append(out, 'x')
	}
	return out[:n]
}

// rewrite writes content with a header naming turn i, so each turn's file
// is a new blob.
func rewrite(t testing.TB, ws, rel string, content []byte, i int) {
	t.Helper()
	copy(content, fmt.Sprintf("turn %08d\n", i))
	require.NoError(t, os.WriteFile(filepath.Join(ws, rel), content, 0o644))
}

// runCapTurns runs turns turns, each rewriting a size-byte file, under a
// cap, and checks after every one that the storage stays under it and that
// the newest turn restores.
func runCapTurns(t testing.TB, mode Mode, turns, size int, capBytes int64) {
	ctx := context.Background()
	ws := realTemp(t)
	if mode == ModeNative {
		gitT(t, ws, "init", "-q")
	}
	s := capSession(t, ws, mode, "capped", Limits{CapBytes: capBytes})
	content := randomText(t, size)
	for i := 1; i <= turns; i++ {
		turn(t, s, "completed", func() { rewrite(t, ws, "big.txt", content, i) })
		u, err := ProjectUsage(ctx, s.Plan())
		require.NoError(t, err)
		require.LessOrEqual(t, u.Bytes, capBytes, "turn %d: %+v", i, u)
		require.Equal(t, i, u.Turns+u.ExpiredTurns, "turn %d: %+v", i, u)
	}
	u, err := ProjectUsage(ctx, s.Plan())
	require.NoError(t, err)
	require.Positive(t, u.ExpiredTurns, "%+v", u)
	require.Positive(t, u.Turns, "%+v", u)

	list, err := s.ListTurns(ctx)
	require.NoError(t, err)
	require.Len(t, list, turns, "expired turns are still listed")
	require.True(t, list[0].Expired, "the oldest turn expired")
	require.False(t, list[turns-1].Expired, "the newest turn is kept")
	require.Equal(t, []string{"M big.txt"}, paths(list[1].Files), "an expired turn still says what it changed")

	// The oldest turns are refused by name; a recent one restores.
	_, err = s.RestoreTurn(ctx, 1, RestoreOptions{})
	require.ErrorIs(t, err, ErrTurnExpired)
	require.Contains(t, err.Error(), "turn 1 of session capped")
	_, err = s.DiffTurn(ctx, 1)
	require.ErrorIs(t, err, ErrTurnExpired)
	recent := turns - 1
	require.False(t, list[recent-1].Expired)
	res, err := s.RestoreTurn(ctx, recent, RestoreOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"big.txt"}, res.Restored)
	want := append([]byte(nil), content...)
	copy(want, fmt.Sprintf("turn %08d\n", recent))
	got, err := os.ReadFile(filepath.Join(ws, "big.txt"))
	require.NoError(t, err)
	require.Equal(t, want, got, "turn %d restored", recent)
	diff, err := s.DiffTurn(ctx, recent)
	require.NoError(t, err)
	require.Contains(t, diff, fmt.Sprintf("+turn %08d", recent))

	// Numbering goes on after the expired turns.
	turn(t, s, "completed", func() { rewrite(t, ws, "big.txt", content, turns+1) })
	list, err = NewSession(s.Plan(), "capped").ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, turns+1, list[len(list)-1].Number)
}

// TestSnapshotStorageStaysUnderTheCap: turns that each rewrite a 20 MB file
// keep a 200 MB cap, and a recent turn still restores. make test runs 18
// turns (each a new 20 MB blob, about 15 MB zlib'd at git's loose level 1:
// over the cap at the 14th, so collection runs from there on; ~1.5 s a
// turn under -race on a loaded 2-core machine, almost all of it git's
// SHA-1 and zlib). The 1,000 turns are BenchmarkSnapshotCap with
// -benchtime 1000x (go test -run '^$' -bench SnapshotCap -benchtime 1000x ./vcs/).
func TestSnapshotStorageStaysUnderTheCap(t *testing.T) {
	runCapTurns(t, ModeShadow, 18, 20<<20, 200<<20)
}

// TestNativeSnapshotStorageStaysUnderTheCap: the same in the workspace's own
// repository, small: the expired turns' commits are cut from the chain, the
// user's refs are untouched.
func TestNativeSnapshotStorageStaysUnderTheCap(t *testing.T) {
	runCapTurns(t, ModeNative, 12, 64<<10, 256<<10)
}

// BenchmarkSnapshotCap is the figure: with -benchtime 1000x, 1,000
// turns that each rewrite a 20 MB file, under a 200 MB cap; then a recent
// turn restores.
func BenchmarkSnapshotCap(b *testing.B) {
	ctx := context.Background()
	ws := realTemp(b)
	const capBytes = 200 << 20
	s := capSession(b, ws, ModeShadow, "bench", Limits{CapBytes: capBytes})
	content := randomText(b, 20<<20)
	i := 0
	for b.Loop() {
		i++
		turn(b, s, "completed", func() { rewrite(b, ws, "big.txt", content, i) })
	}
	b.StopTimer()
	u, err := ProjectUsage(ctx, s.Plan())
	require.NoError(b, err)
	require.LessOrEqual(b, u.Bytes, int64(capBytes))
	b.ReportMetric(float64(u.Bytes)/(1<<20), "MiB-kept")
	if i > 1 {
		_, err = s.RestoreTurn(ctx, i-1, RestoreOptions{})
		require.NoError(b, err)
	}
}

func TestOmittedFilesAreLeftOutAndListed(t *testing.T) {
	for _, mode := range []Mode{ModeShadow, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			ws := realTemp(t)
			if mode == ModeNative {
				gitT(t, ws, "init", "-q")
			}
			s := capSession(t, ws, mode, "omit", Limits{MaxFileBytes: 1000, MaxBinaryBytes: 100})
			big := strings.Repeat("x", 2000)
			turn(t, s, "completed", func() {
				writeT(t, ws, "grows.txt", "small\n")
				writeT(t, ws, "star*.log", big) // glob characters in the name
				writeT(t, ws, "starX.log", "a sibling the pattern must not hide\n")
				writeT(t, ws, "img.bin", "\x00"+strings.Repeat("b", 200)) // binary over 100
				writeT(t, ws, "tiny.bin", "\x00bin")                      // binary under 100
				writeT(t, ws, "text.txt", strings.Repeat("t", 500))       // text under 1000
			})
			turn(t, s, "completed", func() { writeT(t, ws, "grows.txt", big) })
			list, err := s.ListTurns(ctx)
			require.NoError(t, err)
			require.Len(t, list, 2)
			require.Equal(t, []OmittedFile{
				{Path: "img.bin", Size: 201, Reason: OmittedBinary},
				{Path: "star*.log", Size: 2000, Reason: OmittedTooLarge},
			}, list[0].Omitted)
			require.Equal(t, []string{"A grows.txt", "A starX.log", "A text.txt", "A tiny.bin"}, paths(list[0].Files))
			require.Equal(t, []string{"D grows.txt"}, paths(list[1].Files), "a file that grew over the limit leaves the snapshot")
			require.Len(t, list[1].Omitted, 3)
			tree := gitT(t, ws, "--git-dir="+s.Plan().GitDir, "ls-tree", "-r", "--name-only", list[1].Commit)
			require.NotContains(t, tree, "star*.log")
			require.NotContains(t, tree, "img.bin")

			// Restoring turn 1 leaves the grown file alone: no snapshot
			// holds its content now.
			res, err := s.RestoreTurn(ctx, 1, RestoreOptions{})
			require.NoError(t, err)
			require.Equal(t, []string{"grows.txt"}, res.Skipped)
			require.Empty(t, res.Restored)
			require.Equal(t, big, readT(t, ws, "grows.txt"))

			// Small again: snapshotted again.
			turn(t, s, "completed", func() { writeT(t, ws, "grows.txt", "small again\n") })
			list, err = s.ListTurns(ctx)
			require.NoError(t, err)
			require.Equal(t, []string{"A grows.txt"}, paths(list[2].Files))
		})
	}
}

func TestRestoreKeepsAFileTheTurnLeftOut(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	s := capSession(t, ws, ModeShadow, "keep", Limits{MaxFileBytes: 1000})
	turn(t, s, "completed", func() {
		writeT(t, ws, "data.txt", strings.Repeat("d", 2000))
		writeT(t, ws, "other.txt", "other\n")
	})
	turn(t, s, "completed", func() { writeT(t, ws, "data.txt", "now small\n") })
	res, err := s.RestoreTurn(ctx, 1, RestoreOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"data.txt"}, res.Skipped, "turn 1 left it out: it existed, it is not deleted")
	require.Empty(t, res.Deleted)
	require.Equal(t, "now small\n", readT(t, ws, "data.txt"))
}

func TestForgetFreesTheSnapshots(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	s := capSession(t, ws, ModeShadow, "gone", Limits{})
	content := randomText(t, 4<<20)
	for i := range 3 {
		turn(t, s, "completed", func() { rewrite(t, ws, "big.txt", content, i) })
	}
	before, err := ProjectUsage(ctx, s.Plan())
	require.NoError(t, err)
	require.Greater(t, before.Bytes, int64(9<<20), "three ~3 MB blobs: %+v", before)
	require.Equal(t, 3, before.Turns)
	require.NoError(t, s.Forget(ctx))
	after, err := ProjectUsage(ctx, s.Plan())
	require.NoError(t, err)
	require.Less(t, after.Bytes, int64(1<<20), "%+v", after)
	require.Zero(t, after.Turns)
}

// TestCollectingKeepsOtherSessionsIndexes: a dry-run restore stages blobs
// that only the session's private index holds; freeing another session's
// snapshots must not prune them, or the next snapshot fails.
func TestCollectingKeepsOtherSessionsIndexes(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	a := capSession(t, ws, ModeShadow, "a", Limits{})
	c := capSession(t, ws, ModeShadow, "c", Limits{})
	turn(t, c, "completed", func() { writeT(t, ws, "c.txt", "c1\n") })
	turn(t, a, "completed", func() { writeT(t, ws, "a.txt", "a1\n") })
	writeT(t, ws, "staged.txt", "only in a's index\n")
	// Older than the index, so git add trusts the index entry and does
	// not hash (and write) the file again.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(ws, "staged.txt"), old, old))
	_, err := a.RestoreTurn(ctx, 1, RestoreOptions{DryRun: true}) // stages staged.txt, commits nothing
	require.NoError(t, err)
	require.NoError(t, c.Forget(ctx)) // frees c's snapshots: a prune
	turn(t, a, "completed", func() { writeT(t, ws, "a.txt", "a2\n") })
	list, err := a.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"M a.txt"}, paths(list[len(list)-1].Files), "staged.txt went into the base snapshot before the turn")
}

func TestUsageCountsAndOldestFirstAcrossSessions(t *testing.T) {
	ctx := context.Background()
	ws := realTemp(t)
	lim := Limits{CapBytes: 600 << 10}
	a := capSession(t, ws, ModeShadow, "a", lim)
	b := capSession(t, ws, ModeShadow, "b", lim)
	turn(t, a, "completed", func() { writeT(t, ws, "a.txt", "a1\n") })
	content := randomText(t, 200<<10)
	for i := range 8 {
		turn(t, b, "completed", func() { rewrite(t, ws, "b.txt", content, i) })
	}
	u, err := ProjectUsage(ctx, a.Plan())
	require.NoError(t, err)
	require.Equal(t, int64(600<<10), u.CapBytes)
	require.LessOrEqual(t, u.Bytes, u.CapBytes)
	require.Equal(t, 9, u.Turns+u.ExpiredTurns, "%+v", u)
	require.Greater(t, u.ExpiredTurns, 1, "%+v", u)
	list, err := a.ListTurns(ctx)
	require.NoError(t, err)
	require.True(t, list[0].Expired, "a's turn was the oldest of the project")
	turn(t, a, "completed", func() { writeT(t, ws, "a.txt", "a2\n") })
	list, err = a.ListTurns(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2}, numbers(list))
	require.False(t, list[1].Expired)
}
