//go:build !linux

package wsrpc

// allocFrameMem allocates a buffer on the Go heap.
func allocFrameMem(size int) ([]byte, error) { return make([]byte, size), nil }

// releaseFrameMem lets go of the buffer: the next frame allocates again,
// and ReleaseMemory gives the freed heap back to the OS.
func releaseFrameMem([]byte, int) []byte { return nil }
