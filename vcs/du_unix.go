//go:build unix

package vcs

import (
	"io/fs"
	"syscall"
)

// allocated is the space a file takes on disk: its blocks, which for a
// small loose object is more than its size.
func allocated(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Blocks > 0 {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
