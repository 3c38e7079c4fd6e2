package fs

import (
	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
)

// RegisterFileTools registers read_file, list_files, write_file and
// replace_in_file for the workspace ws. guard may be nil (no conflict
// detection).
func RegisterFileTools(reg *tools.Registry, ws *confine.Workspace, guard *conflict.Guard) {
	RegisterReadOnlyFileTools(reg, ws, guard)
	reg.MustRegister(writeFileSpec(ws, guard))
	reg.MustRegister(replaceInFileSpec(ws, guard))
}

// RegisterReadOnlyFileTools registers read_file and list_files only (for
// subagents and read-only modes). guard may be nil; when given, reads are
// recorded in it.
func RegisterReadOnlyFileTools(reg *tools.Registry, ws *confine.Workspace, guard *conflict.Guard) {
	reg.MustRegister(readFileSpec(ws, guard))
	reg.MustRegister(listFilesSpec(ws))
}
