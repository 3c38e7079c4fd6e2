//go:build !unix

package atomicfile

import "os"

// syncDir does nothing where a directory cannot be opened for a sync
// (Windows: the rename is MoveFileEx with MOVEFILE_REPLACE_EXISTING, which
// NTFS journals).
func syncDir(*os.Root, string) {}
