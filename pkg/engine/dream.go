package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Dream processing turns pending raw journal entries into curated memories
// without an LLM.
//
// Entries are grouped by session. Entries with a topic id form one group
// per (session, topic), split where more than dreamTopicGap passes between
// two entries. Entries without a topic are segmented in time order: a new
// segment starts after a gap of more than dreamHardGap, or after more than
// dreamSoftGap when the entry shares almost no words with the segment so
// far (a change of subject). Groups are processed oldest first, at most
// max_groups per tick.
//
// For each group an episodic summary is written: a heading naming the
// session and topic, then the group's most salient sentences (sentences
// whose words recur across the group score high; long sentences are not
// favoured) in their original order. Only entries with visibility normal
// and a secrecy level other than secret contribute text; private,
// sealed and secret entries that a tick was asked to include are marked
// processed and counted, but their text never reaches a summary. A group
// with at least two contributing entries and a topic is also promoted to a
// semantic memory linked both ways with the summary. Provenance goes both
// ways: the summary's meta-memory cites every raw entry, and every raw
// entry lists the records derived from it (derived_memory_ids and
// metadata._derived) and is marked processed (metadata._dream), so a
// second tick over the same entries does nothing. Each group is one atomic
// commit.
const (
	dreamHardGap      = 45 * time.Minute
	dreamSoftGap      = 10 * time.Minute
	dreamTopicGap     = 6 * time.Hour
	dreamMinOverlap   = 0.08
	dreamMaxSentences = 5
	dreamMaxSentence  = 280  // bytes per chosen sentence
	dreamMaxSummary   = 1200 // bytes of the summary body
	dreamSummaryField = 160  // bytes of content.summary
)

const lastDreamKey = "last_dream_tick"

// DreamTick implements memory.Service.
func (e *Engine) DreamTick(ctx context.Context, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, l := range req.SecrecyLevels {
		if !l.Valid() {
			return nil, memory.Invalid(fmt.Sprintf("secrecy_levels[%d]", i), "want one of public, sensitive, secret")
		}
	}
	e.dreamMu.Lock()
	defer e.dreamMu.Unlock()
	e.big.RLock()
	defer e.big.RUnlock()

	var session *string
	if req.SessionID != nil {
		if s := strings.TrimSpace(*req.SessionID); s != "" {
			session = &s
		}
	}
	groups, err := e.dreamGroups(ctx, session, newRawFilter(req.IncludePrivateScratch, req.IncludeSealed, req.SecrecyLevels), int(req.MaxGroups))
	if err != nil {
		return nil, err
	}
	resp := &memory.DreamTickResponse{}
	now := e.now()
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return resp, err
		}
		plan := planDream(g, req.PromoteSemantic)
		resp.GroupsProcessed++
		resp.RawRecordsProcessed += uint32(len(g.entries))
		resp.EpisodicSummariesCreated++
		if plan.promote {
			resp.SemanticNodesCreated++
		}
		if req.DryRun {
			continue
		}
		if err := e.writeDream(g, plan, now); err != nil {
			return resp, err
		}
	}
	return resp, nil
}

