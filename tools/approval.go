package tools

import "context"

// userApprovedKey marks the context of a call the user approved.
type userApprovedKey struct{}

// WithUserApproved returns ctx marked as the context of a tool call the user
// approved by answering its permission request (once, always_tool or
// always_command). The engine sets it; a call allowed by a mode, an
// allowlist, a session grant or a default approval is not marked.
func WithUserApproved(ctx context.Context) context.Context {
	return context.WithValue(ctx, userApprovedKey{}, true)
}

// UserApproved reports whether ctx is marked by WithUserApproved. Handlers
// use it to run what the user saw with the user's own settings, and
// everything else inert (run_shell's git environment, for one).
func UserApproved(ctx context.Context) bool {
	v, _ := ctx.Value(userApprovedKey{}).(bool)
	return v
}
