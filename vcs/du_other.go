//go:build !unix

package vcs

import "io/fs"

// allocated is the space a file takes on disk; without block counts, its
// size.
func allocated(fi fs.FileInfo) int64 { return fi.Size() }
