package searchindex

import (
	"fmt"
	"slices"
	"testing"
)

// TestScanMatchesReader compares scan, which decodes term sequences
// inline, with the loop over a seqReader it replaced (scanRef): the same
// frequencies and occurrences for every document and random queries,
// over random corpora with one to three fields, several texts per field,
// empty fields, long documents and term ids past 64.
func TestScanMatchesReader(t *testing.T) {
	for seed := range uint64(6) {
		nf := 1 + int(seed%3)
		vocab := []int{30, 400}[seed%2]
		g := newRandCorpus(seed, nf, vocab)
		ix := buildFrom(t, testConfig(nf), g.docs(300, nil))
		c := ix.c
		for qn := range 20 {
			q := g.query(ix)
			p, err := ix.prepare(c, &q)
			if err != nil {
				t.Fatal(err)
			}
			tfs, want := make([][MaxFields]uint32, len(p.terms)), make([][MaxFields]uint32, len(p.terms))
			var occ, wantOcc []occurrence
			for n := range uint32(len(c.docs)) {
				clear(tfs)
				clear(want)
				occ = p.scan(n, occ, tfs)
				wantOcc = p.scanRef(n, wantOcc, want)
				if !slices.Equal(occ, wantOcc) || !slices.Equal(tfs, want) {
					t.Fatalf("%s: document %d: scan %v %v, reader %v %v", fmt.Sprint("seed ", seed, " query ", qn), n, occ, tfs, wantOcc, want)
				}
			}
		}
	}
}

// scanRef is scan as it was, over a seqReader: what TestScanMatchesReader
// compares with. It reads document n's term sequence once: it adds to tfs the
// frequencies of the query terms per field, and returns the occurrences
// of the query terms of positive weight, in order, reusing occ.
func (p *prepared) scanRef(n uint32, occ []occurrence, tfs [][MaxFields]uint32) []occurrence {
	c := p.c
	occ = occ[:0]
	pos, text, field := 0, 0, -1
	r := seqReader{b: c.seq(&c.docs[n]), lens: lensArray(c.lensOf(n))}
	for {
		t, f, ok := r.next()
		if !ok {
			return occ
		}
		if t == gapTerm || f != field {
			text++
			pos += ProximityDistance + 1
			field = f
			if t == gapTerm {
				continue
			}
		}
		pos++
		for qi := range p.terms {
			if p.terms[qi].id == t {
				tfs[qi][f]++
				if p.terms[qi].w > 0 {
					occ = append(occ, occurrence{pos: pos, qi: qi, text: text})
				}
			}
		}
	}
}
