package depcheck

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLayering checks the whole package graph of the module against
// docs/layering.txt: every package in exactly one part, only the arrows
// the file allows, pebble imported by pkg/store alone, the companion
// binaries and the transports never reaching the engine or the store, and
// the stdlib-only packages free of third-party code.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	f, err := os.Open(filepath.Join(root, "docs", "layering.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := ParseLayering(f)
	if err != nil {
		t.Fatal(err)
	}
	module, pkgs, err := Graph(root)
	if err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Path == module {
			own++
		}
	}
	// A graph this small is not the module's: the check would pass on
	// nothing.
	if module != "memsvc.dev/memsvc" || own < 25 {
		t.Fatalf("go list found %d packages of module %q", own, module)
	}
	for _, p := range l.Check(module, pkgs) {
		t.Error(p)
	}
}

// testLayering is a small layering over the synthetic graph of
// testGraph.
const testLayering = `
# a comment
part model   pkg/memory
part store   pkg/store
part engine  pkg/engine/...
part client  pkg/client
part bin     cmd/...

model  ->
store  -> model example.com/db
engine -> model store
client -> model
bin    -> engine client   # trailing comment

stdlib-only pkg/memory
sole-importer example.com/db pkg/store
never-reach cmd/tool : pkg/engine/... example.com/db
must-reach cmd/server : pkg/store example.com/db
`

// testGraph is a module that keeps testLayering: direct imports by
// module-relative path (module packages) or full path (others).
func testGraph() map[string][]string {
	return map[string][]string{
		"pkg/memory":       {"fmt"},
		"pkg/store":        {"pkg/memory", "example.com/db/v2/vfs", "sync"},
		"pkg/engine":       {"pkg/store", "pkg/engine/index"},
		"pkg/engine/index": {"pkg/memory"},
		"pkg/client":       {"pkg/memory", "net/http"},
		"cmd/server":       {"pkg/engine"},
		"cmd/tool":         {"pkg/client"},
	}
}

// packages turns a graph of testGraph's form into go list output: module
// packages, standard library packages and third-party ones, with their
// transitive dependencies.
func packages(module string, g map[string][]string) []Package {
	full := func(p string) string {
		if first, _, _ := strings.Cut(p, "/"); first == "pkg" || first == "cmd" || first == "internal" {
			return module + "/" + p
		}
		return p
	}
	imports := map[string][]string{}
	for p, imps := range g {
		imports[full(p)] = append(imports[full(p)], []string{}...)
		for _, imp := range imps {
			imports[full(p)] = append(imports[full(p)], full(imp))
			imports[full(imp)] = append(imports[full(imp)], []string{}...)
		}
	}
	imports["example.com/db/v2/vfs"] = []string{"example.com/db/v2/internal"}
	imports["example.com/db/v2/internal"] = []string{"os"}
	imports["os"] = nil
	var deps func(p string, seen map[string]bool)
	deps = func(p string, seen map[string]bool) {
		for _, d := range imports[p] {
			if !seen[d] {
				seen[d] = true
				deps(d, seen)
			}
		}
	}
	var out []Package
	for _, p := range slices.Sorted(maps.Keys(imports)) {
		seen := map[string]bool{}
		deps(p, seen)
		pkg := Package{ImportPath: p, Imports: imports[p], Deps: slices.Sorted(maps.Keys(seen)), Standard: standard(p)}
		if strings.HasPrefix(p, module+"/") {
			pkg.Module = &struct{ Path string }{module}
		}
		out = append(out, pkg)
	}
	return out
}

