package backend_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackendKnowsNoTransport keeps the backend below the front doors: it
// reaches clients through its Sink and Client interfaces, so it imports
// neither the WebSocket library nor the transport (ipc/wsrpc), the server
// and its handlers (ipc) or the ACP front door.
func TestBackendKnowsNoTransport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/zqagent/sidecar/backend").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/coder/websocket", "github.com/zqagent/sidecar/ipc/wsrpc", "github.com/zqagent/sidecar/acp"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("backend depends on %s", dep)
			}
		}
		if dep == "github.com/zqagent/sidecar/ipc" || dep == "github.com/zqagent/sidecar/ipc/client" {
			t.Errorf("backend depends on %s", dep)
		}
	}
}

// TestBackendAssertsNoConcreteProvider: the backend builds providers but
// asks them what they do through llm's interfaces (llm.SessionNamer), never
// by asserting a concrete provider type (*openai.Provider, *scripted.Provider).
func TestBackendAssertsNoConcreteProvider(t *testing.T) {
	concrete := map[string]bool{"openai": true, "scripted": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		check := func(typ ast.Expr) {
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if sel, ok := typ.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && concrete[pkg.Name] {
					t.Errorf("%s: asserts the concrete provider type %s.%s", fset.Position(sel.Pos()), pkg.Name, sel.Sel.Name)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeAssertExpr:
				if n.Type != nil {
					check(n.Type)
				}
			case *ast.TypeSwitchStmt:
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						check(e)
					}
				}
			}
			return true
		})
	}
}
