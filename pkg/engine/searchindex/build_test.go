package searchindex

import (
	"bytes"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/engine/textindex"
)

// textDocs returns n documents of three fields analysed by the real
// tokenizer: English-like prose in the first, mixed scripts, compounds and
// odd characters in the second, a text made only of stop words or of
// nothing in some.
func textDocs(n int) []*Document {
	prose := textindex.Corpus(21, n)
	odd := []string{
		"alice@example.com pkg/store snake_case_name v1.2.3", "東京都庁に行く。 北京大学",
		"it’s the users' guide; don't O'Reilly", "ＨＥＬＬＯ Ｗｏｒｌｄ１２３", "ภาษา 서울에서",
		"co\u00adoperate foo\u200bbar a\x00b", "ΣΟΦΟΣ σοφος İSTANBUL", "the and of", "",
		strings.Repeat("é", 40), "Naïve café résumé façade", "🎉 ship it 👍🏽",
	}
	docs := make([]*Document, n)
	for i := range docs {
		d := &Document{ID: testID(i), Attrs: Attrs{Tag: uint32(i % 3), Time: int64(i)}}
		d.Fields[0] = []string{prose[i]}
		d.Fields[1] = []string{odd[i%len(odd)], odd[(i*7)%len(odd)]}
		if i%5 == 0 {
			d.Fields[2] = []string{prose[(i*13)%n][:min(len(prose[(i*13)%n]), 40)]}
		}
		docs[i] = d
	}
	return docs
}

// TestBuildWithTextAnalyzerMatchesAdd checks that Build, whose workers
// share the tokenizer's stem cache, gives the index that adding the
// documents one by one gives: the same terms, term numbers and sequences.
func TestBuildWithTextAnalyzerMatchesAdd(t *testing.T) {
	an := textindex.NewAnalyzer()
	cfg := testConfig(3)
	cfg.Analyzer, cfg.AnalyzerVersion = an, an.Version()
	docs := textDocs(3000) // several chunks per worker
	built := buildFrom(t, cfg, docs).Snapshot().AppendTo(nil, nil)
	ix := addAll(t, cfg, docs)
	if added := ix.Snapshot().AppendTo(nil, nil); !bytes.Equal(built, added) {
		t.Fatal("a build and additions of the same documents differ")
	}
	if ix.Stats().Docs != len(docs) {
		t.Fatalf("%d documents indexed, want %d", ix.Stats().Docs, len(docs))
	}
}