// dreamGroups returns the first max groups a tick processes. It finds the
// pending entries in the raw index (ids and flags only), then reads them
// oldest first and stops as soon as the first max groups are settled (see
// dreamGrouper.settled), so a tick over a large backlog reads little more
// than the entries it processes.
func (e *Engine) dreamGroups(ctx context.Context, session *string, filter rawFilter, max int) ([]*dreamGroup, error) {
	if max <= 0 {
		return nil, nil
	}
	var ids []memory.ID
	err := e.db.ScanRawNewest(store.RawRange{Session: session}, func(id memory.ID, fl store.RawFlags) (bool, error) {
		if !fl.DreamProcessed() && filter.allows(fl) {
			ids = append(ids, id)
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dream: %w", err)
	}
	slices.Reverse(ids)
	i := 0
	return firstDreamGroups(max, func() (*memory.RawJournalRecord, error) {
		if i == len(ids) {
			return nil, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec, err := e.db.GetRaw(ids[i])
		if err != nil {
			return nil, fmt.Errorf("dream: %w", err)
		}
		i++
		return rec, nil
	})
}

// firstDreamGroups groups the entries next yields (oldest first, nil at the
// end) and returns the first max groups, as groupForDream would over all of
// them, without asking for more entries once those groups are settled.
func firstDreamGroups(max int, next func() (*memory.RawJournalRecord, error)) ([]*dreamGroup, error) {
	if max <= 0 {
		return nil, nil
	}
	gr := newDreamGrouper()
	for {
		rec, err := next()
		if err != nil {
			return nil, err
		}
		if rec == nil || gr.settled(max, rec.CreatedAt) {
			break
		}
		gr.add(rec)
	}
	return gr.finish(max), nil
}

type dreamGroup struct {
	session  string
	topic    *string // explicit topic id
	hint     string  // topic id, or inferred from the words
	inferred bool
	entries  []*memory.RawJournalRecord

	// Words of entries[:tokenized] of an inferred group (see words).
	tokens    map[string]bool
	tokenized int
}

// groupForDream splits entries (oldest first) into groups, oldest first.
func groupForDream(entries []*memory.RawJournalRecord) []*dreamGroup {
	gr := newDreamGrouper()
	for _, rec := range entries {
		gr.add(rec)
	}
	return gr.finish(len(gr.groups))
}

// dreamGrouper groups entries fed to it oldest first.
type dreamGrouper struct {
	topics    map[dreamTopic]*dreamGroup // open topic group per (session, topic)
	inferred  map[string]*dreamGroup     // open inferred group per session
	groups    []*dreamGroup              // in order of creation
	latest    time.Time                  // newest entry added
	unordered bool                       // an entry came older than latest
}

type dreamTopic struct{ session, topic string }

func newDreamGrouper() *dreamGrouper {
	return &dreamGrouper{
		topics:   map[dreamTopic]*dreamGroup{},
		inferred: map[string]*dreamGroup{},
	}
}

// add puts rec into the open group it continues, or starts a new one.
func (gr *dreamGrouper) add(rec *memory.RawJournalRecord) {
	if rec.CreatedAt.Before(gr.latest) {
		gr.unordered = true
	} else {
		gr.latest = rec.CreatedAt
	}
	if rec.TopicID != nil && strings.TrimSpace(*rec.TopicID) != "" {
		topic := strings.TrimSpace(*rec.TopicID)
		k := dreamTopic{rec.SessionID, topic}
		g := gr.topics[k]
		if g == nil || rec.CreatedAt.Sub(last(g).CreatedAt) > dreamTopicGap {
			g = &dreamGroup{session: rec.SessionID, topic: &topic, hint: topic}
			gr.topics[k] = g
			gr.groups = append(gr.groups, g)
		}
		g.entries = append(g.entries, rec)
		return
	}
	g := gr.inferred[rec.SessionID]
	if g != nil {
		gap := rec.CreatedAt.Sub(last(g).CreatedAt)
		if gap > dreamHardGap || gap > dreamSoftGap && overlap(g.words(), dreamTokens(rec)) < dreamMinOverlap {
			g = nil
		}
	}
	if g == nil {
		g = &dreamGroup{session: rec.SessionID, inferred: true}
		gr.inferred[rec.SessionID] = g
		gr.groups = append(gr.groups, g)
	}
	g.entries = append(g.entries, rec)
}

// words returns the words of g's entries. Words are only needed after a
// pause longer than dreamSoftGap, and tokenizing (stemming) is most of the
// cost of grouping, so they are gathered then, once per entry.
func (g *dreamGroup) words() map[string]bool {
	if g.tokens == nil {
		g.tokens = map[string]bool{}
	}
	for _, rec := range g.entries[g.tokenized:] {
		for t := range dreamTokens(rec) {
			g.tokens[t] = true
		}
	}
	g.tokenized = len(g.entries)
	return g.tokens
}

// settled reports whether the first max groups of finish are final once
// every entry still to come is at least as new as next: at least max
// groups exist, every group that started no later than the max-th one can
// no longer grow (next is past its gap), and any group started from now on
// begins after the max-th one and so sorts after it. It is never true
// after entries arrived out of time order.
func (gr *dreamGrouper) settled(max int, next time.Time) bool {
	if gr.unordered || len(gr.groups) < max || next.Before(gr.latest) {
		return false
	}
	cut := gr.groups[max-1].entries[0].CreatedAt
	if !next.After(cut) {
		return false
	}
	for _, g := range gr.groups {
		if g.entries[0].CreatedAt.After(cut) {
			break
		}
		if gr.open(g) && !next.After(last(g).CreatedAt.Add(dreamGapLimit(g))) {
			return false
		}
	}
	return true
}

// open reports whether entries may still join g.
func (gr *dreamGrouper) open(g *dreamGroup) bool {
	if g.topic != nil {
		return gr.topics[dreamTopic{g.session, *g.topic}] == g
	}
	return gr.inferred[g.session] == g
}

// dreamGapLimit is the longest pause after which an entry may still join g.
func dreamGapLimit(g *dreamGroup) time.Duration {
	if g.topic != nil {
		return dreamTopicGap
	}
	return dreamHardGap
}

// finish returns the first max groups, oldest first (ties by session, then
// name), with the inferred ones named. Naming means tokenizing a group's
// entries, so only the groups returned and those that tie with another
// group on time and session are named.
func (gr *dreamGrouper) finish(max int) []*dreamGroup {
	groups := gr.groups
	slices.SortStableFunc(groups, func(a, b *dreamGroup) int {
		if c := a.entries[0].CreatedAt.Compare(b.entries[0].CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.session, b.session)
	})
	name := func(g *dreamGroup) {
		if g.inferred && g.hint == "" {
			g.hint = inferHint(g)
		}
	}
	for i := 0; i < len(groups); {
		j := i + 1
		for j < len(groups) && groups[j].session == groups[i].session && groups[j].entries[0].CreatedAt.Equal(groups[i].entries[0].CreatedAt) {
			j++
		}
		if j-i > 1 {
			run := groups[i:j]
			for _, g := range run {
				name(g)
			}
			slices.SortStableFunc(run, func(a, b *dreamGroup) int { return strings.Compare(a.hint, b.hint) })
		}
		i = j
	}
	groups = groups[:min(max, len(groups))]
	for _, g := range groups {
		name(g)
	}
	return groups
}

func last(g *dreamGroup) *memory.RawJournalRecord { return g.entries[len(g.entries)-1] }

// contributes reports whether an entry's text may reach a summary.
func contributes(rec *memory.RawJournalRecord) bool {
	return rec.Visibility == memory.VisibilityNormal && rec.SecrecyLevel != memory.SecrecySecret
}

func dreamTokens(rec *memory.RawJournalRecord) map[string]bool {
	set := map[string]bool{}
	for _, t := range rawTexts(rec) {
		for _, tok := range textindex.Tokenize(t) {
			set[tok] = true
		}
	}
	return set
}

// overlap is the share of b's words already in a (1 when either is empty:
// no evidence of a change of subject).
func overlap(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 1
	}
	n := 0
	for t := range b {
		if a[t] {
			n++
		}
	}
	return float64(n) / float64(len(b))
}

// inferHint names an inferred group by its three most frequent words among
// the entries that may be summarised.
func inferHint(g *dreamGroup) string {
	counts := map[string]int{}
	for _, rec := range g.entries {
		if !contributes(rec) {
			continue
		}
		for _, t := range rawTexts(rec) {
			for _, tok := range textindex.Tokenize(t) {
				if utf8.RuneCountInString(tok) >= 3 || !isASCII(tok) {
					counts[tok]++
				}
			}
		}
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	if len(words) > 3 {
		words = words[:3]
	}
	return strings.Join(words, "+")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// dreamPlan is what a group turns into.
type dreamPlan struct {
	text    string // summary text (heading and body)
	stats   map[string]int
	promote bool
}

func planDream(g *dreamGroup, promoteSemantic bool) dreamPlan {
	stats := map[string]int{"normal_records": 0, "private_scratch_redacted": 0, "sealed_redacted": 0, "secret_redacted": 0}
	var texts []string
	for _, rec := range g.entries {
		switch {
		case rec.SecrecyLevel == memory.SecrecySecret:
			stats["secret_redacted"]++
		case rec.Visibility == memory.VisibilitySealed:
			stats["sealed_redacted"]++
		case rec.Visibility == memory.VisibilityPrivateScratch:
			stats["private_scratch_redacted"]++
		default:
			stats["normal_records"]++
			texts = append(texts, rawTexts(rec)...)
		}
	}
	redacted := len(g.entries) - stats["normal_records"]
	stats["redacted_total"] = redacted
	heading := "Dream summary for session " + g.session
	if g.hint != "" {
		heading += " / topic " + g.hint
	}
	var text string
	if body := extractiveSummary(texts); body != "" {
		text = heading + ": " + body
		if redacted > 0 {
			text += fmt.Sprintf(" [%d raw record(s) redacted from this summary]", redacted)
		}
	} else {
		text = fmt.Sprintf("%s: %d raw record(s) preserved, %d redacted from this summary.", heading, len(g.entries), redacted)
	}
	return dreamPlan{
		text:    text,
		stats:   stats,
		promote: promoteSemantic && stats["normal_records"] >= 2 && g.hint != "",
	}
}

// extractiveSummary picks the most salient sentences of texts and returns
// them in their original order, joined with spaces.
func extractiveSummary(texts []string) string {
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
		if len(chosen) == dreamMaxSentences {
			break
		}
		t := truncate(s.text, dreamMaxSentence)
		if size > 0 && size+len(t)+1 > dreamMaxSummary {
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

// writeDream stores a group's summary (and semantic node) and marks its
// entries processed, in one commit.
func (e *Engine) writeDream(g *dreamGroup, plan dreamPlan, now time.Time) error {
	rawIDs := make([]memory.ID, len(g.entries))
	for i, rec := range g.entries {
		rawIDs[i] = rec.ID
	}
	summaryText := truncate(plan.text, dreamSummaryField)
	origin := map[string]any{
		"raw_session_id":     g.session,
		"raw_topic_id":       g.topic,
		"raw_topic_hint":     g.hint,
		"raw_topic_inferred": g.inferred,
		"raw_record_ids":     rawIDs,
		"raw_record_count":   len(rawIDs),
		"dream_tick_at":      now,
		"range_start":        g.entries[0].CreatedAt,
		"range_end":          last(g).CreatedAt,
	}
	summary := &memory.MemoryRecord{
		ID: e.ids.New(), Store: memory.StoreEpisodic, CreatedAt: now, UpdatedAt: now, LastAccessedAt: now,
		Content:  memory.MemoryContent{Blocks: []memory.ContentBlock{memory.TextBlock(plan.text)}, Summary: &summaryText},
		Fidelity: e.newFidelity(memory.StoreEpisodic, memory.EmotionVector{}, now),
		Version:  1,
		Meta: withDreamMeta(memory.InferredMeta(memory.TriggerDreamTick,
			"Summarised from raw journal entries by dream processing.", rawIDs, now),
			"summarize the raw journal of this session and topic", []string{"summarize_raw_journal", "preserve_traceability"},
			[]string{"dream_tick", "episodic_summary"}),
	}
	var node *memory.MemoryRecord
	if plan.promote {
		node = &memory.MemoryRecord{
			ID: e.ids.New(), Store: memory.StoreSemantic, CreatedAt: now, UpdatedAt: now, LastAccessedAt: now,
			Content:  memory.MemoryContent{Blocks: []memory.ContentBlock{memory.TextBlock(plan.text)}, Summary: &summaryText},
			Fidelity: e.newFidelity(memory.StoreSemantic, memory.EmotionVector{}, now),
			Version:  1,
			Meta: withDreamMeta(memory.InferredMeta(memory.TriggerDreamTick,
				"Promoted to semantic memory because the topic recurred across the session.", rawIDs, now),
				"keep the recurring topic as a fact", []string{"promote_topic_signal", "preserve_traceability"},
				[]string{"dream_tick", "semantic_summary"}),
		}
		decision := "Promoted the summary of topic " + g.hint + " to semantic memory."
		node.Meta.Decision = &decision
		addEdge(summary, node.ID, memory.AssocSemantic, 1, now)
		addEdge(node, summary.ID, memory.AssocSemantic, 1, now)
		nodeOrigin := maps.Clone(origin)
		delete(nodeOrigin, "range_start")
		delete(nodeOrigin, "range_end")
		nodeOrigin["raw_summary_record_id"] = summary.ID
		node.Metadata = mustJSON(map[string]any{
			"_origin": nodeOrigin,
			"_dream":  map[string]any{"kind": "semantic_summary", "source": "raw_journal", "summary_stats": plan.stats},
		})
		// The node's meta cites the summary first, then the raw entries.
		src := summary.ID
		one := 1.0
		label := "source_episodic_summary"
		node.Meta.ContextEdges = append([]memory.MetaEdge{{SourceID: &node.ID, TargetID: summary.ID, Relation: memory.RelDerivedFrom, Confidence: &one,
			Evidence: []memory.MetaEvidenceRef{{RecordID: &src, Label: &label, Confidence: &one}}}}, node.Meta.ContextEdges...)
	}
	derived := map[string]any{"semantic_ids": []memory.ID{}}
	if node != nil {
		derived["semantic_ids"] = []memory.ID{node.ID}
	}
	summary.Metadata = mustJSON(map[string]any{
		"_origin":  origin,
		"_dream":   map[string]any{"kind": "episodic_summary", "source": "raw_journal", "summary_stats": plan.stats},
		"_derived": derived,
	})
	for i := range summary.Meta.ContextEdges {
		summary.Meta.ContextEdges[i].SourceID = &summary.ID
	}
	if node != nil {
		for i := 1; i < len(node.Meta.ContextEdges); i++ {
			node.Meta.ContextEdges[i].SourceID = &node.ID
		}
	}

	t := e.begin()
	defer t.close()
	if err := t.putNewRecord(summary); err != nil {
		return err
	}
	made := []memory.ID{summary.ID}
	if node != nil {
		if err := t.putNewRecord(node); err != nil {
			return err
		}
		made = append(made, node.ID)
	}
	for _, old := range g.entries {
		rec := *old
		rec.UpdatedAt = now
		for _, id := range made {
			if !slices.Contains(rec.DerivedMemoryIDs, id) {
				rec.DerivedMemoryIDs = append(rec.DerivedMemoryIDs, id)
			}
		}
		md, err := markDreamt(rec.Metadata, summary.ID, made, node != nil, now)
		if err != nil {
			return fmt.Errorf("mark raw record %s: %w", rec.ID, err)
		}
		rec.Metadata = md
		if err := t.putRaw(&rec, old); err != nil {
			return err
		}
	}
	t.b.PutMeta(lastDreamKey, uint64Bytes(uint64(now.UnixNano())))
	t.audit(audit.OpDreamTick, made, []memory.StoreType{memory.StoreEpisodic, memory.StoreSemantic}, map[string]any{
		"raw_records": len(g.entries), "raw_record_ids": rawIDs, "promoted": node != nil,
		"normal_records": plan.stats["normal_records"], "redacted_total": plan.stats["redacted_total"],
	})
	if err := t.commit(); err != nil {
		return fmt.Errorf("dream: %w", err)
	}
	e.mu.Lock()
	e.lastDream = now
	e.mu.Unlock()
	recs := []*memory.MemoryRecord{summary}
	if node != nil {
		recs = append(recs, node)
	}
	e.queueLinks(recs)
	return nil
}

// withDreamMeta completes an inferred meta-memory: intent, goals, tags, and
// one derived_from context edge per cited raw record.
func withDreamMeta(m memory.MetaMemory, intent string, goals, tags []string) memory.MetaMemory {
	m.Intent = &intent
	m.Goals = goals
	m.Tags = tags
	one := 1.0
	label := "source_raw_record"
	for _, id := range m.SourceRecordIDs {
		raw := id
		m.ContextEdges = append(m.ContextEdges, memory.MetaEdge{TargetID: raw, Relation: memory.RelDerivedFrom, Confidence: &one,
			Evidence: []memory.MetaEvidenceRef{{RawRecordID: &raw, Label: &label, Confidence: &one}}})
	}
	return m
}

// markDreamt records on a raw entry's metadata that it was summarised:
// _dream.processed_at and last_summary_id, and the derived ids under
// _derived. Non-object metadata is kept under "_metadata" rather than lost,
// and a non-object _dream or _derived value under "_dream_replaced" /
// "_derived_replaced".
func markDreamt(md memory.JSON, summaryID memory.ID, made []memory.ID, promoted bool, now time.Time) (memory.JSON, error) {
	obj := map[string]json.RawMessage{}
	switch {
	case len(md) == 0:
	case md.IsObject():
		if err := json.Unmarshal(md, &obj); err != nil {
			return nil, err
		}
	default:
		obj["_metadata"] = json.RawMessage(md)
	}
	dream := map[string]json.RawMessage{}
	if raw, ok := obj["_dream"]; ok {
		if err := json.Unmarshal(raw, &dream); err != nil {
			dream = map[string]json.RawMessage{}
			obj["_dream_replaced"] = raw
		}
	}
	dream["processed_at"] = mustJSON(now.UTC().Format(time.RFC3339Nano))
	dream["last_summary_id"] = mustJSON(summaryID)
	obj["_dream"] = mustJSON(dream)

	var derived struct {
		Episodic []memory.ID `json:"episodic_summary_ids"`
		Semantic []memory.ID `json:"semantic_ids"`
	}
	if raw, ok := obj["_derived"]; ok {
		if err := json.Unmarshal(raw, &derived); err != nil {
			obj["_derived_replaced"] = raw
			derived.Episodic, derived.Semantic = nil, nil
		}
	}
	if !slices.Contains(derived.Episodic, summaryID) {
		derived.Episodic = append(derived.Episodic, summaryID)
	}
	if promoted && !slices.Contains(derived.Semantic, made[1]) {
		derived.Semantic = append(derived.Semantic, made[1])
	}
	if derived.Semantic == nil {
		derived.Semantic = []memory.ID{}
	}
	obj["_derived"] = mustJSON(derived)
	return mustJSON(obj), nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(errors.New("engine: marshal metadata: " + err.Error()))
	}
	return b
}
