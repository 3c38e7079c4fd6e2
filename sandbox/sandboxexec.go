package sandbox

import "strings"

// wrapSandboxExec builds a macOS sandbox-exec command line whose profile
// allows everything except file writes outside the writable paths (and the
// usual device files), any write to the protected paths (the project's .git
// and .agent, whether they exist or not), any access to the hidden paths
// (credential stores, the sidecar's data), and, unless network is allowed,
// any network use. Later rules win in SBPL, so the denials come last.
func wrapSandboxExec(writable, protected []string, hide []hidden, network bool, argv []string) []string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n")
	b.WriteString("  (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/dtracehelper\")\n")
	b.WriteString("  (regex #\"^/dev/tty\") (regex #\"^/dev/fd/\")\n")
	b.WriteString("  (subpath \"/private/var/folders\") (subpath \"/private/tmp\")\n")
	for _, p := range writable {
		b.WriteString("  (subpath ")
		b.WriteString(profileString(p))
		b.WriteString(")\n")
	}
	b.WriteString(")\n")
	if len(protected) > 0 {
		b.WriteString("(deny file-write*\n")
		for _, p := range protected {
			b.WriteString("  (subpath ")
			b.WriteString(profileString(p))
			b.WriteString(")\n")
		}
		b.WriteString(")\n")
	}
	if len(hide) > 0 {
		b.WriteString("(deny file-read* file-write*\n")
		for _, h := range hide {
			if h.dir {
				b.WriteString("  (subpath ")
			} else {
				b.WriteString("  (literal ")
			}
			b.WriteString(profileString(h.path))
			b.WriteString(")\n")
		}
		b.WriteString(")\n")
	}
	if !network {
		b.WriteString("(deny network*)\n")
	}
	out := make([]string, 0, 3+len(argv))
	out = append(out, "sandbox-exec", "-p", b.String())
	return append(out, argv...)
}

// profileString quotes a path as an SBPL string literal.
func profileString(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(p) + `"`
}
