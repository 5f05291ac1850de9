package searchindex

import (
	"bytes"
	"errors"
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

// TestBuilderAnalysers: documents analysed by three analysers in turns,
// batches of uneven sizes (some empty) added in document order on another
// goroutine's behalf, give the index that adding the documents one by
// one gives; a batch added out of its analyser's order is refused, and so
// is a document id given twice.
func TestBuilderAnalysers(t *testing.T) {
	an := textindex.NewAnalyzer()
	cfg := testConfig(3)
	cfg.Analyzer, cfg.AnalyzerVersion = an, an.Version()
	docs := textDocs(2000)
	b, err := NewBuilder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	as := []*Analyser{b.Analyser(), b.Analyser(), b.Analyser()}
	var batches []*Batch
	for i, k := 0, 0; i < len(docs); k++ {
		a := as[k%len(as)]
		for range (k * 37) % 150 { // 0 to 149 documents
			if i < len(docs) {
				a.Add(docs[i])
				i++
			}
		}
		batches = append(batches, a.Batch())
	}
	for _, bt := range batches {
		if err := b.Add(bt); err != nil {
			t.Fatal(err)
		}
	}
	built := b.Finish().Snapshot().AppendTo(nil, nil)
	if added := addAll(t, cfg, docs).Snapshot().AppendTo(nil, nil); !bytes.Equal(built, added) {
		t.Fatal("a build by three analysers and additions of the same documents differ")
	}

	b, _ = NewBuilder(cfg)
	a := b.Analyser()
	a.Add(docs[0])
	first := a.Batch()
	a.Add(docs[1])
	second := a.Batch()
	if err := b.Add(second); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Errorf("second batch added first: %v", err)
	}
	if err := b.Add(first); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(second); err != nil {
		t.Fatal(err)
	}
	a.Add(docs[0])
	if err := b.Add(a.Batch()); !errors.Is(err, ErrDuplicate) {
		t.Errorf("a document added twice: %v, want ErrDuplicate", err)
	}
}
