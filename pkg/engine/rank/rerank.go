package rank

// Params are the settings of the second ranking stage (Rerank) and of the
// first stage's weighting.
type Params struct {
	// BM25 parameters of the content text.
	BM25 BM25
	// Candidates is how many of the first stage's best documents Rerank
	// sees.
	Candidates int
	// Proximity is the weight of the BM25TP term-pair score, Window the
	// largest distance between two terms that counts.
	Proximity float64
	Window    int
	// Context is the share of a neighbour's evidence a record receives.
	Context Context
	// Field weights: the record's time, its speaker, and the words a
	// lexical resource relates to its text, each scored as
	// weight · idf per matching term (BM25 with b = 0: a field of one or
	// a few terms says nothing through its length).
	Time, Speaker, Lexical float64
}

// Recommended returns the parameters measured best on the development
// sets (docs/recall-ranking.md). Lexical applies only where the index has
// the lexical field; the rest stands without it.
func Recommended() Params {
	return Params{
		BM25:       BM25{K1: 1.2, B: 0.5},
		Candidates: 30,
		Proximity:  1,
		Window:     5,
		Context:    Context{Before: 1, After: 0.2},
		Time:       1,
		Speaker:    1,
		Lexical:    0.5,
	}
}

// Docs is what Rerank needs to know about the documents of a store.
type Docs[K comparable] interface {
	Sequence[K]
	// Terms returns a document's content terms in order, with repeats.
	Terms(doc K) []string
	// Fields returns the document's field scores for the query, already
	// weighted: shared evidence (the lexical field), which neighbours
	// share like the text's, and own evidence (time, speaker), which
	// stays with the record: neighbours in one session share its time,
	// and a speaker's name says nothing about the turn next to it.
	Fields(doc K) (shared, own float64)
}

// Rerank is the second ranking stage: the first stage's best candidates
// (at most p.Candidates of cands, best first) are scored again from their
// term sequences (weighted BM25 plus p.Proximity · BM25TP proximity, plus
// the shared fields), smoothed over their neighbours (SmoothNeighbours,
// which may bring in neighbours that were not candidates), and given
// their own fields. The result is ordered by score, best first; ties keep
// the order of cands, then of the neighbours in the order they were
// reached, so the ranking is deterministic when cands is.
func Rerank[K comparable](p Params, s *Scorer, cands []Scored[K], docs Docs[K]) []Scored[K] {
	if p.Candidates > 0 && len(cands) > p.Candidates {
		cands = cands[:p.Candidates]
	}
	content := func(d K) float64 {
		terms := docs.Terms(d)
		v := s.BM25(terms)
		if p.Proximity > 0 {
			v += p.Proximity * s.Proximity(terms, p.Window)
		}
		shared, _ := docs.Fields(d)
		return v + shared
	}
	top := make([]Scored[K], len(cands))
	for i, c := range cands {
		top[i] = Scored[K]{Doc: c.Doc, Score: content(c.Doc)}
	}
	if p.Context.Before != 0 || p.Context.After != 0 {
		top = SmoothNeighbours(top, docs, p.Context, content)
	}
	for i := range top {
		_, own := docs.Fields(top[i].Doc)
		top[i].Score += own
	}
	sortScored(top)
	return top
}
