package sandbox

// wrapBwrap builds a bubblewrap command line: the whole file system
// read-only, fresh /dev and /proc, the writable paths bound read-write on
// top (missing ones skipped), and the child killed when the sidecar dies.
func wrapBwrap(writable []string, argv []string) []string {
	out := make([]string, 0, 12+3*len(writable)+len(argv))
	out = append(out, "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	for _, p := range writable {
		out = append(out, "--bind-try", p, p)
	}
	out = append(out, "--die-with-parent", "--")
	return append(out, argv...)
}
