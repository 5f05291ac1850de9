package depcheck

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

// Package is a package of a dependency graph, as go list -json describes
// it (test files left out).
type Package struct {
	ImportPath string
	Standard   bool
	Imports    []string // direct imports
	Deps       []string // every dependency, direct or not
	Module     *struct{ Path string }
}

// Graph returns the path of the module in dir and its packages with every
// package they depend on (go list -deps -json ./... run in dir).
func Graph(dir string) (module string, pkgs []Package, err error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", nil, fmt.Errorf("the go tool is needed to list the packages: %w", err)
	}
	cmd := exec.Command(goTool, "list", "-m")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "GOWORK=off") // the module in dir alone
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list -m: %w", err)
	}
	module = strings.TrimSpace(string(out))
	cmd = exec.Command(goTool, "list", "-deps", "-json", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list -deps: %w\n%s", err, stderr.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return module, pkgs, nil
		} else if err != nil {
			return "", nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// Layering is a parsed layering file; docs/layering.txt describes the
// format.
type Layering struct {
	parts    []layerPart
	arrows   map[string][]string // part -> parts and third-party modules
	stdOnly  []string
	stdLine  int
	sole     []soleRule
	never    []reachRule
	must     []reachRule
	declared map[string]int // part -> line of its arrow line
}

type layerPart struct {
	name     string
	patterns []string
	line     int
}

type soleRule struct {
	module  string
	pattern string
	line    int
}

type reachRule struct {
	from, to []string
	line     int
}

// ParseLayering reads a layering file.
func ParseLayering(r io.Reader) (*Layering, error) {
	l := &Layering{arrows: map[string][]string{}, declared: map[string]int{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if err := l.parseLine(f, n); err != nil {
			return nil, fmt.Errorf("layering line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, p := range l.parts {
		if _, ok := l.declared[p.name]; !ok {
			return nil, fmt.Errorf("layering line %d: part %s has no arrow line (%s -> ...)", p.line, p.name, p.name)
		}
	}
	for name, targets := range l.arrows {
		for _, t := range targets {
			if !isExternal(t) && !l.hasPart(t) {
				return nil, fmt.Errorf("layering line %d: %s -> %s: no part is called %s", l.declared[name], name, t, t)
			}
		}
	}
	return l, nil
}

func (l *Layering) parseLine(f []string, n int) error {
	switch {
	case f[0] == "part":
		if len(f) < 3 {
			return errors.New("want: part NAME PATTERN [PATTERN ...]")
		}
		if l.hasPart(f[1]) {
			return fmt.Errorf("part %s is declared twice", f[1])
		}
		l.parts = append(l.parts, layerPart{name: f[1], patterns: f[2:], line: n})
	case len(f) >= 2 && f[1] == "->":
		if !l.hasPart(f[0]) {
			return fmt.Errorf("%s -> ...: declare the part first", f[0])
		}
		if _, dup := l.declared[f[0]]; dup {
			return fmt.Errorf("%s has a second arrow line", f[0])
		}
		l.declared[f[0]] = n
		l.arrows[f[0]] = f[2:]
	case f[0] == "stdlib-only":
		l.stdOnly, l.stdLine = append(l.stdOnly, f[1:]...), n
	case f[0] == "sole-importer":
		if len(f) != 3 {
			return errors.New("want: sole-importer MODULE PATTERN")
		}
		l.sole = append(l.sole, soleRule{module: f[1], pattern: f[2], line: n})
	case f[0] == "never-reach" || f[0] == "must-reach":
		i := slices.Index(f, ":")
		if i < 2 || i == len(f)-1 {
			return fmt.Errorf("want: %s PATTERN [PATTERN ...] : TARGET [TARGET ...]", f[0])
		}
		r := reachRule{from: f[1:i], to: f[i+1:], line: n}
		if f[0] == "never-reach" {
			l.never = append(l.never, r)
		} else {
			l.must = append(l.must, r)
		}
	default:
		return fmt.Errorf("cannot read %q", strings.Join(f, " "))
	}
	return nil
}

func (l *Layering) hasPart(name string) bool {
	return slices.ContainsFunc(l.parts, func(p layerPart) bool { return p.name == name })
}

// isExternal reports whether a target names a third-party module: its
// first path element has a dot.
func isExternal(target string) bool {
	first, _, _ := strings.Cut(target, "/")
	return strings.Contains(first, ".")
}

// matches reports whether the module-relative path rel matches pattern.
func matches(pattern, rel string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return under(rel, base)
	}
	return rel == pattern
}

// coversModule reports whether an import path is in the third-party
// module mod or a major version of it.
func coversModule(mod, path string) bool {
	return under(path, mod) || strings.HasPrefix(path, mod+"/v") || strings.HasPrefix(path, mod+".v")
}

// Check returns every way the packages of module break the layering.
// pkgs is go list -deps output: the module's packages with everything
// they depend on.
func (l *Layering) Check(module string, pkgs []Package) []string {
	c := &checker{l: l, module: module, partOf: map[string]string{}, byPath: map[string]*Package{}}
	for i := range pkgs {
		p := &pkgs[i]
		c.byPath[p.ImportPath] = p
		if rel, ok := c.rel(p.ImportPath); ok && (p.Module == nil || p.Module.Path == module) {
			c.own = append(c.own, rel)
		}
	}
	slices.Sort(c.own)
	c.assignParts()
	c.checkArrows()
	c.checkStdlibOnly()
	c.checkSole()
	c.checkReach()
	return c.problems
}

type checker struct {
	l        *Layering
	module   string
	own      []string            // the module's packages, module-relative
	partOf   map[string]string   // module-relative path -> part
	byPath   map[string]*Package // import path -> package
	problems []string
}

func (c *checker) fail(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// rel returns path relative to the module, for the module's packages.
func (c *checker) rel(path string) (string, bool) {
	if path == c.module {
		return ".", true
	}
	return strings.CutPrefix(path, c.module+"/")
}

func (c *checker) assignParts() {
	used := map[string]bool{}
	for _, rel := range c.own {
		var in []string
		for _, p := range c.l.parts {
			for _, pat := range p.patterns {
				if matches(pat, rel) {
					in = append(in, p.name)
					used[p.name+" "+pat] = true
				}
			}
		}
		switch len(in) {
		case 0:
			c.fail("%s belongs to no part: add it to a part in the layering file", rel)
		case 1:
			c.partOf[rel] = in[0]
		default:
			c.fail("%s belongs to more than one part: %s", rel, strings.Join(in, ", "))
		}
	}
	for _, p := range c.l.parts {
		for _, pat := range p.patterns {
			if !used[p.name+" "+pat] {
				c.fail("part %s: %s matches no package (layering line %d)", p.name, pat, p.line)
			}
		}
	}
}

func (c *checker) checkArrows() {
	for _, rel := range c.own {
		from, ok := c.partOf[rel]
		if !ok {
			continue
		}
		allowed := c.l.arrows[from]
		for _, imp := range c.byPath[c.importPath(rel)].Imports {
			if c.standard(imp) {
				continue
			}
			if irel, own := c.rel(imp); own {
				to, ok := c.partOf[irel]
				if ok && to != from && !slices.Contains(allowed, to) {
					c.fail("%s (part %s) imports %s (part %s): %s -> %s is not in the layering", rel, from, irel, to, from, to)
				}
				continue
			}
			if !slices.ContainsFunc(allowed, func(t string) bool { return isExternal(t) && coversModule(t, imp) }) {
				c.fail("%s (part %s) imports %s, which the layering does not allow the part", rel, from, imp)
			}
		}
	}
}

// standard reports whether path is in the standard library, as go list
// says, or by its form when the graph does not list it.
func (c *checker) standard(path string) bool {
	if p := c.byPath[path]; p != nil {
		return p.Standard
	}
	return standard(path)
}

func (c *checker) importPath(rel string) string {
	if rel == "." {
		return c.module
	}
	return c.module + "/" + rel
}

// selected returns the module's packages that match any of patterns; a
// pattern that matches none is reported.
func (c *checker) selected(patterns []string, line int) []string {
	var out []string
	for _, pat := range patterns {
		n := 0
		for _, rel := range c.own {
			if matches(pat, rel) {
				out = append(out, rel)
				n++
			}
		}
		if n == 0 {
			c.fail("layering line %d: %s matches no package", line, pat)
		}
	}
	return out
}

func (c *checker) checkStdlibOnly() {
	for _, rel := range c.selected(c.l.stdOnly, c.l.stdLine) {
		for _, dep := range c.byPath[c.importPath(rel)].Deps {
			if c.standard(dep) {
				continue
			}
			if _, own := c.rel(dep); !own {
				c.fail("%s must use the standard library only but depends on %s", rel, dep)
			}
		}
	}
}

func (c *checker) checkSole() {
	for _, r := range c.l.sole {
		var importers []string
		for _, rel := range c.own {
			if slices.ContainsFunc(c.byPath[c.importPath(rel)].Imports, func(imp string) bool { return coversModule(r.module, imp) }) {
				importers = append(importers, rel)
			}
		}
		if len(importers) != 1 || !matches(r.pattern, importers[0]) {
			c.fail("only %s may import %s; it is imported by %v", r.pattern, r.module, importers)
		}
	}
}

// reaches reports whether the package rel depends on target: a pattern in
// the module or a third-party module.
func (c *checker) reaches(rel, target string) bool {
	return slices.ContainsFunc(c.byPath[c.importPath(rel)].Deps, func(dep string) bool {
		if isExternal(target) {
			return coversModule(target, dep)
		}
		drel, own := c.rel(dep)
		return own && matches(target, drel)
	})
}

func (c *checker) checkReach() {
	for _, r := range c.l.never {
		for _, rel := range c.selected(r.from, r.line) {
			for _, target := range r.to {
				if c.reaches(rel, target) {
					c.fail("%s depends on %s, which the layering forbids (line %d)", rel, target, r.line)
				}
			}
		}
	}
	for _, r := range c.l.must {
		for _, rel := range c.selected(r.from, r.line) {
			for _, target := range r.to {
				if !c.reaches(rel, target) {
					c.fail("%s does not depend on %s, which the layering requires (line %d)", rel, target, r.line)
				}
			}
		}
	}
}
