package sandbox

// wrapBwrap builds a bubblewrap command line:
//   - the whole file system read-only, fresh /dev and /proc;
//   - the writable paths bound read-write on top (missing ones skipped);
//   - the protected paths (the project's .git and .agent) bound read-only
//     again on top of that, so that a command cannot plant a git config or
//     an MCP server the sidecar would later run outside the sandbox;
//   - the hidden paths (credential stores, the sidecar's data) replaced by
//     an empty tmpfs (directories) or /dev/null (files);
//   - a new pid namespace (the command sees only its own processes, and
//     when the namespace's first process dies the kernel kills every other
//     one in it), no network unless allowed, and the child killed when the
//     sidecar dies.
//
// --new-session vs process-group kill: --new-session puts the command in a
// session of its own so that it cannot push input into a terminal the
// sidecar may hold (TIOCSTI). That also takes it out of the process group
// the shell tools kill. We keep it because the group kill still reaches
// bwrap itself, which is in the group: bwrap's pid 1 has --die-with-parent,
// and with --unshare-pid the kernel ends the whole namespace when it dies.
func wrapBwrap(writable, protected []string, hide []hidden, network bool, argv []string) []string {
	out := make([]string, 0, 16+3*len(writable)+3*len(protected)+3*len(hide)+len(argv))
	out = append(out, "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	for _, p := range writable {
		out = append(out, "--bind-try", p, p)
	}
	for _, h := range hide {
		if h.dir {
			out = append(out, "--tmpfs", h.path)
		} else {
			out = append(out, "--ro-bind", "/dev/null", h.path)
		}
	}
	for _, p := range protected {
		out = append(out, "--ro-bind-try", p, p)
	}
	out = append(out, "--unshare-pid")
	if !network {
		out = append(out, "--unshare-net")
	}
	out = append(out, "--new-session", "--die-with-parent", "--")
	return append(out, argv...)
}
