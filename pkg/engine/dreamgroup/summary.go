package dreamgroup

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// Summary sizes.
const (
	MaxSentences = 5    // sentences per summary
	MaxSentence  = 280  // bytes per chosen sentence
	MaxBody      = 1200 // bytes of the summary body
	MaxShort     = 160  // bytes of the short form (content.summary)
)

// Plan is what a group turns into.
type Plan struct {
	// Text is the summary: a heading naming session and topic, then the
	// body (or, when no entry may contribute text, a count of the entries
	// preserved).
	Text string
	// Short is Text cut to MaxShort bytes.
	Short string
	// Stats counts the entries: normal_records, private_scratch_redacted,
	// sealed_redacted, secret_redacted and redacted_total.
	Stats map[string]int
	// Promote is set when the group is also to become a semantic memory.
	Promote bool
}

// PlanGroup summarises g; promoteSemantic asks for promotion of groups
// that qualify (a name and at least two contributing entries).
func PlanGroup(g *Group, promoteSemantic bool) Plan {
	stats := map[string]int{"normal_records": 0, "private_scratch_redacted": 0, "sealed_redacted": 0, "secret_redacted": 0}
	var texts []string
	for _, rec := range g.Entries {
		switch {
		case rec.SecrecyLevel == memory.SecrecySecret:
			stats["secret_redacted"]++
		case rec.Visibility == memory.VisibilitySealed:
			stats["sealed_redacted"]++
		case rec.Visibility == memory.VisibilityPrivateScratch:
			stats["private_scratch_redacted"]++
		default:
			stats["normal_records"]++
			texts = append(texts, Texts(rec)...)
		}
	}
	redacted := len(g.Entries) - stats["normal_records"]
	stats["redacted_total"] = redacted
	heading := "Dream summary for session " + g.Session
	if g.Hint != "" {
		heading += " / topic " + g.Hint
	}
	var text string
	if body := Summarize(texts); body != "" {
		text = heading + ": " + body
		if redacted > 0 {
			text += fmt.Sprintf(" [%d raw record(s) redacted from this summary]", redacted)
		}
	} else {
		text = fmt.Sprintf("%s: %d raw record(s) preserved, %d redacted from this summary.", heading, len(g.Entries), redacted)
	}
	return Plan{
		Text:    text,
		Short:   Truncate(text, MaxShort),
		Stats:   stats,
		Promote: promoteSemantic && stats["normal_records"] >= 2 && g.Hint != "",
	}
}

// Summarize picks the most salient sentences of texts and returns them in
// their original order, joined with spaces.
func Summarize(texts []string) string {
	type sentence struct {
		text  string
		pos   int
		score float64
	}
	var sents []sentence
	freq := map[string]int{}
	for _, t := range texts {
		for _, s := range splitSentences(t) {
			toks := textindex.Tokenize(s)
			if len(toks) == 0 {
				continue
			}
			sents = append(sents, sentence{text: s, pos: len(sents)})
			seen := map[string]bool{}
			for _, tok := range toks {
				if !seen[tok] {
					freq[tok]++
					seen[tok] = true
				}
			}
		}
	}
	if len(sents) == 0 {
		return ""
	}
	for i := range sents {
		toks := textindex.Tokenize(sents[i].text)
		seen := map[string]bool{}
		var sum float64
		for _, tok := range toks {
			if !seen[tok] {
				sum += float64(freq[tok])
				seen[tok] = true
			}
		}
		// Recurring words make a sentence salient; dividing by the square
		// root of its length keeps long sentences from winning by size.
		sents[i].score = sum / math.Sqrt(float64(len(toks)))
	}
	ranked := slices.Clone(sents)
	slices.SortStableFunc(ranked, func(a, b sentence) int { return cmp.Compare(b.score, a.score) })
	var chosen []sentence
	size := 0
	for _, s := range ranked {
		if len(chosen) == MaxSentences {
			break
		}
		t := Truncate(s.text, MaxSentence)
		if size > 0 && size+len(t)+1 > MaxBody {
			continue
		}
		s.text = t
		chosen = append(chosen, s)
		size += len(t) + 1
	}
	slices.SortFunc(chosen, func(a, b sentence) int { return cmp.Compare(a.pos, b.pos) })
	parts := make([]string, len(chosen))
	for i, s := range chosen {
		parts[i] = s.text
	}
	return strings.Join(parts, " ")
}

// splitSentences cuts text at sentence ends (. ! ? and their CJK forms
// followed by space or end) and line breaks.
func splitSentences(text string) []string {
	var out []string
	start := 0
	runes := []rune(text)
	flush := func(end int) {
		s := strings.TrimSpace(string(runes[start:end]))
		if s != "" {
			out = append(out, strings.Join(strings.Fields(s), " "))
		}
		start = end
	}
	for i, r := range runes {
		switch {
		case r == '\n':
			flush(i + 1)
		case r == '。' || r == '！' || r == '？':
			flush(i + 1)
		case (r == '.' || r == '!' || r == '?') && (i+1 == len(runes) || unicode.IsSpace(runes[i+1])):
			flush(i + 1)
		}
	}
	flush(len(runes))
	return out
}

// Truncate cuts s to at most n bytes on a rune boundary, adding "..." when
// it cut: the short form of every summary memsvc writes.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}
