package proc

import (
	"bytes"
	"encoding/binary"
)

// procargsEnvHas reports whether a macOS kern.procargs2 buffer (int32 argc,
// the exec path, NUL padding, argc arguments, then the environment, each
// NUL-terminated) holds the variable tag exactly, or a value under tag+"/".
// It is plain parsing, kept here so that it is tested on every system.
func procargsEnvHas(b []byte, tag string) bool {
	if len(b) < 4 {
		return false
	}
	argc := int(binary.LittleEndian.Uint32(b[:4]))
	rest := b[4:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return false
	}
	rest = rest[i:]
	for len(rest) > 0 && rest[0] == 0 {
		rest = rest[1:]
	}
	for range argc {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
	}
	exact := []byte(jailEnv + "=" + tag)
	prefix := append(exact[:len(exact):len(exact)], '/')
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, 0)
		if i <= 0 {
			return false
		}
		if kv := rest[:i]; bytes.Equal(kv, exact) || bytes.HasPrefix(kv, prefix) {
			return true
		}
		rest = rest[i+1:]
	}
	return false
}
