package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/engine/rank"
	"memsvc.dev/memsvc/pkg/engine/textindex"
)

// The rankeval subcommand tries ranking pipelines on the recall-quality
// datasets in process: it indexes every turn with memsvc's tokenizer
// (rankIndex), answers every question with each pipeline and scores the
// answers with the same metrics as recall-quality. A pipeline is the
// first-stage BM25 with the techniques of package rank switched on or
// off; an ablation table shows what each one is worth on every dataset.

// pipeline is one ranking configuration. The zero value of a technique's
// field switches it off.
type pipeline struct {
	Name string
	// BM25 parameters of the content text.
	K1, B float64
	// Query analysis: function words get no weight; Repeats counts a
	// repeated query word once per occurrence (what not deduplicating
	// would do).
	Function bool
	Repeats  bool
	// Time field: weight of its BM25 (0: off); Widen adds coarser terms
	// to a question's dates; Relative resolves spoken relative dates.
	Time     float64
	Widen    bool
	Relative bool
	// Speaker field weight (0: off); SpeakerText stores "Speaker: text".
	Speaker     float64
	SpeakerText bool
	// Proximity weight (0: off) and window.
	Prox       float64
	ProxWindow int
	// Neighbour smoothing.
	Before, After float64
	// Pseudo-relevance feedback.
	PRF rank.Feedback
	// Lexical expansion field weight (0: off) and its index options.
	Lex                 float64
	LexSenses, LexDepth int
	LexVerbs            bool
	LexStem             bool
	LexTagged           bool // only lemmas of WordNet's sense-tagged corpus
	// Character n-gram field weight (0: off) and n.
	Gram  float64
	GramN int
	// Top is how many first-stage candidates the later stages see.
	Top int
}

// baseline is plain BM25 over memsvc's terms: what the engine's text
// search ranks by today.
var baseline = pipeline{Name: "bm25", K1: 1.2, B: 0.75, Top: 100}

// chosen is the pipeline package rank recommends (docs/recall-ranking.md):
// the baseline with every technique that paid for itself on both
// development sets.
const chosen = "top=30,function,time=1,widen,speaker=1,prox=1,window=5,before=1,after=0.2,b=0.5,lex=0.5,senses=1,depth=2,lexstem"

// chosenPipeline is the pipeline of chosen.
func chosenPipeline() (pipeline, error) {
	p := baseline
	p.Name = "chosen"
	return p, p.set(chosen)
}

// ablation is a technique of the ablation table: the settings that switch
// it off in the chosen pipeline (or on, for techniques not chosen).
type ablation struct {
	name string
	off  string // applied to chosen to remove the technique
	on   string // applied to baseline to add it alone
	kept bool   // part of chosen
}

var ablations = []ablation{
	{"query analysis (function words)", "function=0", "function", true},
	{"BM25 b = 0.5 (instead of 0.75)", "b=0.75", "b=0.5", true},
	{"proximity (BM25TP, window 5)", "prox=0", "prox=1,window=5", true},
	{"time field", "time=0", "time=1,widen", true},
	{"speaker field", "speaker=0", "speaker=1", true},
	{"neighbours (before 1, after 0.2)", "before=0,after=0", "before=1,after=0.2", true},
	{"WordNet field (1 sense, 2 hypernym levels)", "lex=0", "lex=0.5,senses=1,depth=2,lexstem", true},
	{"relative dates resolved", "", "relative", false},
	{"RM3 feedback (3 docs, 20 terms, λ 0.2)", "", "prf=0.2,prfdocs=3,prfterms=20,prfidf", false},
	{"character 5-grams", "", "gram=1,gramn=5", false},
	{"\"Speaker: text\" stored", "", "speakertext", false},
}

