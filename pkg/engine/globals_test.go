package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoExportedVariables: the engine, its subpackages and the store export
// no package-level variables except error sentinels, so no caller can
// change another's defaults (DESIGN §3: no package-level mutable state).
func TestNoExportedVariables(t *testing.T) {
	dirs := []string{".", "../store"}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "testdata" {
			dirs = append(dirs, e.Name())
		}
	}
	checked := 0
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					for _, name := range s.(*ast.ValueSpec).Names {
						if name.IsExported() && !strings.HasPrefix(name.Name, "Err") {
							t.Errorf("%s: exported package variable %s; make it a constant or a function", path, name.Name)
						}
					}
				}
			}
		}
	}
	if checked < 30 {
		t.Fatalf("checked only %d files: is the test looking in the right place?", checked)
	}
}