// TestLayeringCatchesViolations runs the checker over a synthetic module:
// it passes the module as it is, and each change that breaks a rule is
// reported, naming the package and the rule.
func TestLayeringCatchesViolations(t *testing.T) {
	const module = "example.org/app"
	parse := func(text string) *Layering {
		t.Helper()
		l, err := ParseLayering(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if got := parse(testLayering).Check(module, packages(module, testGraph())); len(got) != 0 {
		t.Fatalf("a graph that keeps the layering: %q", got)
	}

	cases := []struct {
		name     string
		layering string // testLayering when empty
		change   func(g map[string][]string)
		want     []string // one substring per expected problem
	}{
		{"package in no part", "", func(g map[string][]string) {
			g["internal/extra"] = nil
			g["pkg/client"] = append(g["pkg/client"], "internal/extra")
		},
			[]string{"internal/extra belongs to no part"}},
		{"arrow not allowed", "", func(g map[string][]string) { g["pkg/memory"] = append(g["pkg/memory"], "pkg/client") },
			[]string{"pkg/memory (part model) imports pkg/client (part client)"}},
		{"third-party import not allowed", "", func(g map[string][]string) { g["pkg/client"] = append(g["pkg/client"], "example.com/other") },
			[]string{"pkg/client (part client) imports example.com/other"}},
		{"second pebble importer", "", func(g map[string][]string) {
			g["pkg/engine/index"] = append(g["pkg/engine/index"], "example.com/db/v2/vfs")
		}, []string{"pkg/engine/index (part engine) imports example.com/db/v2/vfs", "only pkg/store may import example.com/db"}},
		{"companion reaches the engine", "", func(g map[string][]string) { g["cmd/tool"] = append(g["cmd/tool"], "pkg/engine") },
			[]string{"cmd/tool depends on pkg/engine/...", "cmd/tool depends on example.com/db"}},
		{"stdlib-only package with third-party code", "", func(g map[string][]string) {
			g["pkg/store"] = []string{"example.com/db/v2/vfs"}
			g["pkg/memory"] = append(g["pkg/memory"], "example.com/db/v2/vfs")
		}, []string{"pkg/memory (part model) imports example.com/db/v2/vfs", "pkg/memory must use the standard library only",
			"pkg/memory must use the standard library only", "only pkg/store may import example.com/db",
			"cmd/tool depends on example.com/db"}},
		{"binary loses its storage", "", func(g map[string][]string) { g["cmd/server"] = []string{"pkg/client"} },
			[]string{"cmd/server does not depend on pkg/store", "cmd/server does not depend on example.com/db"}},
		{"pattern matches nothing", testLayering + "part ghost pkg/ghost\nghost ->\n", nil,
			[]string{"part ghost: pkg/ghost matches no package"}},
		{"package in two parts", testLayering + "part index pkg/engine/index\nindex -> model\n", nil,
			[]string{"pkg/engine/index belongs to more than one part: engine, index"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := testGraph()
			if c.change != nil {
				c.change(g)
			}
			text := c.layering
			if text == "" {
				text = testLayering
			}
			got := parse(text).Check(module, packages(module, g))
			if len(got) != len(c.want) {
				t.Fatalf("problems %q, want %d naming %q", got, len(c.want), c.want)
			}
			for _, w := range c.want {
				if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, w) }) {
					t.Errorf("no problem says %q: %q", w, got)
				}
			}
		})
	}
}

// TestLayeringFileErrors: a malformed layering file is refused with the
// line at fault.
func TestLayeringFileErrors(t *testing.T) {
	for text, want := range map[string]string{
		"part a pkg/a\n":                          "line 1: part a has no arrow line",
		"part a pkg/a\na -> b\n":                  "line 2: a -> b: no part is called b",
		"part a pkg/a\npart a pkg/b\n":            "line 2: part a is declared twice",
		"b -> \n":                                 "line 1: b -> ...: declare the part first",
		"part a pkg/a\na ->\nnever-reach pkg/a\n": "line 3: want: never-reach PATTERN [PATTERN ...] : TARGET [TARGET ...]",
		"frobnicate pkg/a\n":                      `line 1: cannot read "frobnicate pkg/a"`,
	} {
		_, err := ParseLayering(strings.NewReader(text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
}
