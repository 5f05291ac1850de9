package textindex

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Corpus returns n documents of CorpusGen(seed), for benchmarks.
func Corpus(seed uint64, n int) []string {
	g := NewCorpusGen(seed)
	docs := make([]string, n)
	for i := range docs {
		docs[i] = g.Document()
	}
	return docs
}

// CorpusGen generates deterministic English-like text for benchmarks of
// the index and of the engine.
//
// The vocabulary has CorpusVocabulary words in rank order: 24 frequent
// English function words (most of them stop words), then about 200 common
// words of the domain (memory, deploy, session, rotation, ...) with
// inflections that exercise the stemmer, then made-up words assembled from
// syllables, some with English suffixes. Words are drawn with a Zipf-
// Mandelbrot law P(rank k) ∝ (2 + k)^-1.1, which gives the long tail of
// natural text: about a third of the running words are function words and
// most of the vocabulary is rare.
//
// A document has 30 to 50 words (40 on average) in sentences of 6 to 14
// words: the first word capitalised, an occasional comma, a full stop at
// the end, and now and then a number or a version string. The same seed
// always yields the same documents and queries. A CorpusGen is not safe for
// concurrent use.
type CorpusGen struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
	sb    strings.Builder
}

// CorpusVocabulary is the number of distinct words CorpusGen draws from.
const CorpusVocabulary = 30000

// corpusFunctionWords are the highest ranks of the corpus vocabulary.
var corpusFunctionWords = [...]string{
	"the", "of", "and", "to", "a", "in", "is", "that", "for", "it",
	"was", "on", "with", "as", "be", "at", "by", "this", "from", "or",
	"not", "but", "we", "after",
}

// corpusDomainWords follow the function words in rank order.
var corpusDomainWords = [...]string{
	"memory", "user", "agent", "session", "server", "data", "key", "error",
	"request", "deploy", "database", "config", "test", "record", "file",
	"time", "search", "index", "query", "update", "build", "release", "cache",
	"token", "service", "rotation", "keys", "running", "deployment",
	"deployments", "rotated", "rotating", "logs", "log", "version", "backup",
	"network", "timeout", "latency", "storage", "engine", "process",
	"workflow", "project", "team", "meeting", "review", "change", "changes",
	"changed", "fix", "fixed", "fixing", "bug", "issue", "issues", "feature",
	"features", "design", "plan", "planning", "decision", "decided", "reason",
	"goal", "goals", "task", "tasks", "schedule", "scheduled", "migration",
	"migrate", "migrated", "encrypt", "encryption", "encrypted", "secret",
	"password", "certificate", "expired", "renewal", "client", "clients",
	"api", "endpoint", "endpoints", "handler", "router", "metrics", "alert",
	"alerts", "dashboard", "monitor", "monitoring", "incident", "outage",
	"restart", "restarted", "crash", "crashed", "recovery", "recovered",
	"snapshot", "archive", "export", "import", "imported", "preference",
	"preferences", "prefers", "likes", "coffee", "morning", "evening",
	"weekend", "travel", "flight", "hotel", "tokyo", "berlin", "paris",
	"notes", "summary", "summaries", "context", "conversation",
	"message", "messages", "reply", "question", "answer", "answers",
	"learned", "learning", "remember", "remembered", "forget", "forgotten",
	"important", "urgent", "quickly", "slowly", "carefully", "always",
	"never", "often", "today", "yesterday", "tomorrow", "week", "month",
	"year", "new", "old", "large", "small", "fast", "slow", "first", "last",
	"next", "previous", "good", "bad", "better", "worse", "best", "worst",
	"works", "worked", "working", "failed", "failing", "failure", "success",
	"successful", "succeeded", "pipeline", "pipelines", "container",
	"containers", "cluster", "clusters", "node", "nodes", "kernel", "disk",
	"disks", "compaction", "compacted", "shard", "shards", "replica",
	"replicas", "leader", "election", "consensus", "payload", "payloads",
}

var corpusSyllables = [...]string{
	"ba", "be", "bi", "bo", "ca", "ce", "co", "da", "de", "di", "do", "fa",
	"fe", "ga", "ge", "go", "ha", "ke", "ki", "la", "le", "li", "lo", "ma",
	"me", "mi", "mo", "na", "ne", "ni", "no", "pa", "pe", "po", "ra", "re",
	"ri", "ro", "sa", "se", "si", "so", "ta", "te", "ti", "to", "va", "ve",
	"vi", "za", "tor", "ran", "lin", "mar", "ver", "sen", "dal", "kor",
}

var corpusSuffixes = [...]string{"", "", "", "", "s", "ing", "ed", "tion", "er", "ly", "ment", "ness"}

// NewCorpusGen returns a generator seeded with seed.
func NewCorpusGen(seed uint64) *CorpusGen {
	r := rand.New(rand.NewPCG(seed, 0x6d656d737663))
	g := &CorpusGen{
		r:     r,
		zipf:  rand.NewZipf(r, 1.1, 2, CorpusVocabulary-1),
		vocab: make([]string, 0, CorpusVocabulary),
	}
	g.vocab = append(g.vocab, corpusFunctionWords[:]...)
	g.vocab = append(g.vocab, corpusDomainWords[:]...)
	// Made-up words: a fixed permutation of syllable combinations, so
	// neighbouring ranks do not share prefixes.
	ns := uint64(len(corpusSyllables))
	for i := uint64(0); len(g.vocab) < CorpusVocabulary; i++ {
		x := i*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
		x ^= x >> 29
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 32
		var w strings.Builder
		for range 2 + x%3 {
			w.WriteString(corpusSyllables[x%ns])
			x /= ns
		}
		w.WriteString(corpusSuffixes[x%uint64(len(corpusSuffixes))])
		g.vocab = append(g.vocab, w.String())
	}
	return g
}

// word draws one word.
func (g *CorpusGen) word() string { return g.vocab[g.zipf.Uint64()] }

// Document returns the next document.
func (g *CorpusGen) Document() string {
	sb := &g.sb
	sb.Reset()
	n := 30 + g.r.IntN(21)
	left := 0 // words left in the sentence
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		var w string
		switch p := g.r.IntN(100); {
		case p < 2:
			w = strconv.Itoa(g.r.IntN(10000))
		case p < 3:
			w = "v" + strconv.Itoa(g.r.IntN(5)) + "." + strconv.Itoa(g.r.IntN(20))
		default:
			w = g.word()
		}
		if left == 0 {
			left = 6 + g.r.IntN(9)
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		sb.WriteString(w)
		left--
		switch {
		case left == 0 || i == n-1:
			sb.WriteByte('.')
			left = 0
		case g.r.IntN(12) == 0:
			sb.WriteByte(',')
		}
	}
	return sb.String()
}

// Query returns a query of words with terms distinct terms (no stop words),
// drawn with the same distribution as the documents' words.
func (g *CorpusGen) Query(terms int) string {
	words := make([]string, 0, terms)
	seen := make(map[string]bool, terms)
	for len(words) < terms {
		w := g.word()
		t := Tokenize(w)
		if len(t) != 1 || seen[t[0]] {
			continue
		}
		seen[t[0]] = true
		words = append(words, w)
	}
	return strings.Join(words, " ")
}
