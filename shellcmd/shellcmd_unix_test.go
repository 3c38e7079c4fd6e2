//go:build !windows

package shellcmd

import (
	"os"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func TestInterpreter(t *testing.T) {
	want := "/bin/sh"
	if _, err := os.Stat("/bin/bash"); err == nil {
		want = "/bin/bash"
	}
	t.Setenv("SHELL", "/bin/zsh")
	if got := Interpreter(); got != want {
		t.Errorf("Interpreter() = %q, want %q", got, want)
	}
	if (Variant() == syntax.LangBash) != (want == "/bin/bash") {
		t.Errorf("Variant() = %v for %s", Variant(), want)
	}
	if got := Argv("/bin/bash", "echo hi"); len(got) != 3 || got[1] != "-c" || got[2] != "echo hi" {
		t.Errorf("Argv = %q", got)
	}
}
