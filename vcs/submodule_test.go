package vcs

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSubmoduleConfigNeverRuns: a submodule (native mode: a real one;
// shadow mode: a nested repository) whose own config names a clean filter
// for its files. Snapshots never run git inside it, so the filter never
// runs, turn after turn, even when .gitmodules asks for ignore=none.
func TestSubmoduleConfigNeverRuns(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell filters")
	}
	for _, mode := range []Mode{ModeNative, ModeShadow} {
		t.Run(mode.String(), func(t *testing.T) {
			ws := realTemp(t)
			marker := filepath.Join(t.TempDir(), "ran")
			up := newRepo(t)
			if mode == ModeNative {
				ws = newRepo(t)
				gitT(t, ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", up, "sub")
				gitT(t, ws, "config", "-f", ".gitmodules", "submodule.sub.ignore", "none")
				gitT(t, ws, "commit", "-q", "-am", "sub")
			} else {
				gitT(t, ws, "clone", "-q", up, "sub")
			}
			sub := filepath.Join(ws, "sub")
			gitT(t, sub, "config", "filter.x.clean", markerProg(t, marker, "clean"))
			writeT(t, sub, ".gitattributes", "*.txt filter=x\n")
			stamp := 0
			touch := func() {
				stamp++
				when := time.Date(2030, 1, 1, 0, 0, stamp, 0, time.UTC)
				require.NoError(t, os.Chtimes(filepath.Join(sub, "tracked.txt"), when, when))
			}
			// The filter is live: the user's own git status runs it.
			touch()
			gitT(t, filepath.Dir(sub), "-C", sub, "status")
			touch()
			if mode == ModeNative {
				gitT(t, ws, "status")
			}
			require.FileExists(t, marker, "test setup: the submodule's clean filter should run for the user's git status")
			require.NoError(t, os.Remove(marker))

			s := session(t, ws, mode, "submodule")
			require.Equal(t, mode, s.Plan().Mode, s.Plan().Status)
			for range 3 {
				touch()
				turn(t, s, "completed", func() {
					touch()
					writeT(t, ws, "new.txt", time.Now().String())
				})
			}
			require.NoFileExists(t, marker, "a snapshot ran git inside the submodule")

			// The submodule is still recorded: a turn that moves its HEAD
			// changes it.
			turn(t, s, "completed", func() {
				gitT(t, sub, "-c", "filter.x.clean=", "commit", "-q", "--allow-empty", "-m", "moved")
			})
			turns, err := s.ListTurns(context.Background())
			require.NoError(t, err)
			require.Equal(t, []string{"M sub"}, paths(turns[len(turns)-1].Files))
			require.NoFileExists(t, marker, "a snapshot ran git inside the submodule")
		})
	}
}
