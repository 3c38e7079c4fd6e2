package terminal

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/proc"
	"github.com/zqagent/sidecar/tools"
)

// resolveCwd returns the real paths of the project and of cwd, which must be
// a directory inside it once symlinks are resolved.
func resolveCwd(projectDir, cwd string) (root, dir string, err error) {
	ws, err := confine.New(projectDir)
	if err != nil {
		return "", "", fmt.Errorf("project directory: %w", err)
	}
	real, err := ws.Resolve(cwd, false)
	if err != nil {
		if errors.Is(err, tools.ErrOutsideWorkspace) {
			return "", "", fmt.Errorf("%w: %s", ErrOutsideProject, cwd)
		}
		return "", "", fmt.Errorf("cwd %s: %w", cwd, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", "", fmt.Errorf("cwd: %w", err)
	}
	if !fi.IsDir() {
		return "", "", fmt.Errorf("%w: cwd %s is not a directory", ErrInvalid, cwd)
	}
	return ws.Root(), real, nil
}

// buildSpec decides the program, arguments and environment of a terminal,
// and the command line shown for it.
func buildSpec(o CreateOptions, cwd string) (spawnSpec, string, error) {
	s := spawnSpec{Dir: cwd, Cols: o.Cols, Rows: o.Rows}
	if s.Cols == 0 {
		s.Cols = DefaultCols
	}
	if s.Rows == 0 {
		s.Rows = DefaultRows
	}
	var argv []string
	if len(o.Command) > 0 {
		if o.Command[0] == "" {
			return s, "", fmt.Errorf("%w: empty command", ErrInvalid)
		}
		argv = o.Command
	} else {
		sh := o.Shell
		if sh == "" {
			sh = defaultShell()
		}
		argv = append([]string{sh}, shellArgs(sh)...)
	}
	path, err := lookProgram(argv[0], cwd)
	if err != nil {
		return s, "", err
	}
	s.Path, s.Args = path, argv[1:]

	extra := []string{"TERM=xterm-256color", "COLORTERM=truecolor", "PWD=" + cwd}
	for _, k := range slices.Sorted(maps.Keys(o.Env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(o.Env[k], 0) {
			return s, "", fmt.Errorf("%w: environment variable %q", ErrInvalid, k)
		}
		extra = append(extra, k+"="+o.Env[k])
	}
	s.Env = proc.Env(nil, extra...)
	return s, strings.Join(argv, " "), nil
}

// lookProgram finds a program: a bare name on PATH, a relative path against
// the terminal's cwd.
func lookProgram(name, cwd string) (string, error) {
	if !strings.ContainsAny(name, `/\`) {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		return p, nil
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(cwd, name)
	}
	if _, err := os.Stat(name); err != nil {
		return "", fmt.Errorf("%w: program: %v", ErrInvalid, err)
	}
	return name, nil
}
