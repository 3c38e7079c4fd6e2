package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
)

// Target is a confined path: the os.Root of the workspace or grant that
// holds it, the path relative to that root (symlinks inside it resolved),
// the real absolute path (the conflict Guard's key) and the name shown to
// the model.
type Target struct {
	Root    *os.Root
	Rel     string
	Real    string
	Display string
}

// afterResolve runs between the confinement check and the file operation;
// tests use it to swap a directory for a link at the worst moment.
var afterResolve func(real string)

// Open confines p for reading (write false) or writing (write true). The
// caller closes the Target.
func Open(ws *confine.Workspace, p string, write bool) (*Target, error) {
	if strings.TrimSpace(p) == "" {
		return nil, fmt.Errorf("%w: path is required", tools.ErrInvalidArgs)
	}
	if strings.ContainsRune(p, 0) {
		return nil, fmt.Errorf("%w: path contains a NUL byte", tools.ErrInvalidArgs)
	}
	real, err := ws.Resolve(p, write)
	if err != nil {
		return nil, mapFSError("resolve", p, err)
	}
	root, _, err := ws.Open(p, write)
	if err != nil {
		return nil, mapFSError("open", p, err)
	}
	// Operate on the resolved path, so that a link inside the workspace is
	// written through (the link stays a link) rather than replaced.
	rel, err := filepath.Rel(root.Name(), real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		root.Close()
		return nil, fmt.Errorf("%w: %s", tools.ErrOutsideWorkspace, p)
	}
	if afterResolve != nil {
		afterResolve(real)
	}
	return &Target{Root: root, Rel: rel, Real: real, Display: ws.Rel(real)}, nil
}

// Close releases the root.
func (t *Target) Close() error { return t.Root.Close() }
