//go:build !unix

package search

import (
	"io"
	"os"
)

// readFile reads the file at p into buf (grown as needed). A file whose
// first chunk is binary is not read further.
func readFile(p string, buf []byte) (data, newBuf []byte, err error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, buf, err
	}
	defer f.Close()
	n := 0
	for {
		if n == len(buf) {
			if n >= maxFileSize {
				return nil, buf, errSkip
			}
			buf = append(buf, make([]byte, len(buf))...)
		}
		k, err := f.Read(buf[n:])
		n += k
		if err == io.EOF {
			return buf[:n], buf, nil
		}
		if err != nil {
			return nil, buf, err
		}
		if n == k && isBinary(buf[:n]) { // first chunk
			return buf[:n], buf, nil
		}
	}
}
