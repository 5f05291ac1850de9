package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var mdLinkRE = regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)

// TestDocLinks: the README and docs/ link only to files that exist in the
// repository (web links aside).
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..")
	for _, doc := range []string{"README.md", "docs/design.md", "docs/api.md"} {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLinkRE.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.Dir(doc), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, target)
			}
		}
	}
}
