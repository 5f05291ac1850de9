package searchindex

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestDocEntrySize guards the document table's footprint: one entry per
// document, so every byte counts a hundred thousand times.
func TestDocEntrySize(t *testing.T) {
	if got := unsafe.Sizeof(docEntry{}); got != 48 {
		t.Errorf("docEntry takes %d bytes, want 48", got)
	}
}

// TestTermTable checks the term table against a map through inserts
// across rehashes, and that texts never inserted, including "", are not
// found.
func TestTermTable(t *testing.T) {
	texts := []string{""}
	tab := newTermTable(0)
	want := map[string]uint32{}
	for i := range 5000 {
		s := fmt.Sprintf("t%d", i*7919%100003)
		if _, ok := want[s]; ok {
			continue
		}
		texts = append(texts, s)
		tab.insert(texts, uint32(len(texts)-1))
		want[s] = uint32(len(texts) - 1)
	}
	for s, id := range want {
		if got, ok := tab.find(texts, s); !ok || got != id {
			t.Fatalf("find %q = %d, %v; want %d", s, got, ok, id)
		}
	}
	for _, s := range []string{"", "t", "x1", "t100003", "t1 "} {
		if got, ok := tab.find(texts, s); ok {
			t.Fatalf("find %q = %d: found a text never inserted", s, got)
		}
	}
	if tab.n != len(want) || tab.n*4 > len(tab.slots)*3 {
		t.Fatalf("%d terms in %d slots, want %d terms at most 3/4 full", tab.n, len(tab.slots), len(want))
	}
}

// BenchmarkTermLookup compares finding a term's id in the term table
// with a map from text to id, over 40,000 terms looked up with a Zipf
// distribution as document terms are.
func BenchmarkTermLookup(b *testing.B) {
	texts := []string{""}
	for i := range 40000 {
		texts = append(texts, fmt.Sprintf("term%dx", i*7919))
	}
	z := rand.NewZipf(rand.New(rand.NewPCG(1, 1)), 1.1, 1, uint64(len(texts)-2))
	qs := make([]string, 1<<16)
	for i := range qs {
		qs[i] = string([]byte(texts[1+z.Uint64()])) // not sharing the text's bytes
	}
	b.Run("table", func(b *testing.B) {
		tab := newTermTable(0)
		for i := 1; i < len(texts); i++ {
			tab.insert(texts, uint32(i))
		}
		for i := 0; b.Loop(); i++ {
			if _, ok := tab.find(texts, qs[i&(len(qs)-1)]); !ok {
				b.Fatal("term not found")
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		m := make(map[string]uint32)
		for i := 1; i < len(texts); i++ {
			m[texts[i]] = uint32(i)
		}
		for i := 0; b.Loop(); i++ {
			if _, ok := m[qs[i&(len(qs)-1)]]; !ok {
				b.Fatal("term not found")
			}
		}
	})
}
