// Package deptest checks the arrows between the sidecar's layers: each
// layer's deps_test.go lists what it must not depend on and why, and Check
// fails the test naming the import chain that breaks a rule. It is modelled
// on tailscale's tstest/deptest and reads the graph from
// `go list -deps -json`, so it sees exactly what the build links (for the
// GOOS and GOARCH asked), test files excluded.
//
// Rules name packages by import path. A path ending in "/..." stands for
// that package and every package below it, as in the go command. Every
// banned or allowed path of this module must exist (a renamed package would
// otherwise leave a rule that can no longer fail).
package deptest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Module is the sidecar's module path.
const Module = "github.com/zqagent/sidecar"

// DepChecker is one layer's rules.
type DepChecker struct {
	// Pkgs are the package patterns to check, relative to the test's
	// directory or import paths; default "." (the test's own package).
	// "./..." checks the layer with its sub-packages.
	Pkgs []string
	// GOOS and GOARCH select the build; empty is the host's.
	GOOS, GOARCH string
	// Tags are extra build tags, comma-separated.
	Tags string

	// BadDeps maps a banned package (or "p/..." pattern) to why it is
	// banned.
	BadDeps map[string]string
	// Allow maps a package (or pattern) that BadDeps would ban to why it is
	// allowed all the same: the one exception to a banned tree.
	Allow map[string]string
	// StdOnly, when set, says why the packages may depend on the standard
	// library only (a leaf).
	StdOnly string
	// Direct checks the packages' own imports only, not what those import:
	// for a rule about which layer a package reaches through.
	Direct bool
}

// pkg is the part of `go list -json` that Check reads.
type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
	DepOnly    bool
	Dir        string
}

// Check runs the rules and reports every breach with t.Errorf.
func (c DepChecker) Check(t testing.TB) {
	t.Helper()
	graph, roots, err := c.list()
	if err != nil {
		t.Fatalf("deptest: %v", err)
	}
	if len(roots) == 0 {
		t.Fatalf("deptest: %q matched no package", c.patterns())
	}
	c.checkRulesExist(t)
	for _, root := range roots {
		for dep, chain := range c.deps(graph, root) {
			if why := c.breach(graph, dep); why != "" {
				t.Errorf("%s depends on %s (%s): %s", root, dep, strings.Join(chain, " → "), why)
			}
		}
	}
}

// breach says why dep is not allowed, or "" when it is.
func (c DepChecker) breach(graph map[string]*pkg, dep string) string {
	if c.StdOnly != "" {
		if p := graph[dep]; p == nil || !p.Standard {
			return "not in the standard library; " + c.StdOnly
		}
	}
	why, banned := match(c.BadDeps, dep)
	if !banned {
		return ""
	}
	if _, allowed := match(c.Allow, dep); allowed {
		return ""
	}
	return why
}

// match returns the reason of the rule in rules that dep falls under.
func match(rules map[string]string, dep string) (string, bool) {
	for pat, why := range rules {
		if base, tree := strings.CutSuffix(pat, "/..."); tree {
			if dep == base || strings.HasPrefix(dep, base+"/") {
				return why, true
			}
		} else if dep == pat {
			return why, true
		}
	}
	return "", false
}

// deps returns root's dependencies, each with the import chain that leads
// to it from root (a shortest one).
func (c DepChecker) deps(graph map[string]*pkg, root string) map[string][]string {
	out := map[string][]string{}
	queue := []string{root}
	from := map[string]string{root: ""}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		p := graph[cur]
		if p == nil {
			continue // "C", or a package go list did not describe
		}
		for _, imp := range p.Imports {
			if _, seen := from[imp]; seen || imp == "C" {
				continue
			}
			from[imp] = cur
			var chain []string
			for at := imp; at != ""; at = from[at] {
				chain = append(chain, at)
			}
			slices.Reverse(chain)
			out[imp] = chain
			if !c.Direct {
				queue = append(queue, imp)
			}
		}
	}
	return out
}

func (c DepChecker) patterns() []string {
	if len(c.Pkgs) == 0 {
		return []string{"."}
	}
	return c.Pkgs
}

func (c DepChecker) env() []string {
	env := os.Environ()
	if c.GOOS != "" {
		env = append(env, "GOOS="+c.GOOS)
	}
	if c.GOARCH != "" {
		env = append(env, "GOARCH="+c.GOARCH)
	}
	return env
}

// list runs go list and returns the graph by import path and the checked
// packages.
func (c DepChecker) list() (map[string]*pkg, []string, error) {
	args := []string{"list", "-deps", "-json=ImportPath,Imports,Standard,DepOnly,Dir"}
	if c.Tags != "" {
		args = append(args, "-tags="+c.Tags)
	}
	cmd := exec.Command("go", append(args, c.patterns()...)...)
	cmd.Env = c.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list: %w\n%s", err, stderr.Bytes())
	}
	graph := map[string]*pkg{}
	var roots []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("decode go list: %w", err)
		}
		graph[p.ImportPath] = &p
		if !p.DepOnly {
			roots = append(roots, p.ImportPath)
		}
	}
	sort.Strings(roots)
	return graph, roots, nil
}

// checkRulesExist fails on a rule that names a package of this module that
// does not exist.
func (c DepChecker) checkRulesExist(t testing.TB) {
	t.Helper()
	var paths []string
	for _, rules := range []map[string]string{c.BadDeps, c.Allow} {
		for pat := range rules {
			paths = append(paths, strings.TrimSuffix(pat, "/..."))
		}
	}
	sort.Strings(paths)
	var root string
	for _, p := range paths {
		rel, ok := strings.CutPrefix(p, Module)
		if !ok || (rel != "" && rel[0] != '/') {
			continue
		}
		if root == "" {
			out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", Module).Output()
			if err != nil {
				t.Fatalf("deptest: find the module's directory: %v", err)
			}
			root = strings.TrimSpace(string(out))
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			t.Errorf("deptest: the rule names %s, which does not exist (renamed or moved? update the rule): %v", p, err)
		}
	}
}
