//go:build !unix

package search

import (
	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools/fs/ignore"
)

// openDirAt opens the subdirectory at rel through the run's root.
func (r *run) openDirAt(_ *dirRef, rel string, _ string) (*dirRef, error) {
	f, fi, err := confine.OpenRead(r.root, relPath(rel))
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		f.Close()
		return nil, errSkip
	}
	return newDirRef(f), nil
}

// readAt reads the regular file at rel through the run's root.
func (r *run) readAt(_ *dirRef, rel string, _ string, buf *[]byte) ([]byte, error) {
	if buf == nil {
		buf = new([]byte)
	}
	return r.readFile(rel, buf)
}

// ignoreOpener opens the ignore files of the directory at rel through the
// run's root.
func (r *run) ignoreOpener(_ *dirRef, rel string) ignore.Opener {
	return ignore.RootOpener(r.root, relPath(rel))
}
