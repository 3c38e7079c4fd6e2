package main

import (
	"runtime/debug"
	"strings"
)

// version is stamped at build time (make build, make dist) with
//
//	-ldflags "-X main.version=$(git describe --tags --always --dirty)"
//
// Without it, buildVersion falls back to what the Go toolchain recorded.
var version = ""

// buildVersion is the version the ready line, initialize and --version
// show: the stamped one; else the module version (go install …@v1.2.3);
// else the VCS revision recorded by go build (with "-dirty" when the tree
// had changes); else "dev" (a plain go build without VCS data).
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return versionFrom(bi)
}

func versionFrom(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return strings.TrimPrefix(v, "v")
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
