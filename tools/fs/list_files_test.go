package fs

import (
	"fmt"
	"strings"
	"testing"
)

func TestListFiles(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(".gitignore"), "*.log\nbuild/\n")
	write(t, e.path("README.md"), "r")
	write(t, e.path("app.log"), "l")
	write(t, e.path(".env"), "secret=1")
	write(t, e.path("src/main.go"), "m")
	write(t, e.path("src/.gitignore"), "gen/\n")
	write(t, e.path("src/gen/x.go"), "g")
	write(t, e.path("src/pkg/deep/d.go"), "d")
	write(t, e.path("build/out.bin"), "b")
	write(t, e.path(".git/HEAD"), "h")
	write(t, e.path("node_modules/m/index.js"), "n")
	write(t, e.path("web/node_modules/x.js"), "n")
	symlink(t, e.outside, e.path("outlink"))
	mkdir(t, e.path("emptydir"))

	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr string
	}{
		{name: "default depth", args: map[string]any{},
			want: "README.md\nemptydir/\noutlink@\nsrc/\nsrc/main.go\nsrc/pkg/\nweb/\n"},
		{name: "hidden", args: map[string]any{"include_hidden": true, "depth": 1},
			want: ".env\n.gitignore\nREADME.md\nemptydir/\noutlink@\nsrc/\nweb/\n"},
		{name: "subdir deep", args: map[string]any{"path": "src", "depth": 5},
			want: "src/main.go\nsrc/pkg/\nsrc/pkg/deep/\nsrc/pkg/deep/d.go\n"},
		{name: "absolute", args: map[string]any{"path": e.path("src/pkg"), "depth": 1}, want: "src/pkg/deep/\n"},
		{name: "parent gitignore applies to subdir", args: map[string]any{"path": "src"},
			want: "src/main.go\nsrc/pkg/\nsrc/pkg/deep/\n"},
		{name: "empty", args: map[string]any{"path": "emptydir"}, want: "[emptydir has no entries to show]\n"},
		{name: "file", args: map[string]any{"path": "README.md"}, wantErr: TypeNotDir},
		{name: "missing", args: map[string]any{"path": "nope"}, wantErr: "not_found"},
		{name: "negative depth", args: map[string]any{"depth": -1}, wantErr: "invalid_arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.call(t, "list_files", tt.args)
			if tt.wantErr != "" {
				requireType(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.(string) != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", out, tt.want)
			}
		})
	}
}

func TestListFilesTruncated(t *testing.T) {
	e := newEnv(t)
	for i := range MaxListEntries + 20 {
		write(t, e.path(fmt.Sprintf("d/f%05d.txt", i)), "")
	}
	out := e.mustCall(t, "list_files", map[string]any{"path": "d"}).(string)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != MaxListEntries+1 || !strings.HasPrefix(lines[MaxListEntries], "[truncated at 1000 entries") {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
	if lines[0] != "d/f00000.txt" || lines[MaxListEntries-1] != "d/f00999.txt" {
		t.Fatalf("not sorted: %q .. %q", lines[0], lines[MaxListEntries-1])
	}
}
