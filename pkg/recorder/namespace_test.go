package recorder

import (
	"path/filepath"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

func TestProjectNamespace(t *testing.T) {
	for dir, want := range map[string]string{
		"/src/app":                               "app",
		"/src/My App":                            "my-app",
		"/src/api_v2.1":                          "api_v2.1",
		"/src/--Weird--  Name!!":                 "weird-name",
		"/src/.dotfiles":                         "dotfiles",
		"/src/café-Crème":                        "caf-cr-me",
		"/src/2026 Q3 (draft)":                   "2026-q3-draft",
		"/src/x/":                                "x",
		"/src/" + strings.Repeat("A", 80):        strings.Repeat("a", 64),
		"/src/" + strings.Repeat("a", 63) + "!b": strings.Repeat("a", 63),
	} {
		got, err := ProjectNamespace(dir)
		if err != nil || got != want {
			t.Errorf("ProjectNamespace(%q) = %q, %v; want %q", dir, got, err, want)
			continue
		}
		if err := memory.ValidateNamespace(got); err != nil {
			t.Errorf("ProjectNamespace(%q) = %q, which is not a namespace: %v", dir, got, err)
		}
	}
	for _, dir := range []string{"/src/日本語", "/src/!!!", "/"} {
		if got, err := ProjectNamespace(dir); err == nil || !strings.Contains(err.Error(), "--namespace") {
			t.Errorf("ProjectNamespace(%q) = %q, %v; want an error asking for --namespace", dir, got, err)
		}
	}
	// A relative directory is the one it names from the working directory.
	wd, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := ProjectNamespace("."); got != filepath.Base(wd) {
		t.Errorf("ProjectNamespace(.) = %q in %s", got, wd)
	}
}
