package permission

import "testing"

func BenchmarkEvaluate(b *testing.B) {
	f := newFixture(b)
	e := New(Options{Workspace: f.ws, AllowedCommands: stdAllow})
	b.Run("read_file", func(b *testing.B) {
		args := at("src/main.go")
		b.ReportAllocs()
		for b.Loop() {
			if d := e.Evaluate("read_file", args, readMeta); !d.Allowed {
				b.Fatal(d)
			}
		}
	})
	b.Run("run_shell_allowlisted", func(b *testing.B) {
		args := sh("git log --oneline -n 20 src/main.go")
		b.ReportAllocs()
		for b.Loop() {
			if d := e.Evaluate("run_shell", args, shellMeta); !d.Allowed {
				b.Fatal(d)
			}
		}
	})
	b.Run("run_shell_compound_asks", func(b *testing.B) {
		args := sh("make build && ./bin/app --flag | tee out.log")
		b.ReportAllocs()
		for b.Loop() {
			if d := e.Evaluate("run_shell", args, shellMeta); !d.NeedsUser {
				b.Fatal(d)
			}
		}
	})
	b.Run("write_file_asks", func(b *testing.B) {
		args := at("src/new.go")
		b.ReportAllocs()
		for b.Loop() {
			if d := e.Evaluate("write_file", args, writeMeta); !d.NeedsUser {
				b.Fatal(d)
			}
		}
	})
}
