package jsonschema

// zqagent patch: the drafts' metaschemas are compiled on the first Compile
// rather than in init (draft.go, loadDrafts). These tests pin both halves:
// nothing is compiled before the first Compile, and every schema is still
// checked against its draft's metaschema.

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDraftsNotCompiledAtInit re-runs this test binary with only
// TestDraftsNotCompiledChild selected, so no other test has compiled
// anything before it looks.
func TestDraftsNotCompiledAtInit(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDraftsNotCompiledChild$", "-test.v")
	cmd.Env = append(os.Environ(), "JSONSCHEMA_LAZY_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestDraftsNotCompiledChild") {
		t.Fatalf("child did not run the check:\n%s", out)
	}
}

func TestDraftsNotCompiledChild(t *testing.T) {
	if os.Getenv("JSONSCHEMA_LAZY_CHILD") != "1" {
		t.Skip("run by TestDraftsNotCompiledAtInit")
	}
	for _, d := range []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020} {
		if d.sch != nil {
			t.Errorf("%s: metaschema compiled before the first Compile", d)
		}
		for name, s := range d.allVocabs {
			if s != nil {
				t.Errorf("%s: vocabulary %s compiled before the first Compile", d, name)
			}
		}
	}
	// The first Compile loads them, and the schema is checked against its
	// metaschema: "type" must be a string or an array.
	c := NewCompiler()
	if err := c.AddResource("bad.json", map[string]any{"type": 5.0}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Compile("bad.json")
	var verr *SchemaValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Compile of {\"type\":5} = %v, want a SchemaValidationError", err)
	}
	for _, d := range []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020} {
		if d.sch == nil {
			t.Errorf("%s: metaschema not compiled after the first Compile", d)
		}
		for name, s := range d.allVocabs {
			if s == nil {
				t.Errorf("%s: vocabulary %s not compiled after the first Compile", d, name)
			}
		}
	}
}

// TestDraftsLoadOnceUnderRace compiles from many goroutines at once (run
// with -race): the drafts are loaded once and every Compile sees them.
func TestDraftsLoadOnceUnderRace(t *testing.T) {
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			c := NewCompiler()
			if err := c.AddResource("s.json", map[string]any{"type": "string", "minLength": 2.0}); err != nil {
				errs <- err
				return
			}
			s, err := c.Compile("s.json")
			if err != nil {
				errs <- err
				return
			}
			if s.Validate("x") == nil {
				errs <- errors.New(`"x" passed minLength 2`)
				return
			}
			errs <- s.Validate("xy")
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
