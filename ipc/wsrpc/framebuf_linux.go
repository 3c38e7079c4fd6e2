//go:build linux

package wsrpc

import "golang.org/x/sys/unix"

// allocFrameMem maps anonymous memory outside the Go heap: no page is
// resident until a frame is written to it, and the garbage collector
// neither scans nor keeps it.
func allocFrameMem(size int) ([]byte, error) {
	return unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
}

// releaseFrameMem drops the pages a frame of used bytes touched
// (MADV_DONTNEED): they stop counting in the RSS at once and read as
// zeros. The mapping stays for the next frame.
func releaseFrameMem(mem []byte, used int) []byte {
	page := unix.Getpagesize()
	end := min(len(mem), (used+page-1)/page*page)
	if end > 0 {
		_ = unix.Madvise(mem[:end], unix.MADV_DONTNEED) // advice: on failure the pages stay resident
	}
	return mem
}
