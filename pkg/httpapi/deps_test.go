package httpapi

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the transport independent of the engine: it serves any
// memory.Service.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"github.com/gorilla/mux":                                  true,
		"github.com/prometheus/client_golang/prometheus":          true,
		"github.com/prometheus/client_golang/prometheus/promhttp": true,
		"memsvc.dev/memsvc/pkg/access":                            true,
		"memsvc.dev/memsvc/pkg/memory":                            true,
		"memsvc.dev/memsvc/pkg/metrics":                           true,
		"memsvc.dev/memsvc/pkg/wire":                              true,
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
				t.Errorf("%s imports %s, which the HTTP layer must not depend on", name, path)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no Go files found")
	}
}
