package deptest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}

func run(t *testing.T, c DepChecker) []string {
	t.Helper()
	r := &recorder{TB: t}
	c.Check(r)
	return r.errs
}

// The checker reports a banned transitive dependency with the chain that
// leads to it, honours Allow and "/..." trees, and a rule that names a
// package of the module that does not exist fails rather than passing
// forever. The package checked is a real one: engine/permission imports
// confine, which imports tools.
func TestCheck(t *testing.T) {
	perm := Module + "/engine/permission"
	tests := []struct {
		name string
		c    DepChecker
		want []string // substrings, one per error; nil: no error
	}{
		{"banned direct", DepChecker{Pkgs: []string{perm}, BadDeps: map[string]string{Module + "/confine": "no"}},
			[]string{"engine/permission depends on " + Module + "/confine (" + perm + " → " + Module + "/confine): no"}},
		{"banned tree, transitive", DepChecker{Pkgs: []string{perm}, BadDeps: map[string]string{Module + "/tools/...": "tools"}},
			[]string{"depends on " + Module + "/tools ("}},
		{"allowed exception", DepChecker{Pkgs: []string{perm},
			BadDeps: map[string]string{Module + "/tools/...": "tools"}, Allow: map[string]string{Module + "/tools": "the registry"}}, nil},
		{"direct only", DepChecker{Pkgs: []string{perm}, Direct: true, BadDeps: map[string]string{Module + "/llm": "x"}}, nil},
		{"std only", DepChecker{Pkgs: []string{Module + "/gitenv"}, StdOnly: "leaf"}, nil},
		{"std only breached", DepChecker{Pkgs: []string{perm}, StdOnly: "leaf"}, []string{"not in the standard library; leaf"}},
		{"rule names a missing package", DepChecker{Pkgs: []string{perm}, BadDeps: map[string]string{Module + "/nosuch/...": "x"}},
			[]string{"names " + Module + "/nosuch, which does not exist"}},
		{"on linux", DepChecker{Pkgs: []string{Module + "/keychain"}, GOOS: "linux", BadDeps: map[string]string{"github.com/danieljoos/wincred": "x"}}, nil},
		{"on windows", DepChecker{Pkgs: []string{Module + "/keychain"}, GOOS: "windows", BadDeps: map[string]string{"github.com/danieljoos/wincred": "x"}},
			[]string{"depends on github.com/danieljoos/wincred"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := run(t, tc.c)
			if tc.want == nil {
				if len(errs) != 0 {
					t.Fatalf("errors: %q", errs)
				}
				return
			}
			for _, w := range tc.want {
				found := false
				for _, e := range errs {
					found = found || strings.Contains(e, w)
				}
				if !found {
					t.Errorf("no error has %q; got %q", w, errs)
				}
			}
		})
	}
}
