package vcs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gitT runs git for the test itself (setting up repositories, observing the
// user's state) with a clean config and no optional locks, so observing never
// rewrites the index.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// newRepo makes a git repository with one commit of tracked.txt and
// README.md on branch main.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := realTemp(t)
	gitT(t, dir, "init", "-q")
	writeT(t, dir, "tracked.txt", "tracked v1\n")
	writeT(t, dir, "README.md", "# readme\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// realTemp is a temporary directory with symlinks resolved (macOS /var).
func realTemp(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return dir
}

func writeT(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func readT(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(b)
}

func removeT(t testing.TB, dir, rel string) {
	t.Helper()
	require.NoError(t, os.Remove(filepath.Join(dir, filepath.FromSlash(rel))))
}

func existsT(dir, rel string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
	return err == nil
}

// session resolves a plan for ws in mode and opens session id.
func session(t testing.TB, ws string, mode Mode, id string) *SessionVCS {
	t.Helper()
	p := ResolvePlan(context.Background(), ws, Config{ShadowRoot: testShadowRoot, Mode: mode})
	require.True(t, p.Enabled(), "plan: %+v", p)
	return NewSession(p, id)
}

// turn runs one turn: BeginTurn, edit, CommitTurn.
func turn(t testing.TB, s *SessionVCS, status string, edit func()) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.BeginTurn(ctx))
	edit()
	require.NoError(t, s.CommitTurn(ctx, status))
}

// tree hashes every file under dir except .git and .agent/vcs: path ->
// content hash (symlinks by target).
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || rel == ".agent/vcs" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel] = "link:" + target
			return err
		}
		b, err := os.ReadFile(p)
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return err
	})
	require.NoError(t, err)
	return out
}

func paths(files []FileChange) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Status+" "+f.Path)
	}
	sort.Strings(out)
	return out
}

func numbers(turns []Turn) []int {
	var out []int
	for _, t := range turns {
		out = append(out, t.Number)
	}
	return out
}
