package gitenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// openTimeout bounds the one git call of Open.
const openTimeout = 10 * time.Second

// scanPattern selects the repository settings Open looks at: core.worktree
// (checked) and the name-keyed or unblankable ones that run programs
// (overridden). git lowercases section and key names, never subsections.
const scanPattern = `^(core\.worktree|include\.path|includeif\..+\.path|core\.alternaterefscommand|diff\.external|interactive\.difffilter|` +
	`filter\..+\.(clean|smudge|process|required)|diff\..+\.(textconv|command)|merge\..+\.driver|` +
	`(difftool|mergetool)\..+\.cmd|alias\..+|user\.(name|email))$`

// blankValue is the harmless value of a scanned key: false for
// filter.<x>.required, cat for a textconv (the text as it is), else empty:
// nothing to run (filters) or a program git cannot run, so that the command
// fails (diff.external, diff.<x>.command, an alias).
func blankValue(key string) string {
	switch {
	case strings.HasSuffix(key, ".required"):
		return "false"
	case strings.HasSuffix(key, ".textconv"):
		return "cat"
	}
	return ""
}

// Open returns project's own repository for inert runs. project must be an
// absolute path with symlinks resolved. It uses <project>/.git only (a
// directory, or a .git file or link that resolves inside the project),
// never a repository above the project; ErrNoRepo when there is none. A
// .git file or link, a commondir or a core.worktree that points outside
// the project, and a git directory that leads outside it through a link or
// an alternates entry (CheckLayout) or whose config includes a file
// outside it, are refused with an *OutsideError. It
// runs git (bin) once, inert, to read core.worktree and the name-keyed
// settings Env must blank.
func Open(ctx context.Context, bin, project string) (Repo, error) {
	gitDir, err := gitDirOf(project)
	if err != nil {
		return Repo{}, err
	}
	if err := CheckLayout(ctx, project, gitDir); err != nil {
		return Repo{}, err
	}
	r := Repo{Project: project, GitDir: gitDir, WorkTree: project}
	if err := r.scan(ctx, bin); err != nil {
		return Repo{}, err
	}
	if err := r.scanSubmodules(ctx, bin); err != nil {
		return Repo{}, err
	}
	return r, nil
}

// Commands is the Repo that inert commands in project (auto-allowed
// run_shell) see: Open's repository; without one, no GIT_DIR, so that git
// finds only repositories inside the project; a repository pointing outside
// gets GIT_DIR=os.DevNull, which makes every git command that needs a
// repository fail. The error says why the repository was not pinned.
//
// As the user's global config is not read, the user's identity (user.name
// and user.email of their global config, data only) is passed on as
// GIT_AUTHOR_*/GIT_COMMITTER_* unless the repository sets its own, so that
// an auto-allowed git commit is still theirs.
func Commands(ctx context.Context, bin, project string) (Repo, error) {
	r, err := Open(ctx, bin, project)
	switch {
	case err == nil:
	case errors.Is(err, ErrNoRepo):
		r = Repo{Project: project}
	default:
		return Repo{Project: project, GitDir: os.DevNull}, err
	}
	if !r.ownIdentity {
		r.identity = userIdentity(bin)
	}
	return r, err
}

// userIdentity reads user.name and user.email from the user's global
// config once per process, as GIT_AUTHOR_*/GIT_COMMITTER_* variables.
var userIdentity = newIdentityReader()

// newIdentityReader returns a userIdentity with its own cache.
func newIdentityReader() func(bin string) []string {
	var (
		once sync.Once
		vars []string
	)
	return func(bin string) []string {
		once.Do(func() {
			for _, kv := range [][2]string{{"user.name", "NAME"}, {"user.email", "EMAIL"}} {
				ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
				cmd := exec.CommandContext(ctx, bin, "config", "--global", "--get", kv[0])
				cmd.Env = append(minimalEnv(), "XDG_CONFIG_HOME="+os.Getenv("XDG_CONFIG_HOME"))
				out, err := cmd.Output()
				cancel()
				if v := strings.TrimSpace(string(out)); err == nil && v != "" && !strings.ContainsAny(v, "\x00\n") {
					vars = append(vars, "GIT_AUTHOR_"+kv[1]+"="+v, "GIT_COMMITTER_"+kv[1]+"="+v)
				}
			}
		})
		return vars
	}
}

// gitDirOf finds the git directory of <project>/.git, inside the project.
func gitDirOf(project string) (string, error) {
	dotgit := filepath.Join(project, ".git")
	fi, err := os.Lstat(dotgit)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s has no .git", ErrNoRepo, project)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoRepo, err)
	}
	var gitDir string
	switch {
	case fi.IsDir():
		gitDir = dotgit
	case fi.Mode()&fs.ModeSymlink != 0:
		if gitDir, err = inside(project, ".git link", dotgit); err != nil {
			return "", err
		}
	case fi.Mode().IsRegular():
		target, err := readGitfile(dotgit)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(project, target)
		}
		if gitDir, err = inside(project, ".git file", target); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("%w: %s is not a directory or a .git file", ErrNoRepo, dotgit)
	}
	return gitDir, nil
}

