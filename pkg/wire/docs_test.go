package wire

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

var updateDocs = flag.Bool("update", false, "rewrite the generated parts of docs/api.md")

// apiDoc is the API reference page, relative to this package.
var apiDoc = filepath.Join("..", "..", "docs", "api.md")

const (
	routesBegin = "<!-- routes: generated from wire.Routes() by `go test ./pkg/wire -update`; do not edit -->\n"
	routesEnd   = "<!-- end of routes -->\n"
	codesBegin  = "<!-- codes: generated from wire.Status by `go test ./pkg/wire -update`; do not edit -->\n"
	codesEnd    = "<!-- end of codes -->\n"
)

// routeTable renders the route index of docs/api.md from Routes.
func routeTable() string {
	var b strings.Builder
	b.WriteString("| Method | Path | Operation | Success | Key and rate limit | Namespace |\n|---|---|---|---|---|---|\n")
	for _, r := range Routes() {
		op := r.Op
		if op == "" {
			op = "probe"
		}
		status := fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status))
		guard, reach := "no", "-"
		if r.Protected {
			guard, reach = "yes", r.Namespace.String()
		}
		fmt.Fprintf(&b, "| `%s` | [`%s`](#%s) | `%s` | %s | %s | %s |\n", r.Method, r.Path, anchor(r.Method, r.Path), op, status, guard, reach)
	}
	return b.String()
}

// codeTable renders the error codes and their statuses from Status.
func codeTable() string {
	var b strings.Builder
	b.WriteString("| Code | HTTP status |\n|---|---|\n")
	for _, c := range memory.Codes {
		s := Status(c)
		fmt.Fprintf(&b, "| `%s` | %d %s |\n", c, s, http.StatusText(s))
	}
	return b.String()
}

// anchor is the GitHub-style anchor of the heading "METHOD PATH".
func anchor(method, path string) string {
	s := strings.ToLower(method + " " + path)
	s = regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(s, "")
	return strings.ReplaceAll(s, " ", "-")
}

// splice replaces what lies between begin and end in doc with body.
func splice(t *testing.T, doc, begin, end, body string) string {
	t.Helper()
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: markers %q ... %q missing", apiDoc, begin, end)
	}
	return doc[:i+len(begin)] + body + doc[j:]
}

var routeHeadingRE = regexp.MustCompile(`(?m)^### (GET|POST|PUT|PATCH|DELETE) (/\S*)$`)

// TestAPIDoc keeps docs/api.md in step with the routes: its route index
// and error table are generated from Routes and Status (rewrite them with
// -update), every route has a section of its own, and no section
// describes a route that does not exist.
func TestAPIDoc(t *testing.T) {
	b, err := os.ReadFile(apiDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	want := splice(t, splice(t, doc, routesBegin, routesEnd, routeTable()), codesBegin, codesEnd, codeTable())
	if *updateDocs {
		if err := os.WriteFile(apiDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		doc = want
	}
	if doc != want {
		t.Errorf("%s: the generated route or code table is out of date; run go test ./pkg/wire -update", apiDoc)
	}
	documented := map[string]bool{}
	for _, m := range routeHeadingRE.FindAllStringSubmatch(doc, -1) {
		documented[m[1]+" "+m[2]] = true
	}
	known := map[string]bool{}
	for _, r := range Routes() {
		key := r.Method + " " + r.Path
		known[key] = true
		if !documented[key] {
			t.Errorf("%s has no section \"### %s\"", apiDoc, key)
		}
	}
	for key := range documented {
		if !known[key] {
			t.Errorf("%s documents %q, which is not a route", apiDoc, key)
		}
	}
}
