package engine

import (
	"maps"
	"testing"
)

// TestNamespaceTermSet: the term sets similarity linking compares, taken
// through the namespace's analyzer and its stem cache, are the sets
// textindex.Tokenize gives, for the same words seen again too.
func TestNamespaceTermSet(t *testing.T) {
	ns := (&Engine{}).newNS(0, "")
	texts := []string{
		"The deploy pipeline failed; deploying again fixed the deployments.",
		"connection connected connecting connections, running runner runs",
		"Rotate the API key before Friday: rotated keys expire after 90 days.",
		"中文分词测试 and ümlauts über naïve café",
		"",
	}
	for range 2 { // the second round reads the words from the cache
		for _, text := range texts {
			if got, want := ns.termSet(text), termSet(text); !maps.Equal(got, want) {
				t.Errorf("%q: namespace terms %v, Tokenize's %v", text, got, want)
			}
		}
	}
}
