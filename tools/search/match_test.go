package search

import (
	"bytes"
	"reflect"
	"regexp"
	"testing"
)

// naiveLines is the reference: split into lines, run the regexp on each.
func naiveLines(re *regexp.Regexp, data []byte) []int {
	var out []int
	if len(data) == 0 {
		return nil // an empty file has no lines
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if re.Match(l) {
			out = append(out, i+1)
		}
	}
	return out
}

func scanLines(m *matcher, data []byte) []int {
	var out []int
	m.scan(data, func(line, start, end int) bool {
		out = append(out, line)
		return true
	})
	return out
}

func TestMatcherPrefilters(t *testing.T) {
	tests := []struct {
		pattern  string
		lit      string
		fold     bool
		complete bool
	}{
		{"func main", "func main", false, true},
		{`errors\.New\("[a-z]+`, `errors.New("`, false, false},
		{`\w+Error\b`, "Error", false, false},
		{`(?i)deadline exceeded`, "", true, false},
		{`(?i)task`, "", true, false}, // "ta" (k may be the Kelvin sign)
		{`a|b`, "", false, false},
		{`x*`, "", false, false},
	}
	for _, tc := range tests {
		m, err := newMatcher(tc.pattern, false)
		if err != nil {
			t.Fatal(err)
		}
		lit, fold := "", false
		if m.lit != nil {
			lit, fold = string(m.lit.lit), m.lit.fold
		}
		if (!fold && lit != tc.lit) || fold != tc.fold || m.complete != tc.complete {
			t.Errorf("%q: lit %q fold %v complete %v", tc.pattern, lit, fold, m.complete)
		}
	}
	// The Kelvin sign folds to k: the prefilter must not lose the line.
	m, _ := newMatcher("task", true)
	if got := scanLines(m, []byte("no\nTAS\u212A\n")); !reflect.DeepEqual(got, []int{2}) {
		t.Fatalf("Kelvin sign line lost: %v", got)
	}
}

func FuzzMatcher(f *testing.F) {
	seeds := []struct{ p, d string }{
		{"func main", "package x\nfunc main() {}\n"},
		{`errors\.New\("[a-z]+`, "x := errors.New(\"abc\")\nerrors.New(\"A\")"},
		{`(?i)hello`, "HeLLo\nbye\nhello"},
		{`^$`, "\n\na\n\n"},
		{`a\nb`, "a\nb\n"},
		{`\Afoo`, "foo\n foo\nfoo"},
		{`\bx\b|y$`, "x\r\nay\nxx\n"},
		{`(?i)ta[sk]`, "TAS\u212A\n"},
		{`[^a]+`, "aaa\nbab\n"},
	}
	for _, s := range seeds {
		f.Add(s.p, []byte(s.d), false)
	}
	f.Fuzz(func(t *testing.T, pattern string, data []byte, ignoreCase bool) {
		m, err := newMatcher(pattern, ignoreCase)
		if err != nil {
			return
		}
		want := naiveLines(m.re, data)
		if got := scanLines(m, data); !reflect.DeepEqual(got, want) {
			t.Fatalf("pattern %q on %q: scan %v, naive %v", pattern, data, got, want)
		}
	})
}

func TestFinder(t *testing.T) {
	tests := []struct {
		lit, data string
		fold      bool
		want      int
	}{
		{`errors.New("`, `x errors.New errors.New("a")`, false, 13},
		{"abc", "ab", false, -1},
		{"abc", "xxABCabc", false, 5},
		{"abc", "xxABCabc", true, 2},
		{"a", "bbba", false, 3},
		{"Zz", "zzZzZz", false, 2},
	}
	for _, tc := range tests {
		if got := newFinder(tc.lit, tc.fold).index([]byte(tc.data)); got != tc.want {
			t.Errorf("find %q in %q (fold %v) = %d, want %d", tc.lit, tc.data, tc.fold, got, tc.want)
		}
	}
}

func FuzzFinder(f *testing.F) {
	f.Add("abc", []byte("xxabcxx"), false)
	f.Add("Ab", []byte("aB ab AB"), true)
	f.Fuzz(func(t *testing.T, lit string, data []byte, fold bool) {
		if lit == "" {
			return
		}
		if fold {
			for _, c := range []byte(lit) {
				if c >= 0x80 {
					return // fold finders take ASCII literals only
				}
			}
		}
		want := bytes.Index(data, []byte(lit))
		if fold {
			want = bytes.Index(lowerASCII(data), lowerASCII([]byte(lit)))
		}
		if got := newFinder(lit, fold).index(data); got != want {
			t.Fatalf("find %q in %q (fold %v) = %d, want %d", lit, data, fold, got, want)
		}
	})
}

// lowerASCII lowers A-Z only, keeping every offset.
func lowerASCII(b []byte) []byte {
	out := bytes.Clone(b)
	for i, c := range out {
		if c >= 'A' && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	return out
}

func FuzzGlob(f *testing.F) {
	for _, g := range []string{"*.go", "src/**/*.ts", "!*_test.go", "*.{ts,tsx}", "[a-c]?.md", `a\*b`, "{", "[", "**"} {
		f.Add(g, "src/a/b.ts")
	}
	f.Fuzz(func(t *testing.T, glob, path string) {
		g, err := newGlobFilter([]string{glob})
		if err != nil {
			return
		}
		g.match(path) // must not panic
	})
}

func TestGlobFilter(t *testing.T) {
	tests := []struct {
		globs []string
		path  string
		want  bool
	}{
		{[]string{"*.go"}, "a/b/c.go", true},
		{[]string{"*.go"}, "a/b/c.gox", false},
		{[]string{"src/**/*.ts"}, "src/x.ts", true},
		{[]string{"src/**/*.ts"}, "src/a/b/x.ts", true},
		{[]string{"src/**/*.ts"}, "lib/src/x.ts", false},
		{[]string{"*.{ts,tsx}"}, "a.tsx", true},
		{[]string{"!*_test.go"}, "a_test.go", false},
		{[]string{"!*_test.go"}, "a.go", true},
		{[]string{"*.go", "!vendor/**"}, "vendor/x.go", false},
		{[]string{"[ab]?.md"}, "bz.md", true},
		{[]string{"[!ab]?.md"}, "bz.md", false},
		{[]string{"/top.txt"}, "top.txt", true},
	}
	for _, tc := range tests {
		g, err := newGlobFilter(tc.globs)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.match(tc.path); got != tc.want {
			t.Errorf("%v on %q = %v, want %v", tc.globs, tc.path, got, tc.want)
		}
	}
}
