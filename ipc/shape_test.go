package ipc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestPackageStaysThin keeps ipc the transport glue and thin handlers it
// is meant to be (issue 26): at most 20 non-test files and at most 15
// methods on *Server. State and policy belong in package backend.
func TestPackageStaysThin(t *testing.T) {
	const maxFiles, maxMethods = 20, 15
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files, methods := 0, 0
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
				continue
			}
			if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok && id.Name == "Server" {
					methods++
				}
			}
		}
	}
	if files > maxFiles {
		t.Errorf("ipc has %d non-test files; at most %d (move state and policy to package backend)", files, maxFiles)
	}
	if methods > maxMethods {
		t.Errorf("*Server has %d methods; at most %d (a handler is a function of the backend, not a Server method)", methods, maxMethods)
	}
}
