package archive

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package linkable by tools that must not pull in
// the storage engine: the standard library, golang.org/x/crypto and the
// record model only.
func TestImports(t *testing.T) {
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
			switch {
			case !strings.Contains(first, "."): // standard library
			case strings.HasPrefix(path, "golang.org/x/crypto/"):
			case path == "memsvc.dev/memsvc/pkg/memory":
			default:
				t.Errorf("%s imports %s; allowed are the standard library, golang.org/x/crypto and pkg/memory", name, path)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no Go files found")
	}
}
