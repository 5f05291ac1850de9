// Package depcheck checks the layout rules of DESIGN.md §3. A Layering
// checks a module's whole package graph against a layering file
// (docs/layering.txt; TestLayering runs it on this module). The helpers
// OnlyImports, Reaches and NeverReaches state one rule about one package
// from that package's own test. CheckSource holds every package of a
// module to two source rules: a package comment, and no exported
// package-level state but error sentinels (TestSource runs it on the
// module, e2e/ and tools/). All ask the go tool about packages as
// they are built into a binary, so test files are left out.
package depcheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// list runs go list with the template on the package in the current
// directory and returns the output fields.
func list(t testing.TB, template string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to list the package's imports: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-f", template, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// standard reports whether path is in the standard library (its first
// element has no dot).
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// under reports whether path is prefix or inside it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// OnlyImports fails t when the package imports, directly, anything but the
// standard library and the allowed packages (each allowed path also admits
// the packages below it).
func OnlyImports(t testing.TB, allowed ...string) {
	t.Helper()
	imports := list(t, `{{join .Imports " "}}`)
	for _, path := range imports {
		if !standard(path) && !slices.ContainsFunc(allowed, func(a string) bool { return under(path, a) }) {
			t.Errorf("the package imports %s; allowed are the standard library and %v", path, allowed)
		}
	}
}

// Reaches reports whether the package depends on pkg, or on a package
// below it, directly or through others.
func Reaches(t testing.TB, pkg string) bool {
	t.Helper()
	deps := list(t, `{{join .Deps " "}}`)
	if len(deps) == 0 {
		t.Fatal("go list reports no dependencies at all")
	}
	return slices.ContainsFunc(deps, func(dep string) bool { return under(dep, pkg) })
}

// NeverReaches fails t when the package depends, directly or through
// others, on any of the given packages or those below them.
func NeverReaches(t testing.TB, forbidden ...string) {
	t.Helper()
	for _, pkg := range forbidden {
		if Reaches(t, pkg) {
			t.Errorf("the package depends on %s", pkg)
		}
	}
}

// NeverImports fails t when the package imports, directly, any of the
// given packages or those below them. It states which layer a package
// must go through: it may still reach them through that layer.
func NeverImports(t testing.TB, forbidden ...string) {
	t.Helper()
	for _, path := range list(t, `{{join .Imports " "}}`) {
		for _, f := range forbidden {
			if under(path, f) {
				t.Errorf("the package imports %s directly", path)
			}
		}
	}
}
