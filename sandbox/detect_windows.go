//go:build windows

package sandbox

// detect: Windows has no equivalent process-level file-system sandbox; the
// engine falls back to the workspace path heuristic (not a security boundary).
func detect() Status {
	return Status{Kind: KindNone, Reason: "Windows has no process-level file-system sandbox; shellPolicy workspace falls back to the path heuristic"}
}
