package rank

import (
	"slices"
	"testing"
)

// line is a conversation of documents 0..n-1 in order.
type line int

func (l line) Prev(d int) (int, bool) { return d - 1, d > 0 }
func (l line) Next(d int) (int, bool) { return d + 1, d+1 < int(l) }

func TestSmoothNeighbours(t *testing.T) {
	// Turn 1 echoes the question (score 4); turn 2 answers it but shares
	// no word (score 0, not a candidate); turn 5 matches weakly.
	own := map[int]float64{1: 4, 5: 3, 0: 0.5}
	cands := []Scored[int]{{1, 4}, {5, 3}}
	got := SmoothNeighbours(cands, line(7), Context{Before: 1, After: 0.25}, func(d int) float64 { return own[d] })
	want := []Scored[int]{
		{1, 4 + 0.5 + 0},  // 4 + before·s(0) + after·s(2)
		{2, 0 + 4 + 0},    // the answer after the echo
		{5, 3 + 0 + 0},    // a candidate before the neighbour it ties with
		{6, 0 + 3},        // the turn after turn 5
		{0, 0.5 + 0.25*4}, // before the echo
		{4, 0 + 0.25*3},   // the turn before turn 5
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if got[0].Doc != 1 || got[1].Doc != 2 {
		t.Errorf("the answer after the echo must come second: %v", got)
	}
}

func TestSmoothNeighboursOff(t *testing.T) {
	cands := []Scored[int]{{3, 2}, {1, 2}, {5, 1}}
	got := SmoothNeighbours(cands, line(7), Context{}, nil)
	// Neighbours are listed with their own score (0 without a score
	// function) and candidates keep their order.
	if got[0] != (Scored[int]{3, 2}) || got[1] != (Scored[int]{1, 2}) || got[2] != (Scored[int]{5, 1}) {
		t.Errorf("got %v", got)
	}
	for _, s := range got[3:] {
		if s.Score != 0 {
			t.Errorf("neighbour %v has a score", s)
		}
	}
	if len(got) != 3+4 { // 2, 4, 0, 6
		t.Errorf("got %d documents: %v", len(got), got)
	}
}
