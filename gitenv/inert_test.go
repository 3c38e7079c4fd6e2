//go:build !windows

package gitenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostile is a repository whose own config, attributes and hooks name a
// program for every way git runs one; each program appends its tag to
// marker.
type hostile struct {
	dir, marker string
	bin         string
}

func newHostile(t *testing.T) *hostile {
	t.Helper()
	h := &hostile{dir: realDir(t), bin: needGit(t)}
	h.marker = filepath.Join(realDir(t), "ran")
	newRepo(t, h.dir)
	write(t, filepath.Join(h.dir, "b.bin"), "b\n")
	setup(t, h.dir, "add", "b.bin")
	setup(t, h.dir, "commit", "-q", "-m", "two")
	// A commit with a (fake) signature for log --show-signature.
	tree := setup(t, h.dir, "rev-parse", "HEAD^{tree}")
	head := setup(t, h.dir, "rev-parse", "HEAD")
	obj := fmt.Sprintf("tree %s\nparent %s\nauthor T <t@example.com> 1700000000 +0000\ncommitter T <t@example.com> 1700000000 +0000\n"+
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n", tree, head)
	cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = h.dir, baseEnv(t), strings.NewReader(obj)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	setup(t, h.dir, "update-ref", "HEAD", strings.TrimSpace(string(out)))
	// A remote to fetch from.
	remote := realDir(t)
	newRepo(t, remote)

	cfg := map[string]string{
		"core.fsmonitor":           h.prog(t, "fsmonitor"),
		"filter.evil.clean":        h.prog(t, "clean"),
		"filter.evil.smudge":       h.prog(t, "smudge"),
		"filter.evil.required":     "true",
		"diff.evil.textconv":       h.prog(t, "textconv"),
		"diff.external":            h.prog(t, "external"),
		"gpg.program":              h.prog(t, "gpg"),
		"core.pager":               h.prog(t, "pager"),
		"alias.st":                 "!" + h.prog(t, "alias"),
		"credential.helper":        h.prog(t, "credential"),
		"remote.origin.url":        remote,
		"remote.origin.fetch":      "+refs/heads/*:refs/remotes/origin/*",
		"remote.origin.uploadpack": h.prog(t, "uploadpack"),
		"core.sshCommand":          h.prog(t, "ssh"),
		"include.path":             "../included.cfg", // repo-relative include
	}
	for k, v := range cfg {
		setup(t, h.dir, "config", k, v)
	}
	// The included file (in the work tree) adds a URL-scoped helper.
	write(t, filepath.Join(h.dir, "included.cfg"), "[credential \"https://example.com\"]\n\thelper = "+h.prog(t, "credential-url")+"\n")
	write(t, filepath.Join(h.dir, ".gitattributes"), "*.txt filter=evil\n")
	write(t, filepath.Join(h.dir, ".git", "info", "attributes"), "*.bin diff=evil\n")
	for _, hook := range []string{"reference-transaction", "post-checkout", "post-index-change"} {
		p := h.prog(t, "hook-"+hook)
		if err := os.Symlink(p, filepath.Join(h.dir, ".git", "hooks", hook)); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(h.dir, "a.txt"), "a changed\n")
	write(t, filepath.Join(h.dir, "b.bin"), "b changed\n")
	return h
}

// prog writes a program that appends tag to the marker; filters pass their
// input through.
func (h *hostile) prog(t *testing.T, tag string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(h.marker), tag+".sh")
	body := "#!/bin/sh\necho " + tag + " >> " + h.marker + "\n"
	if tag == "clean" || tag == "smudge" {
		body += "exec cat\n"
	}
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// attacks are git commands that each run some of the programs above.
var attacks = []struct {
	args  []string
	stdin string
}{
	{args: []string{"status"}},
	{args: []string{"diff"}},
	{args: []string{"log", "-p", "-2"}},
	{args: []string{"log", "--show-signature", "-1"}},
	{args: []string{"st"}},
	{args: []string{"credential", "fill"}, stdin: "protocol=https\nhost=example.com\n\n"},
	{args: []string{"fetch", "-q", "origin"}},
	{args: []string{"add", "a.txt"}},
	{args: []string{"checkout", "-q", "-b", "other"}},
	{args: []string{"checkout", "-q", "--", "a.txt"}},
}

// run runs every attack with env and returns the tags that ran.
func (h *hostile) run(t *testing.T, env []string) (ran []string, outputs map[string]string) {
	t.Helper()
	outputs = map[string]string{}
	for _, a := range attacks {
		cmd := exec.Command(h.bin, a.args...)
		cmd.Dir, cmd.Env = h.dir, env
		cmd.Stdin = strings.NewReader(a.stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		outputs[strings.Join(a.args, " ")] = fmt.Sprintf("err=%v\n%s", err, out.String())
	}
	b, _ := os.ReadFile(h.marker)
	for tag := range strings.FieldsSeq(string(b)) {
		if !slices.Contains(ran, tag) {
			ran = append(ran, tag)
		}
	}
	_ = os.Remove(h.marker)
	slices.Sort(ran)
	return ran, outputs
}

// TestEnvIsInert shows that each attack is live under a plain environment
// and that under Env none of the repository's programs runs.
func TestEnvIsInert(t *testing.T) {
	control := newHostile(t)
	ran, _ := control.run(t, append(baseEnv(t), "GIT_TERMINAL_PROMPT=0"))
	for _, want := range []string{"fsmonitor", "clean", "smudge", "textconv", "external", "gpg", "alias", "credential", "credential-url", "uploadpack", "hook-reference-transaction", "hook-post-checkout"} {
		if !slices.Contains(ran, want) {
			t.Errorf("control: %s did not run (ran %v); the attack is not live", want, ran)
		}
	}

	h := newHostile(t)
	r, err := Open(context.Background(), h.bin, h.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"filter.evil.clean=", "filter.evil.required=false", "diff.evil.textconv=cat", "diff.external=", "alias.st="} {
		if !slices.Contains(r.Blanked(), want) {
			t.Errorf("Blanked() = %v, missing %s", r.Blanked(), want)
		}
	}
	ran, outputs := h.run(t, r.Env(baseEnv(t)))
	if len(ran) > 0 {
		t.Errorf("inert git ran the repository's programs: %v", ran)
		for k, v := range outputs {
			t.Logf("git %s: %s", k, v)
		}
	}
	for _, ok := range []string{"status", "log -p -2", "log --show-signature -1", "add a.txt"} {
		if !strings.HasPrefix(outputs[ok], "err=<nil>") {
			t.Errorf("inert git %s failed: %s", ok, outputs[ok])
		}
	}
}

// TestEnvPinsRepository: the run uses the pinned repository and stops
// discovery at the project, whatever the inherited GIT_* variables say.
func TestEnvPinsRepository(t *testing.T) {
	bin := needGit(t)
	parent := realDir(t)
	newRepo(t, parent)
	proj := filepath.Join(parent, "proj")
	write(t, filepath.Join(proj, "x.txt"), "x\n")
	base := append(baseEnv(t), "GIT_DIR="+filepath.Join(parent, ".git"), "GIT_WORK_TREE="+parent)
	cmd := exec.Command(bin, "rev-parse", "--git-dir")
	cmd.Dir, cmd.Env = proj, Repo{Project: proj}.Env(base)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not a git repository") {
		t.Fatalf("a project inside a repository used the parent: %v %s", err, out)
	}
	newRepo(t, proj)
	r, err := Open(context.Background(), bin, proj)
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(bin, "rev-parse", "--absolute-git-dir", "--show-toplevel")
	cmd.Dir, cmd.Env = filepath.Join(proj), r.Env(base)
	out, err = cmd.Output()
	if err != nil || string(out) != filepath.Join(proj, ".git")+"\n"+proj+"\n" {
		t.Fatalf("rev-parse = %q, %v", out, err)
	}
}
