package backend_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zqagent/sidecar/internal/deptest"
)

// TestBackendKnowsNoTransport keeps the backend below the front doors: it
// reaches clients through its Sink and Client interfaces and the envelope
// of a frame is the transport's (Options.Envelope), so it imports neither
// the WebSocket library nor the transport (ipc/wsrpc), the server and its
// handlers (ipc) or the ACP front door.
func TestBackendKnowsNoTransport(t *testing.T) {
	const m = deptest.Module
	const why = "the backend reaches clients through its Sink and Client interfaces"
	deptest.DepChecker{BadDeps: map[string]string{
		"github.com/coder/websocket/...": why,
		m + "/ipc/...":                   why,
		m + "/acp":                       why,
	}}.Check(t)
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
