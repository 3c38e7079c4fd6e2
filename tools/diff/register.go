package diff

import (
	"github.com/zqagent/sidecar/confine"
	"github.com/zqagent/sidecar/tools"
	"github.com/zqagent/sidecar/tools/conflict"
)

// RegisterDiffTools registers apply_patch and apply_unified_diff for the
// workspace ws. guard may be nil (no conflict detection).
func RegisterDiffTools(reg *tools.Registry, ws *confine.Workspace, guard *conflict.Guard) {
	reg.MustRegister(applyPatchSpec(ws, guard))
	reg.MustRegister(applyUnifiedSpec(ws, guard))
}
