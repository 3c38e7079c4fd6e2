package fs

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	e := newEnv(t)
	res := e.mustCall(t, "write_file", map[string]any{"path": "a/b/c.txt", "content": "one\ntwo\n"}).(*WriteResult)
	if !res.Created || res.Bytes != 8 || res.Added != 2 || res.Path != "a/b/c.txt" || res.Diff != "" {
		t.Fatalf("create result %+v", res)
	}
	if read(t, e.path("a/b/c.txt")) != "one\ntwo\n" {
		t.Fatal("content")
	}
	if err := os.Chmod(e.path("a/b/c.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = e.mustCall(t, "write_file", map[string]any{"path": "a/b/c.txt", "content": "one\nTWO\n"}).(*WriteResult)
	if res.Created || res.Added != 1 || res.Removed != 1 || !strings.Contains(res.Diff, "-two\n+TWO\n") {
		t.Fatalf("overwrite result %+v", res)
	}
	if fi, _ := os.Stat(e.path("a/b/c.txt")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode not kept: %v", fi.Mode())
	}
	e.mustCall(t, "write_file", map[string]any{"path": "empty.txt", "content": ""})
	if read(t, e.path("empty.txt")) != "" {
		t.Fatal("empty")
	}
	if names := entries(t, e.path("a/b")); !slices.Equal(names, []string{"c.txt"}) {
		t.Fatalf("temp files left: %v", names)
	}

	mkdir(t, e.path("dir"))
	_, err := e.call(t, "write_file", map[string]any{"path": "dir", "content": "x"})
	requireType(t, err, TypeIsDir)
	_, err = e.call(t, "write_file", map[string]any{"path": "x.txt"})
	requireType(t, err, "invalid_arguments")
	_, err = e.call(t, "write_file", map[string]any{"path": "", "content": "x"})
	requireType(t, err, "invalid_arguments")
	// A file where a parent directory should be.
	_, err = e.call(t, "write_file", map[string]any{"path": "empty.txt/sub.txt", "content": "x"})
	if err == nil {
		t.Fatal("writing under a file must fail")
	}
}

func TestReplaceInFile(t *testing.T) {
	src := "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name    string
		file    string
		args    map[string]any
		want    string
		wantErr string
		errHas  string
		count   int
	}{
		{name: "unique", file: src, args: map[string]any{"old_string": "func a() {\n\treturn 1", "new_string": "func a() {\n\treturn 2"},
			want: strings.Replace(src, "return 1", "return 2", 1), count: 1},
		{name: "ambiguous", file: src, args: map[string]any{"old_string": "\treturn 1\n", "new_string": "\treturn 3\n"},
			wantErr: TypeAmbiguous, errHas: "2 occurrences in f.go (at lines 2, 6)"},
		{name: "replace all", file: src, args: map[string]any{"old_string": "return 1", "new_string": "return 0", "replace_all": true},
			want: strings.ReplaceAll(src, "return 1", "return 0"), count: 2},
		{name: "none with nearest line", file: src, args: map[string]any{"old_string": "func c() {", "new_string": "x"},
			wantErr: TypeNoMatch, errHas: "closest line is 1"},
		{name: "none whitespace", file: src, args: map[string]any{"old_string": "func b() {\n    return 1", "new_string": "x"},
			wantErr: TypeNoMatch, errHas: "matches line 5"},
		{name: "delete", file: src, args: map[string]any{"old_string": "\nfunc b() {\n\treturn 1\n}\n", "new_string": ""},
			want: "func a() {\n\treturn 1\n}\n", count: 1},
		{name: "crlf", file: "a\r\nb\r\nc\r\n", args: map[string]any{"old_string": "a\nb", "new_string": "A\nB"},
			want: "A\r\nB\r\nc\r\n", count: 1},
		{name: "empty old", file: src, args: map[string]any{"old_string": "", "new_string": "x"}, wantErr: "invalid_arguments"},
		{name: "same", file: src, args: map[string]any{"old_string": "a", "new_string": "a"}, wantErr: "invalid_arguments"},
		{name: "no new_string", file: src, args: map[string]any{"old_string": "a"}, wantErr: "invalid_arguments"},
		{name: "binary", file: "x\x00y", args: map[string]any{"old_string": "x", "new_string": "z"}, wantErr: TypeBinary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			write(t, e.path("f.go"), tt.file)
			tt.args["path"] = "f.go"
			out, err := e.call(t, "replace_in_file", tt.args)
			if tt.wantErr != "" {
				requireType(t, err, tt.wantErr)
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("error %q lacks %q", err, tt.errHas)
				}
				if read(t, e.path("f.go")) != tt.file {
					t.Fatal("file changed on error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, e.path("f.go")); got != tt.want {
				t.Fatalf("got %q want %q", got, tt.want)
			}
			res := out.(*WriteResult)
			if res.Replacements != tt.count || res.Diff == "" || res.Bytes != len(tt.want) {
				t.Fatalf("result %+v", res)
			}
		})
	}
	e := newEnv(t)
	_, err := e.call(t, "replace_in_file", map[string]any{"path": "missing.go", "old_string": "a", "new_string": "b"})
	requireType(t, err, "not_found")
}

func TestRegistered(t *testing.T) {
	e := newEnv(t)
	want := map[string]bool{"read_file": false, "list_files": false, "write_file": true, "replace_in_file": true}
	if e.reg.Len() != len(want) {
		t.Fatalf("%d tools", e.reg.Len())
	}
	for name, writes := range want {
		spec, ok := e.reg.Lookup(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		m := spec.Meta
		if m.RequiresApproval != writes || (m.Class == "write") != writes || len(m.PathArgs) != 1 || m.PathArgs[0] != "path" {
			t.Errorf("%s meta %+v", name, m)
		}
		if writes && m.RiskLevel != "medium" || !writes && (m.RiskLevel != "low" || !m.Parallel()) {
			t.Errorf("%s risk %+v", name, m)
		}
		if len(spec.Schema.Function.Description) < 200 || !strings.Contains(string(spec.Schema.Function.Parameters), `"path"`) {
			t.Errorf("%s schema/description too thin", name)
		}
	}
	var ro = e.reg
	ro = toolsRegistryReadOnly(t, e)
	if ro.Len() != 2 {
		t.Fatal("read-only set")
	}
}
