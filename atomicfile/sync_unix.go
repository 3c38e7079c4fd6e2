//go:build unix

package atomicfile

import "os"

// syncDir flushes dir's entries, so that the rename survives a crash.
func syncDir(root *os.Root, dir string) {
	if d, err := root.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
