package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	mdLinkRE    = regexp.MustCompile(`\]\(([^)#\s]*)(#[^)\s]*)?\)`)
	mdHeadingRE = regexp.MustCompile(`^#+\s+(.*)$`)
	slugDropRE  = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// TestDocLinks: the README and the Markdown of docs/ and deploy-docs/ link
// only to files that exist in the repository (web links aside), and a
// link's #anchor names a heading of the Markdown file it points to.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..")
	docs := []string{"README.md"}
	for _, dir := range []string{"docs", "deploy-docs"} {
		found, err := filepath.Glob(filepath.Join(root, dir, "*.md"))
		if err != nil || len(found) == 0 {
			t.Fatalf("no Markdown in %s: %v", dir, err)
		}
		for _, f := range found {
			docs = append(docs, filepath.Join(dir, filepath.Base(f)))
		}
	}
	for _, doc := range docs {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLinkRE.FindAllStringSubmatch(string(b), -1) {
			target, anchor := m[1], strings.TrimPrefix(m[2], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := filepath.Join(root, doc)
			if target != "" {
				path = filepath.Join(root, filepath.Dir(doc), target)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, target)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !headingSlugs(t, path)[anchor] {
				t.Errorf("%s links to %s#%s, which has no such heading", doc, target, anchor)
			}
		}
	}
}

// headingSlugs returns the anchors GitHub gives the headings of the
// Markdown file at path (lower case, punctuation dropped, spaces to
// hyphens), leaving out lines inside fenced code blocks.
func headingSlugs(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	slugs := map[string]bool{}
	fenced := false
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if m := mdHeadingRE.FindStringSubmatch(line); m != nil && !fenced {
			s := slugDropRE.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
			slugs[strings.ReplaceAll(s, " ", "-")] = true
		}
	}
	return slugs
}
