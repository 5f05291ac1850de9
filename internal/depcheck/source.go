package depcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sourcePackage is a package of a module as go list -json describes its
// files.
type sourcePackage struct {
	ImportPath     string
	Name           string
	Dir            string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string // files of other platforms, test files among them
}

// CheckSource reads the non-test Go files of every package of the module
// in dir (go list ./... run in dir, files of every platform) and returns
// one problem per rule broken, naming the file or package:
//   - every package with non-test files has a package comment, and a
//     library's comment begins "Package <name>", as go doc lists it;
//   - no package declares exported package-level state: an exported
//     package-level var must be an error sentinel (see sentinel), since
//     anything else is mutable state any importer can change. Files
//     marked generated ("// Code generated ... DO NOT EDIT.") are left
//     out of this rule: protoc-gen-go's enum maps and descriptors are not
//     ours to shape.
func CheckSource(dir string) ([]string, error) {
	pkgs, err := listSource(dir)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, p := range pkgs {
		files, err := parseSource(p)
		if err != nil {
			return nil, err
		}
		problems = append(problems, checkPackage(p.ImportPath, p.Name, files)...)
	}
	return problems, nil
}

// listSource runs go list -json ./... in dir.
func listSource(dir string) ([]sourcePackage, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the go tool is needed to list the packages: %w", err)
	}
	cmd := exec.Command(goTool, "list", "-json", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w\n%s", dir, err, stderr.Bytes())
	}
	var pkgs []sourcePackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p sourcePackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// sourceFile is one parsed file of a package.
type sourceFile struct {
	name string // for messages
	fset *token.FileSet
	file *ast.File
}

// parseSource parses the package's non-test files of every platform that
// belong to the package (a //go:build ignore program in the same
// directory does not).
func parseSource(p sourcePackage) ([]sourceFile, error) {
	var files []sourceFile
	fset := token.NewFileSet()
	names := append(append(append([]string(nil), p.GoFiles...), p.CgoFiles...), p.IgnoredGoFiles...)
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		path := filepath.Join(p.Dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", path, err)
		}
		if f.Name.Name == p.Name {
			files = append(files, sourceFile{name: path, fset: fset, file: f})
		}
	}
	return files, nil
}

// checkPackage applies CheckSource's rules to the parsed files of one
// package. A package without files (tests only) has nothing to check.
func checkPackage(path, name string, files []sourceFile) []string {
	if len(files) == 0 {
		return nil
	}
	var problems []string
	doc := ""
	for _, f := range files {
		if f.file.Doc != nil && doc == "" {
			doc = f.file.Doc.Text()
		}
		problems = append(problems, exportedState(f)...)
	}
	switch {
	case strings.TrimSpace(doc) == "":
		problems = append(problems, fmt.Sprintf("package %s has no package comment", path))
	case name != "main" && !slices.Equal(firstN(strings.Fields(doc), 2), []string{"Package", name}):
		problems = append(problems, fmt.Sprintf("package %s: the package comment begins %q, want \"Package %s ...\"", path, firstWords(doc), name))
	}
	return problems
}

// firstN returns the first n elements of s, or all when it has fewer.
func firstN(s []string, n int) []string { return s[:min(n, len(s))] }

// firstWords returns the start of a comment, for messages.
func firstWords(doc string) string {
	if len(doc) > 30 {
		return doc[:30] + "..."
	}
	return doc
}

// exportedState reports the exported package-level vars of a file that
// are not error sentinels.
func exportedState(f sourceFile) []string {
	if ast.IsGenerated(f.file) {
		return nil
	}
	imports := map[string]string{} // local name -> import path
	for _, imp := range f.file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		imports[local] = path
	}
	var problems []string
	for _, decl := range f.file.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !n.IsExported() {
					continue
				}
				var value ast.Expr
				if len(vs.Values) == len(vs.Names) {
					value = vs.Values[i]
				}
				if !sentinel(n.Name, value, imports) {
					problems = append(problems, fmt.Sprintf("%s: exported package-level var %s is mutable state: make it a constant or a function (only error sentinels, var ErrX = errors.New(...), may be exported vars)", f.fset.Position(n.Pos()), n.Name))
				}
			}
		}
	}
	return problems
}

// sentinel reports whether an exported var named name with the given
// value (nil when none) is an error sentinel, the one kind of exported
// package-level var allowed: a name of the form ErrX and one of
//   - errors.New("...") with a string literal,
//   - fmt.Errorf("...", ...) with a literal format (wrapping another
//     sentinel),
//   - &T{...} with T a type of the package itself (an error type whose Is
//     method matches by a field, as memory.ErrNotFound).
//
// Each is meant to be compared by errors.Is and never assigned.
func sentinel(name string, value ast.Expr, imports map[string]string) bool {
	rest, ok := strings.CutPrefix(name, "Err")
	if r, _ := utf8.DecodeRuneInString(rest); !ok || !unicode.IsUpper(r) {
		return false
	}
	switch v := value.(type) {
	case *ast.CallExpr:
		sel, ok := v.Fun.(*ast.SelectorExpr)
		if !ok || len(v.Args) == 0 {
			return false
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return false
		}
		lit, ok := v.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return false
		}
		call := imports[pkg.Name] + "." + sel.Sel.Name
		return call == "errors.New" && len(v.Args) == 1 || call == "fmt.Errorf"
	case *ast.UnaryExpr:
		c, ok := v.X.(*ast.CompositeLit)
		if v.Op != token.AND || !ok {
			return false
		}
		_, local := c.Type.(*ast.Ident)
		return local
	}
	return false
}
