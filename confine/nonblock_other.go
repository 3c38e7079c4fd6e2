//go:build !unix

package confine

// oNonblock: Windows has no FIFOs in the file system to block on.
const oNonblock = 0
