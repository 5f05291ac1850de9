package client

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the client linkable by the recorder and the MCP proxy,
// which must never pull in the storage engine: the standard library,
// pkg/wire and pkg/memory only (both of which are held to the standard
// library by their own tests).
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"memsvc.dev/memsvc/pkg/memory": true,
		"memsvc.dev/memsvc/pkg/wire":   true,
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		seen++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") && !allowed[path] {
				t.Errorf("%s imports %s; allowed are the standard library, pkg/wire and pkg/memory", name, path)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no Go files found")
	}
}