// ablationPipelines are the rows of the ablation table.
func ablationPipelines() ([]pipeline, error) {
	all, err := chosenPipeline()
	if err != nil {
		return nil, err
	}
	out := []pipeline{baseline}
	for _, a := range ablations {
		if !a.kept {
			continue
		}
		p := baseline
		p.Name = "bm25 + " + a.name
		if err := p.set(a.on); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	out = append(out, all)
	for _, a := range ablations {
		name, set := "chosen − "+a.name, a.off
		if !a.kept {
			name, set = "chosen + "+a.name, a.on
		}
		p := all
		p.Name = name
		if err := p.set(set); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// fields maps each setting key of set to the field of p it sets: a number,
// a count (the value's whole part) or a switch (on unless 0).
func (p *pipeline) fields() map[string]any {
	return map[string]any{
		"k1": &p.K1, "b": &p.B, "function": &p.Function, "repeats": &p.Repeats, "time": &p.Time,
		"widen": &p.Widen, "relative": &p.Relative, "speaker": &p.Speaker,
		"speakertext": &p.SpeakerText, "prox": &p.Prox, "window": &p.ProxWindow, "before": &p.Before,
		"after": &p.After, "prf": &p.PRF.Weight, "prfdocs": &p.PRF.Docs, "prfterms": &p.PRF.Terms,
		"prfidf": &p.PRF.IDF, "lex": &p.Lex, "senses": &p.LexSenses, "depth": &p.LexDepth,
		"verbs": &p.LexVerbs, "lexstem": &p.LexStem, "tagged": &p.LexTagged, "gram": &p.Gram, "gramn": &p.GramN, "top": &p.Top,
	}
}

// setPipeline applies "key=value" settings to p.
func (p *pipeline) set(settings string) error {
	for kv := range strings.SplitSeq(settings, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			v = "1"
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("pipeline setting %s: value must be a number", quoteShort(kv))
		}
		if k == "name" {
			return errors.New("pipeline setting name: give the name before the colon")
		}
		switch field := p.fields()[k].(type) {
		case *float64:
			*field = f
		case *int:
			*field = int(f)
		case *bool:
			*field = f != 0
		default:
			return fmt.Errorf("pipeline setting %s: unknown key", quoteShort(k))
		}
	}
	return nil
}

// parsePipeline reads "name:key=value,...", starting from base.
func parsePipeline(s string, base pipeline) (pipeline, error) {
	name, settings, ok := strings.Cut(s, ":")
	if !ok {
		name, settings = s, ""
	}
	if name == "chosen" {
		var err error
		if base, err = chosenPipeline(); err != nil {
			return base, err
		}
	}
	p := base
	p.Name = name
	return p, p.set(settings)
}

// evaluator answers questions with pipelines over one dataset.
type evaluator struct {
	ds       *dataset
	analyzer *rank.Analyzer
	indexes  map[rankIndexOptions]*rankIndex
	wordNet  *wordNet
}

func newEvaluator(ds *dataset) *evaluator {
	return &evaluator{ds: ds, analyzer: rank.NewAnalyzer(textindex.Tokenize), indexes: map[rankIndexOptions]*rankIndex{}}
}

func (e *evaluator) index(p *pipeline) *rankIndex {
	opt := rankIndexOptions{speakerText: p.SpeakerText, relative: p.Relative}
	if p.Lex > 0 {
		opt.lexSenses, opt.lexDepth, opt.lexVerbs, opt.lexStem, opt.lexTagged = p.LexSenses, p.LexDepth, p.LexVerbs, p.LexStem, p.LexTagged
	}
	if p.Gram > 0 {
		opt.gram = p.GramN
	}
	x := e.indexes[opt]
	if x == nil {
		x = newRankIndex(e.ds, opt, e.wordNet)
		e.indexes[opt] = x
	}
	return x
}

// run answers every question with p, limit turns each.
func (e *evaluator) run(p *pipeline, limit int) [][]string {
	x := e.index(p)
	out := make([][]string, len(e.ds.Questions))
	for i, q := range e.ds.Questions {
		docs := e.answer(x, p, q.Text, limit)
		out[i] = make([]string, len(docs))
		for j, d := range docs {
			out[i][j] = x.docs[d].turn.ID
		}
	}
	return out
}

// queryTerms analyses the question's text as pipeline p says.
func (e *evaluator) queryTerms(p *pipeline, text string) []rank.QueryTerm {
	terms := termSeq(text)
	var q []rank.QueryTerm
	switch {
	case p.Function:
		q = e.analyzer.Analyze(terms)
	default:
		for _, t := range terms {
			if i := slices.IndexFunc(q, func(x rank.QueryTerm) bool { return x.Term == t }); i >= 0 {
				if p.Repeats {
					q[i].Weight++
				}
				continue
			}
			q = append(q, rank.QueryTerm{Term: t, Weight: 1})
		}
	}
	if p.Function && p.Repeats {
		for i := range q {
			if q[i].Weight > 0 {
				q[i].Weight = float64(strings.Count(" "+strings.Join(terms, " ")+" ", " "+q[i].Term+" "))
			}
		}
	}
	return q
}

// query is a question prepared for scoring.
type query struct {
	terms   []rank.QueryTerm
	times   []string
	scorer  *rank.Scorer
	speaker map[string]float64 // speaker-field term -> weight · idf
	lex     map[string]float64 // lexical-field term -> weight · idf
	grams   map[string]float64 // n-gram -> idf / number of the query's n-grams
}

func (e *evaluator) prepare(x *rankIndex, p *pipeline, terms []rank.QueryTerm, text string) *query {
	q := &query{terms: terms}
	idf := make([]float64, len(terms))
	for i, t := range terms {
		idf[i] = x.idf(t.Term)
	}
	q.scorer = rank.NewScorer(rank.BM25{K1: p.K1, B: p.B}, terms, idf, x.avgdl())
	if p.Time > 0 {
		q.times = rank.QueryTimeTerms(text, p.Widen)
	}
	if p.Lex > 0 {
		q.lex = map[string]float64{}
		for _, t := range terms {
			if t.Weight > 0 && x.fields[fieldLex].df[t.Term] > 0 {
				q.lex[t.Term] = t.Weight * x.fieldIDF(fieldLex, t.Term)
			}
		}
	}
	if p.Gram > 0 {
		q.grams = map[string]float64{}
		var content []string
		for _, w := range splitWords(text) {
			if !functionWords[w] {
				content = append(content, w)
			}
		}
		gs := charGrams(strings.Join(content, " "), p.GramN)
		for _, g := range gs {
			if x.fields[fieldGram].df[g] > 0 {
				q.grams[g] = x.fieldIDF(fieldGram, g) / float64(len(gs))
			}
		}
	}
	if p.Speaker > 0 {
		q.speaker = map[string]float64{}
		for _, t := range terms {
			if t.Weight > 0 && x.fields[fieldSpeaker].df[t.Term] > 0 {
				q.speaker[t.Term] = t.Weight * x.fieldIDF(fieldSpeaker, t.Term)
			}
		}
	}
	return q
}

// firstStage scores every document that matches q: weighted BM25 of the
// content, plus the speaker and time fields (scored with b = 0: every
// record has one time and one speaker, so length says nothing).
func (e *evaluator) firstStage(x *rankIndex, p *pipeline, q *query) map[int32]float64 {
	bm := rank.BM25{K1: p.K1, B: p.B}
	avg := x.avgdl()
	scores := map[int32]float64{}
	for _, t := range q.terms {
		if t.Weight <= 0 {
			continue
		}
		idf := x.idf(t.Term)
		for _, ps := range x.postings[t.Term] {
			scores[ps.doc] += t.Weight * bm.TermScore(idf, int(ps.tf), len(x.docs[ps.doc].terms), avg)
		}
	}
	for term, w := range q.speaker {
		for _, d := range x.fields[fieldSpeaker].postings[term] {
			scores[d] += p.Speaker * w
		}
	}
	for term, w := range q.lex {
		for _, d := range x.fields[fieldLex].postings[term] {
			scores[d] += p.Lex * w
		}
	}
	for g, w := range q.grams {
		for _, d := range x.fields[fieldGram].postings[g] {
			scores[d] += p.Gram * w
		}
	}
	for _, term := range q.times {
		idf := x.fieldIDF(fieldTime, term)
		for _, d := range x.fields[fieldTime].postings[term] {
			scores[d] += p.Time * idf
		}
	}
	return scores
}

// evalDocs is the rank.Docs of one question over a rankIndex.
type evalDocs struct {
	sequence
	p *pipeline
	q *query
}

func (d evalDocs) Terms(doc int32) []string { return d.x.docs[doc].terms }

// Fields scores the lexical and n-gram fields (shared with neighbours)
// and the speaker and time fields (the record's own).
func (d evalDocs) Fields(doc int32) (shared, own float64) {
	x, p, q := d.x, d.p, d.q
	f := &x.docs[doc].fields
	for _, t := range f[fieldLex] {
		shared += p.Lex * q.lex[t]
	}
	for _, g := range dedupeTerms(f[fieldGram]) {
		shared += p.Gram * q.grams[g]
	}
	for _, t := range f[fieldSpeaker] {
		own += p.Speaker * q.speaker[t]
	}
	for _, t := range q.times {
		if slices.Contains(f[fieldTime], t) {
			own += p.Time * x.fieldIDF(fieldTime, t)
		}
	}
	return shared, own
}

// params is p as rank.Params.
func (p *pipeline) params() rank.Params {
	return rank.Params{BM25: rank.BM25{K1: p.K1, B: p.B}, Candidates: p.Top, Proximity: p.Prox, Window: p.ProxWindow,
		Context: rank.Context{Before: p.Before, After: p.After}, Time: p.Time, Speaker: p.Speaker, Lexical: p.Lex}
}

// ranked orders a score map, best first, ties by ingest order.
func ranked(scores map[int32]float64) []rank.Scored[int32] {
	out := make([]rank.Scored[int32], 0, len(scores))
	for d, s := range scores {
		if s > 0 {
			out = append(out, rank.Scored[int32]{Doc: d, Score: s})
		}
	}
	slices.SortFunc(out, func(a, b rank.Scored[int32]) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return int(a.Doc - b.Doc)
	})
	return out
}

// answer returns the best limit documents for a question.
func (e *evaluator) answer(x *rankIndex, p *pipeline, text string, limit int) []int32 {
	terms := e.queryTerms(p, text)
	q := e.prepare(x, p, terms, text)
	cands := ranked(e.firstStage(x, p, q))
	if p.PRF.Weight > 0 && len(cands) > 0 {
		n := min(p.PRF.Docs, len(cands))
		docs := make([][]string, n)
		scores := make([]float64, n)
		for i, c := range cands[:n] {
			docs[i], scores[i] = x.docs[c.Doc].terms, c.Score
		}
		terms = p.PRF.Expand(terms, docs, scores, x.idf, e.analyzer.IsFunction)
		q = e.prepare(x, p, terms, text)
		cands = ranked(e.firstStage(x, p, q))
	}
	top := cands[:min(len(cands), p.Top)]
	if p.Prox > 0 || p.Before > 0 || p.After > 0 {
		top = rank.Rerank(p.params(), q.scorer, top, evalDocs{sequence{x}, p, q})
	}
	out := make([]int32, 0, limit)
	for _, c := range top[:min(len(top), limit)] {
		out = append(out, c.Doc)
	}
	return out
}

// rankevalConfig is the command line of rankeval.
type rankevalConfig struct {
	datasets  []string
	pipelines []string
	groups    bool
	ablate    bool
	limit     int
	wordNet   string
}

func parseRankevalFlags(args []string, stderr io.Writer) (*rankevalConfig, error) {
	fs := newFlagSet("memsvc-bench rankeval", "Usage: memsvc-bench rankeval --dataset FILE[,FILE] [flags]\n\n"+
		"Index every turn of the datasets in process with memsvc's tokenizer and answer their\n"+
		"questions with ranking pipelines (package pkg/engine/rank), reporting hit@1/5/10 and MRR.\n"+
		"A pipeline is NAME:key=value,... applied to the chosen pipeline (see rankeval.go).\n\nFlags:\n", stderr)
	cfg := &rankevalConfig{}
	var datasets string
	var pipes multiFlag
	fs.StringVar(&datasets, "dataset", "", "comma-separated JSONL datasets (required)")
	fs.Var(&pipes, "pipeline", "a pipeline to evaluate, NAME:key=value,... (repeatable; default: the ablation table)")
	fs.BoolVar(&cfg.groups, "groups", false, "also print hit@5 and MRR per category and tag")
	fs.BoolVar(&cfg.ablate, "ablate", false, "evaluate the ablation table of the chosen pipeline (each technique on and off)")
	fs.IntVar(&cfg.limit, "limit", 10, "answers per question")
	fs.StringVar(&cfg.wordNet, "wordnet", "", "WordNet database directory for the lex settings (Debian: /usr/share/wordnet)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil
		}
		return nil, &usageError{err}
	}
	for d := range strings.SplitSeq(datasets, ",") {
		if d = strings.TrimSpace(d); d != "" {
			cfg.datasets = append(cfg.datasets, d)
		}
	}
	if len(cfg.datasets) == 0 {
		return nil, &usageError{errors.New("--dataset is required")}
	}
	cfg.pipelines = pipes
	return cfg, nil
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// runRankeval is the rankeval subcommand.
func runRankeval(args []string, stdout, stderr io.Writer) error {
	cfg, err := parseRankevalFlags(args, stderr)
	if err != nil || cfg == nil {
		return err
	}
	var pipes []pipeline
	if cfg.ablate {
		if pipes, err = ablationPipelines(); err != nil {
			return err
		}
	}
	for _, s := range cfg.pipelines {
		p, err := parsePipeline(s, baseline)
		if err != nil {
			return &usageError{err}
		}
		pipes = append(pipes, p)
	}
	if len(pipes) == 0 {
		pipes = append(pipes, baseline)
	}
	var wn *wordNet
	if cfg.wordNet != "" {
		if wn, err = loadWordNet(cfg.wordNet); err != nil {
			return fmt.Errorf("--wordnet: %w", err)
		}
	}
	evals := make([]*evaluator, len(cfg.datasets))
	for i, path := range cfg.datasets {
		ds, err := loadDataset(path)
		if err != nil {
			return err
		}
		evals[i] = newEvaluator(ds)
		evals[i].wordNet = wn
	}
	fmt.Fprintf(stdout, "| Pipeline |")
	for _, path := range cfg.datasets {
		fmt.Fprintf(stdout, " %s hit@1 | hit@5 | hit@10 | MRR |", shortName(path))
	}
	fmt.Fprintf(stdout, " µs/question |\n|---|")
	for range cfg.datasets {
		fmt.Fprintf(stdout, "---:|---:|---:|---:|")
	}
	fmt.Fprintf(stdout, "---:|\n")
	for _, p := range pipes {
		fmt.Fprintf(stdout, "| %s |", p.Name)
		var took time.Duration
		var n int
		var groups [][]groupScores
		for _, e := range evals {
			e.index(&p)
			start := time.Now()
			r := e.run(&p, cfg.limit)
			took += time.Since(start)
			n += len(r)
			g := byGroup(e.ds.Questions, r)
			groups = append(groups, g)
			s := g[0].Scores
			fmt.Fprintf(stdout, " %s | %s | %s | %s |", f3(s.Hit1), f3(s.Hit5), f3(s.Hit10), f3(s.MRR))
		}
		fmt.Fprintf(stdout, " %.0f |\n", float64(took.Microseconds())/float64(max(n, 1)))
		if cfg.groups {
			for i, g := range groups {
				for _, gs := range g[1:] {
					fmt.Fprintf(stdout, "|   %s %s (%d) | hit@5 %s | MRR %s |\n", shortName(cfg.datasets[i]), gs.Group, gs.Scores.Questions, f3(gs.Scores.Hit5), f3(gs.Scores.MRR))
				}
			}
		}
	}
	return nil
}

// shortName is a dataset file's base name without extension.
func shortName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[i+1:]
	}
	return strings.TrimSuffix(path, ".jsonl")
}
