//go:build unix

package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

// TestGrepFIFO: a FIFO in the repository, even one named .gitignore, never
// blocks grep (the test would hang on a blocking open: no writer ever
// comes); naming it is a clear error.
func TestGrepFIFO(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "needle\n"})
	for _, name := range []string{"pipe", ".gitignore"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Grep(context.Background(), ws, Query{Pattern: "needle"})
	if err != nil || res.Matches != 1 || res.Lines[0].Path != "a.txt" {
		t.Fatalf("grep over a tree with FIFOs: %+v %v", res, err)
	}
	_, err = Grep(context.Background(), ws, Query{Pattern: "needle", Path: "pipe"})
	var te *tools.ToolError
	if !errors.Is(err, confine.ErrSpecialFile) || !errors.As(err, &te) || te.Type != "special_file" || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("grep on a FIFO: %v", err)
	}
}

// TestGrepWalkSwappedLink: a goroutine keeps swapping a directory of the
// workspace for a link to a directory outside it while grep walks; no
// search ever yields a line from outside.
func TestGrepWalkSwappedLink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	files := map[string]string{}
	for _, d := range []string{"sub", "sub/deep"} {
		for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
			files[d+"/"+f] = "needle inside\n"
		}
	}
	writeTree(t, dir, files)
	writeTree(t, outside, map[string]string{"a.txt": "needle OUTSIDE\n", "deep/a.txt": "needle OUTSIDE\n", "x.txt": "needle OUTSIDE\n"})
	ws, err := confine.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	sub, saved := filepath.Join(dir, "sub"), filepath.Join(dir, ".saved")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			// sub -> link to outside, then back to the real directory.
			if os.Rename(sub, saved) != nil {
				t.Error("rename sub away")
				return
			}
			if os.Symlink(outside, sub) != nil {
				t.Error("symlink")
				return
			}
			for range 100 { // hold the link a while: real work, no sleep
				_, _ = os.Lstat(sub)
			}
			if os.Remove(sub) != nil || os.Rename(saved, sub) != nil {
				t.Error("swap back")
				return
			}
		}
	})
	for range 300 {
		res, err := Grep(context.Background(), ws, Query{Pattern: "needle", Workers: 2})
		if err != nil {
			continue // "sub" missing mid-swap is fine; leaking is not
		}
		for _, l := range res.Lines {
			if strings.Contains(l.Text, "OUTSIDE") {
				close(stop)
				wg.Wait()
				t.Fatalf("grep read outside the workspace: %+v", l)
			}
		}
	}
	close(stop)
	wg.Wait()
}
