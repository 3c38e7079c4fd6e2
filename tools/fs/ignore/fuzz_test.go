package ignore

import (
	"io"
	"strings"
	"testing"
)

// FuzzLoad: any ignore file loads within the bounds and matches any path
// without panicking; a pattern that names a path literally ignores it.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{"*.log\n!keep.log\n", "build/\n/top\n", "a/**/b\n[\n{x,y}\n\\#h\n\\!n\n", "dir/\\ \n", "**\n", "/\n!\n"} {
		f.Add(s, "a/b/keep.log")
	}
	f.Fuzz(func(t *testing.T, data, rel string) {
		w := NewWalk()
		r := w.Load(nil, "", func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(data)), nil })
		r.Ignored(rel, false)
		r.Ignored(rel, true)
		r.IgnoredPath(rel)
		if w.patterns > MaxPatterns || w.globs > MaxGlobs || w.bytes > MaxBytes {
			t.Fatalf("bounds exceeded: %d patterns, %d globs, %d bytes", w.patterns, w.globs, w.bytes)
		}
		name := strings.Trim(rel, "/")
		if name != "" && !strings.ContainsAny(name, "*?[\\!# \r\n{}") && !strings.HasPrefix(name, ".") && !strings.Contains(name, "//") && !strings.Contains(name, "/.") {
			r := NewWalk().Load(nil, "", func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("/" + name + "\n")), nil })
			if !r.Ignored(name, false) {
				t.Fatalf("/%s does not ignore %s", name, name)
			}
		}
	})
}