// readGitfile reads the "gitdir: <path>" line of a .git file.
func readGitfile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoRepo, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoRepo, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "gitdir: ")
	if !ok || target == "" {
		return "", fmt.Errorf("%w: %s is not a gitdir file", ErrNoRepo, name)
	}
	return target, nil
}

// inside resolves p (symlinks included) and checks that it is project or
// below it.
func inside(project, what, p string) (string, error) {
	return insideAny([]string{project}, what, p)
}

// insideAny is inside for several roots (the project first, named in the
// error).
func insideAny(roots []string, what, p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		real = filepath.Clean(p) // a dangling target: judge the path itself
	}
	if !withinAny(roots, real) {
		return "", &OutsideError{Project: roots[0], What: what, Target: real}
	}
	if err != nil {
		return "", fmt.Errorf("%w: %s %s: %v", ErrNoRepo, what, p, err)
	}
	return real, nil
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// withinAny reports whether p is one of roots or below one.
func withinAny(roots []string, p string) bool {
	for _, r := range roots {
		if within(r, p) {
			return true
		}
	}
	return false
}

// minimalEnv is the environment of Open's own git call: enough to find and
// run git, nothing else of the sidecar's (no secrets).
func minimalEnv() []string {
	env := []string{"LC_ALL=C"}
	for _, name := range []string{"PATH", "HOME", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// scan reads the settings of scanPattern with the same inert environment
// as the runs it prepares, checks core.worktree and records the blanks.
func (r *Repo) scan(ctx context.Context, bin string) error {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "config", "-z", "--show-origin", "--get-regexp", scanPattern)
	cmd.Dir = r.Project
	cmd.Env = r.Env(minimalEnv())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0:
		return nil // no such setting
	case ctx.Err() != nil:
		return fmt.Errorf("git config: %w", ctx.Err())
	case strings.Contains(stderr.String(), "not a git repository"):
		return fmt.Errorf("%w: %s", ErrNoRepo, strings.TrimSpace(stderr.String()))
	default:
		return fmt.Errorf("git config: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	seen := map[string]bool{}
	// --show-origin -z: "<origin>\0<key>\n<value>\0" per setting.
	recs := strings.Split(stdout.String(), "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		origin, _ := strings.CutPrefix(recs[i], "file:") // else "command line:": ours
		if origin == recs[i] {
			origin = ""
		}
		key, value, _ := strings.Cut(recs[i+1], "\n")
		if key == "" {
			continue
		}
		if key == "include.path" || (strings.HasPrefix(key, "includeif.") && strings.HasSuffix(key, ".path")) {
			if err := r.checkInclude(key, value, origin); err != nil {
				return err
			}
			continue
		}
		if key == "user.name" || key == "user.email" {
			r.ownIdentity = true // the repository's identity stays in force
			continue
		}
		if key == "core.worktree" {
			wt := value
			if !filepath.IsAbs(wt) {
				wt = filepath.Join(r.GitDir, wt)
			}
			if _, err := insideAny(r.allowed(), "core.worktree", wt); errors.Is(err, ErrOutside) {
				return err
			}
			continue
		}
		if !seen[key] {
			seen[key] = true
			r.blank = append(r.blank, key+"="+blankValue(key))
		}
	}
	return nil
}

// checkInclude refuses a config include (include.path, includeIf.*.path,
// whatever its condition) that names a file outside the project: git
// would read it as the repository's config, and `git config --list` would
// show it (another repository's remote URL, the user's global settings).
// A relative path is relative to the file holding the include (origin);
// "~/" and "%(prefix)/" lead outside.
func (r *Repo) checkInclude(key, value, origin string) error {
	what := key
	if origin != "" {
		what += " in " + origin
	}
	p := value
	switch {
	case strings.HasPrefix(p, "~"), strings.HasPrefix(p, "%(prefix)"):
		return &OutsideError{Project: r.Project, What: what, Target: value}
	case !filepath.IsAbs(p):
		dir := r.GitDir
		if origin != "" {
			if !filepath.IsAbs(origin) {
				origin = filepath.Join(r.Project, origin)
			}
			dir = filepath.Dir(origin)
		}
		p = filepath.Join(dir, p)
	}
	_, err := insideAny(r.allowed(), what, p)
	if errors.Is(err, ErrOutside) {
		return err
	}
	return nil
}

// allowed are the folders r's repository may lead to.
func (r *Repo) allowed() []string {
	if len(r.roots) > 0 {
		return r.roots
	}
	return []string{r.Project}
}
