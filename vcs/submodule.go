package vcs

import (
	"bytes"
	"context"
	"fmt"
)

// dropGitlinks removes every gitlink from the private index before git add
// --all restages the work tree. git add compares each indexed gitlink with
// its checkout by running git status inside it, whatever the config says
// (it overrides submodule.<name>.ignore), and that nested git reads the
// submodule's own config and attributes: a clean filter there would run.
// A gitlink that is not in the index is added again from the walk, which
// reads only the nested repository's HEAD, so the snapshot is unchanged.
func dropGitlinks(ctx context.Context, g *runner) error {
	out, err := g.output(ctx, nil, "ls-files", "-z", "--stage")
	if err != nil {
		return fmt.Errorf("list gitlinks: %w", err)
	}
	var drop bytes.Buffer
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		// "<mode> <oid> <stage>\t<path>"
		if !bytes.HasPrefix(rec, []byte(gitlinkMode+" ")) {
			continue
		}
		if _, path, ok := bytes.Cut(rec, []byte{'\t'}); ok {
			drop.Write(path)
			drop.WriteByte(0)
		}
	}
	if drop.Len() == 0 {
		return nil
	}
	if _, err := g.output(ctx, &drop, "update-index", "-z", "--force-remove", "--stdin"); err != nil {
		return fmt.Errorf("drop gitlinks: %w", err)
	}
	return nil
}
