package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// corpus is a small fixed set of memories for ranking tests. Keys name the
// records in assertions.
var corpus = []struct {
	key   string
	text  string
	store memory.StoreType
	meta  *memory.MetaMemory
}{
	{"rotation", "We rotate the deploy keys every Friday afternoon.", memory.StoreProcedural, nil},
	{"rotated", "The staging key was rotated after the contractor left.", memory.StoreEpisodic, nil},
	{"pebble", "The team chose pebble as the storage engine.", memory.StoreSemantic, &memory.MetaMemory{
		SchemaVersion: 1, CaptureStatus: memory.CaptureProvided,
		Intent:    ptr("pick an embedded key-value store"),
		Rationale: ptr("pure Go, crash safe, proven at scale; sqlite needed cgo"),
		Tags:      []string{"adr", "storage"},
	}},
	{"deploys", "Deployments to production need two approvals.", memory.StoreProcedural, nil},
	{"coffee", "The coffee machine on the third floor is broken again.", memory.StoreEpisodic, nil},
	{"tokyo", "東京都庁で会議があった。", memory.StoreEpisodic, nil},
	{"beijing", "我们在北京大学讨论了数据库设计。", memory.StoreEpisodic, nil},
	{"latency", "Recall latency stays under ten milliseconds at one hundred thousand records.", memory.StoreSemantic, nil},
	{"keys-api", "API keys are stored in the vault, never in the repository.", memory.StoreSemantic, nil},
}

type corpusHarness struct {
	*harness
	ids  map[string]memory.ID
	keys map[memory.ID]string
}

func newCorpus(t *testing.T) *corpusHarness {
	t.Helper()
	h := &corpusHarness{harness: newHarness(t, Options{PersistIndexes: true}), ids: map[string]memory.ID{}, keys: map[memory.ID]string{}}
	for _, c := range corpus {
		h.clock.Advance(time.Minute)
		st := c.store
		resp, err := h.e.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: memory.TextContent(c.text), Store: &st, Meta: c.meta})
		if err != nil {
			t.Fatal(err)
		}
		h.ids[c.key] = resp.RecordID
		h.keys[resp.RecordID] = c.key
	}
	return h
}

// recall runs a perfect-mode query without reconsolidation and returns the
// keys of the hits in order.
func (h *corpusHarness) recall(req memory.RecallQueryRequest) []string {
	h.t.Helper()
	resp, err := h.e.RecallQuery(context.Background(), &req)
	if err != nil {
		h.t.Fatal(err)
	}
	out := make([]string, len(resp.Memories))
	for i, m := range resp.Memories {
		out[i] = h.keys[m.Record.ID]
		if i > 0 && m.RelevanceScore > resp.Memories[i-1].RelevanceScore {
			h.t.Errorf("results not ordered by relevance: %v", resp.Memories)
		}
	}
	return out
}

func textQuery(text string) memory.RecallQueryRequest {
	req := memory.DefaultRecallQueryRequest()
	req.Cue.Text = &text
	req.Reconsolidate = false
	req.RecallMode = ptr(memory.ModePerfect)
	return req
}

func TestRecallRanking(t *testing.T) {
	h := newCorpus(t)
	tests := []struct {
		query string
		want  []string
	}{
		// Stemming: "rotating keys" finds rotate/rotated/keys; the records
		// with both stems rank first, the one with them closer together
		// ahead (proximity: "key was rotated" two words apart, "rotate
		// the deploy keys" three); pebble's meta-memory mentions a
		// "key-value" store.
		{"rotating keys", []string{"rotated", "rotation", "keys-api", "pebble"}},
		{"deploy", []string{"deploys", "rotation"}},
		// "Why" questions find the rationale in meta-memory.
		{"why did we choose pebble over sqlite", []string{"pebble"}},
		{"crash safe storage", []string{"pebble"}},
		// CJK: bigrams inside long runs.
		{"都庁", []string{"tokyo"}},
		{"北京", []string{"beijing"}},
		{"数据库", []string{"beijing"}},
		{"milliseconds", []string{"latency"}},
		{"nothing matches zebra", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := h.recall(textQuery(tt.query))
			if len(got) == 0 {
				got = nil
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("recall(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
}

func TestRecallFilters(t *testing.T) {
	h := newCorpus(t)
	ctx := context.Background()

	req := textQuery("keys")
	req.Stores = []memory.StoreType{memory.StoreEpisodic}
	if got := h.recall(req); !slices.Equal(got, []string{"rotated"}) {
		t.Errorf("store filter: %v", got)
	}

	// Time range: only the first three records (created a minute apart).
	first := h.record(h.ids["rotation"]).CreatedAt
	req = textQuery("keys")
	req.Cue.Temporal = &memory.TemporalRange{Start: first, End: first.Add(2 * time.Minute)}
	if got := h.recall(req); !slices.Equal(got, []string{"rotation", "rotated", "pebble"}) {
		t.Errorf("time filter: %v", got)
	}

	// Limit and total_candidates.
	req = textQuery("keys")
	req.Limit = 1
	resp, err := h.e.RecallQuery(ctx, &req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Memories) != 1 || resp.TotalCandidates != 4 || resp.QueryMetadata == nil || len(resp.QueryMetadata.StoresSearched) != 5 {
		t.Errorf("limit 1: %d memories, total %d, meta %+v", len(resp.Memories), resp.TotalCandidates, resp.QueryMetadata)
	}
	req.Limit = 0
	resp, err = h.e.RecallQuery(ctx, &req)
	if err != nil || len(resp.Memories) != 0 || resp.Memories == nil || resp.TotalCandidates != 4 {
		t.Errorf("limit 0: %+v %v", resp, err)
	}

	// No query: the most recent records, newest first.
	req = memory.DefaultRecallQueryRequest()
	req.Limit = 3
	req.Reconsolidate = false
	if got := h.recall(req); !slices.Equal(got, []string{"keys-api", "latency", "beijing"}) {
		t.Errorf("recent: %v", got)
	}

	// min_fidelity: every record is at 1 now, so 1 keeps everything and
	// nothing is filtered.
	req = textQuery("keys")
	req.MinFidelity = ptr(1.0)
	resp, _ = h.e.RecallQuery(ctx, &req)
	if resp.TotalCandidates != 4 || resp.QueryMetadata.FidelityFiltered != 0 {
		t.Errorf("min_fidelity 1: %+v", resp.QueryMetadata)
	}

	// Cues the engine cannot use without an LLM.
	req = textQuery("x")
	req.Cue.Audio = memory.Bytes{1, 2, 3}
	_, err = h.e.RecallQuery(ctx, &req)
	wantCode(t, err, memory.CodeModalityUnsupported, "cue.audio")
	req = textQuery("x")
	req.Cue.Image = memory.Bytes{1, 2, 3}
	_, err = h.e.RecallQuery(ctx, &req)
	wantCode(t, err, memory.CodeModalityUnsupported, "cue.image")
	req.Cue.Embedding = []float32{1, 0}
	if _, err = h.e.RecallQuery(ctx, &req); err != nil {
		t.Errorf("image cue with embedding: %v", err)
	}
	req = textQuery("x")
	req.Cue.Embedding = []float32{}
	_, err = h.e.RecallQuery(ctx, &req)
	wantCode(t, err, memory.CodeValidation, "cue.embedding")
}

func vecRecord(h *harness, text string, v []float32) memory.ID {
	h.t.Helper()
	c := memory.TextContent(text)
	c.Blocks[0].Embedding = v
	resp, err := h.e.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: c})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.RecordID
}

func TestRecallVectorAndHybrid(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	// Stored a second apart, so no two are one batch (whose records share
	// their evidence with their neighbours).
	vec := func(text string, v []float32) memory.ID {
		h.clock.Advance(time.Second)
		return vecRecord(h, text, v)
	}
	a := vec("alpha about cats", []float32{1, 0, 0})
	b := vec("beta about dogs", []float32{0.8, 0.6, 0})
	c := vec("gamma about cats and dogs", []float32{0, 0, 1})
	vec("other dimension", []float32{1, 0}) // skipped, not an error

	ids := func(resp *memory.RecallQueryResponse) []memory.ID {
		var out []memory.ID
		for _, m := range resp.Memories {
			out = append(out, m.Record.ID)
		}
		return out
	}
	req := memory.DefaultRecallQueryRequest()
	req.Reconsolidate = false
	req.ActivationDepth = 0
	req.RecallMode = ptr(memory.ModePerfect)
	req.Cue.Embedding = []float32{1, 0.1, 0}
	resp, err := h.e.RecallQuery(ctx, &req)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(resp); !slices.Equal(got, []memory.ID{a, b}) {
		t.Fatalf("vector recall %v, want [a b]", got)
	}
	if s := resp.Memories[0].RelevanceScore; s < 0.99 || s > 1 {
		t.Errorf("cosine of a %v", s)
	}
	// Hybrid: text "cats" alone favours a and c; the vector favours a, b;
	// 0.6·text + 0.4·vector puts a first.
	req.Cue.Text = ptr("cats")
	resp, err = h.e.RecallQuery(ctx, &req)
	if err != nil {
		t.Fatal(err)
	}
	got := ids(resp)
	if len(got) != 3 || got[0] != a || !slices.Contains(got, b) || !slices.Contains(got, c) {
		t.Fatalf("hybrid recall %v", got)
	}
	if s := resp.Memories[0].RelevanceScore; s <= 0.6 || s > 1 {
		t.Errorf("hybrid score of the best hit %v", s)
	}
}

func TestReconsolidationAndCoActivation(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	resp, err := h.e.EncodeBatch(ctx, &memory.EncodeBatchRequest{InferAssociations: true, Records: []memory.EncodeStoreRequest{
		{Content: memory.TextContent("kiwi orchard harvest")},
		{Content: memory.TextContent("kiwi orchard pruning")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	a := resp.Results[0].RecordID
	before := h.record(a)
	if before.Associations[0].Weight != 0.7 {
		t.Fatalf("batch edge weight %v", before.Associations[0].Weight)
	}
	h.clock.Advance(time.Hour)
	req := memory.DefaultRecallQueryRequest()
	req.Cue.Text = ptr("kiwi orchard")
	if _, err := h.e.RecallQuery(ctx, &req); err != nil {
		t.Fatal(err)
	}
	after := h.record(a)
	if after.AccessCount != 1 || !after.LastAccessedAt.Equal(h.clock.Now()) {
		t.Errorf("access not recorded: %+v", after)
	}
	var seq memory.Association
	for _, as := range after.Associations {
		if as.AssociationType == memory.AssocSequential {
			seq = as
		}
	}
	if want := 0.7 + coActivationStep*0.3; seq.Weight < want-1e-9 || seq.Weight > want+1e-9 || !seq.LastCoActivation.Equal(h.clock.Now()) {
		t.Errorf("co-activation: %+v, want weight %v", seq, want)
	}
	// A perfect-mode recall counts the access but strengthens no edge.
	h.clock.Advance(time.Hour)
	req.RecallMode = ptr(memory.ModePerfect)
	if _, err := h.e.RecallQuery(ctx, &req); err != nil {
		t.Fatal(err)
	}
	perfect := h.record(a)
	i := slices.IndexFunc(perfect.Associations, func(as memory.Association) bool { return as.AssociationType == memory.AssocSequential })
	if perfect.AccessCount != 2 || i < 0 || perfect.Associations[i].Weight != seq.Weight || !perfect.Associations[i].LastCoActivation.Equal(seq.LastCoActivation) {
		t.Errorf("perfect-mode recall: access count %d, associations %+v, want 2 and the sequential edge as it was: %+v", perfect.AccessCount, perfect.Associations, seq)
	}
	h.checkStats(func(s *memory.Stats, when string) {
		if s.TotalRecallCount != 2 {
			t.Errorf("%s: total_recall_count %d", when, s.TotalRecallCount)
		}
	})
}

func TestSimilarityAssociations(t *testing.T) {
	h := newHarness(t, Options{})
	a := h.store("the staging database backup runs nightly at two", memory.StoreEpisodic)
	h.store("lunch menu has soup today", memory.StoreEpisodic)
	b := h.store("the staging database backup failed last night", memory.StoreEpisodic)
	if err := h.e.syncLinks(t.Context()); err != nil {
		t.Fatal(err)
	}
	ra, rb := h.record(a), h.record(b)
	if len(rb.Associations) != 1 || rb.Associations[0].TargetID != a || rb.Associations[0].AssociationType != memory.AssocSemantic {
		t.Fatalf("new record links %+v", rb.Associations)
	}
	if len(ra.Associations) != 1 || ra.Associations[0].TargetID != b || ra.Associations[0].Weight != rb.Associations[0].Weight {
		t.Fatalf("back link %+v", ra.Associations)
	}
	// Embeddings link by cosine.
	x := vecRecord(h, "x", []float32{1, 0, 0})
	y := vecRecord(h, "y", []float32{0.9, 0.1, 0})
	vecRecord(h, "z", []float32{0, 1, 0})
	if err := h.e.syncLinks(t.Context()); err != nil {
		t.Fatal(err)
	}
	if as := h.record(y).Associations; len(as) != 1 || as[0].TargetID != x || as[0].Weight < 0.99 {
		t.Fatalf("vector links %+v", as)
	}
}

func TestRecallAssociate(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	mk := func(text string, links ...memory.ManualAssociation) memory.ID {
		resp, err := h.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent(text), Associations: links})
		if err != nil {
			t.Fatal(err)
		}
		return resp.RecordID
	}
	c := mk("c node")
	d := mk("d node")
	b := mk("b node", memory.ManualAssociation{TargetID: c, AssociationType: memory.AssocCausal, Weight: 0.8})
	a := mk("a node",
		memory.ManualAssociation{TargetID: b, AssociationType: memory.AssocCausal, Weight: 0.8},
		memory.ManualAssociation{TargetID: d, AssociationType: memory.AssocTemporal, Weight: 0.9})

	req := memory.DefaultRecallAssociateRequest()
	req.RecordID = a
	resp, err := h.e.RecallAssociate(ctx, &req)
	if err != nil {
		t.Fatal(err)
	}
	// a→d 0.45, a→b 0.4, a→b→c 0.16.
	var got []string
	for _, m := range resp.Memories {
		text, _ := m.Record.Content.Text()
		got = append(got, fmt.Sprintf("%s %.2f %d", strings.TrimSuffix(text, " node"), m.RelevanceScore, len(m.ActivationPath)))
	}
	if want := []string{"d 0.45 2", "b 0.40 2", "c 0.16 3"}; !slices.Equal(got, want) {
		t.Fatalf("associate %v, want %v", got, want)
	}
	// The type filter applies along the walk and before the limit: only
	// causal edges, so d is never reached and c is.
	req.AssociationTypes = []memory.AssociationType{memory.AssocCausal}
	req.Limit = 2
	resp, err = h.e.RecallAssociate(ctx, &req)
	if err != nil || len(resp.Memories) != 2 || resp.Memories[0].Record.ID != b || resp.Memories[1].Record.ID != c || resp.TotalCandidates != 2 {
		t.Fatalf("causal associate %+v %v", resp, err)
	}
	req = memory.DefaultRecallAssociateRequest()
	req.RecordID = a
	req.Depth = 9
	_, err = h.e.RecallAssociate(ctx, &req)
	wantCode(t, err, memory.CodeValidation, "depth")
	req.Depth, req.Limit = 2, 257
	_, err = h.e.RecallAssociate(ctx, &req)
	wantCode(t, err, memory.CodeValidation, "limit")
	req.Limit, req.RecordID = 10, memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057")
	_, err = h.e.RecallAssociate(ctx, &req)
	wantCode(t, err, memory.CodeNotFound, "01890a5d")

	// Graph around a.
	g, err := h.e.RecallGraph(ctx, &memory.RecallGraphRequest{CenterID: &a, Depth: 2, LimitNodes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if g.TotalNodes != 4 || len(g.Edges) != 3 || g.Nodes[0].ID != a || *g.Nodes[0].Summary != "a node" {
		t.Fatalf("graph %+v", g)
	}
	g, _ = h.e.RecallGraph(ctx, &memory.RecallGraphRequest{CenterID: &a, Depth: 1, LimitNodes: 10, EdgeTypes: []string{"TEMPORAL"}})
	if g.TotalNodes != 2 || g.Nodes[1].ID != d {
		t.Fatalf("filtered graph %+v", g)
	}
}

func TestRecallTimeline(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	h.clock.Set(time.Date(2026, 3, 2, 10, 15, 0, 0, time.UTC)) // a Monday
	a := h.store("monday morning", memory.StoreEpisodic)
	h.clock.Advance(30 * time.Minute)
	b := h.store("monday later", memory.StoreSemantic)
	h.clock.Advance(6 * 24 * time.Hour) // Sunday
	c := h.store("sunday", memory.StoreProcedural)
	h.clock.Advance(24 * time.Hour) // next Monday
	h.store("working one", memory.StoreWorking)
	d := h.store("next monday", memory.StoreEmotional)

	rng := memory.TemporalRange{Start: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)}
	bucketsOf := func(g memory.TimeGranularity) []string {
		resp, err := h.e.RecallTimeline(ctx, &memory.RecallTimelineRequest{Range: rng, Granularity: g})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, bk := range resp.Buckets {
			var ids []string
			for _, m := range bk.Memories {
				for k, v := range map[string]memory.ID{"a": a, "b": b, "c": c, "d": d} {
					if v == m.Record.ID {
						ids = append(ids, k)
					}
				}
			}
			out = append(out, fmt.Sprintf("%s %s %d", bk.Start.Format("01-02T15:04"), strings.Join(ids, ""), bk.Count))
		}
		return out
	}
	if got, want := bucketsOf(memory.GranularityHour), []string{"03-02T10:00 ab 2", "03-08T10:00 c 1", "03-09T10:00 d 1"}; !slices.Equal(got, want) {
		t.Errorf("hour buckets %v, want %v", got, want)
	}
	if got, want := bucketsOf(memory.GranularityWeek), []string{"03-02T00:00 abc 3", "03-09T00:00 d 1"}; !slices.Equal(got, want) {
		t.Errorf("week buckets %v, want %v", got, want)
	}
	if got, want := bucketsOf(memory.GranularityMonth), []string{"03-01T00:00 abcd 4"}; !slices.Equal(got, want) {
		t.Errorf("month buckets %v, want %v", got, want)
	}
	_, err := h.e.RecallTimeline(ctx, &memory.RecallTimelineRequest{Range: memory.TemporalRange{Start: rng.End, End: rng.Start}, Granularity: memory.GranularityDay})
	wantCode(t, err, memory.CodeValidation, "range")
}

func TestSetMode(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	if err := h.e.SetMode(ctx, &memory.SetModeRequest{Mode: memory.ModePerfect, Scope: []memory.StoreType{memory.StoreSemantic}}); err != nil {
		t.Fatal(err)
	}
	m := h.e.modes(h.e.defaultSpace())
	if m[memory.StoreSemantic] != memory.ModePerfect || m[memory.StoreEpisodic] != memory.ModeHuman {
		t.Fatalf("modes %v", m)
	}
	h.reopen()
	if m := h.e.modes(h.e.defaultSpace()); m[memory.StoreSemantic] != memory.ModePerfect || m[memory.StoreEpisodic] != memory.ModeHuman {
		t.Fatalf("modes after reopen %v", m)
	}
	if err := h.e.SetMode(ctx, &memory.SetModeRequest{Mode: memory.ModePerfect}); err != nil {
		t.Fatal(err)
	}
	if m := h.e.modes(h.e.defaultSpace()); m[memory.StoreEpisodic] != memory.ModePerfect || m[memory.StoreWorking] != memory.ModePerfect {
		t.Fatalf("unscoped set-mode %v", m)
	}
	err := h.e.SetMode(ctx, &memory.SetModeRequest{})
	wantCode(t, err, memory.CodeValidation, "mode")
}

func TestRawSearch(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	put := func(session, text string, mod func(*memory.EncodeStoreRawRequest)) memory.ID {
		h.clock.Advance(time.Second)
		r := rawReq(session, text)
		if mod != nil {
			mod(&r)
		}
		resp, err := h.e.EncodeStoreRaw(ctx, &r)
		if err != nil {
			t.Fatal(err)
		}
		return resp.RecordID
	}
	r1 := put("s1", "The rate limiter rejected the batch", nil)
	r2 := put("s1", "rates were limited again yesterday", nil)
	r3 := put("s2", "limiting the RATE fixed it", nil)
	put("s2", "rate limits in a secret note", func(r *memory.EncodeStoreRawRequest) { r.SecrecyLevel = memory.SecrecySecret })
	put("s1", "limit rate for scratch", func(r *memory.EncodeStoreRawRequest) { r.Visibility = memory.VisibilityPrivateScratch })
	put("s1", "unrelated chatter", nil)

	q := func(mod func(*memory.RecallRawQueryRequest)) ([]memory.ID, uint32) {
		t.Helper()
		req := memory.DefaultRecallRawQueryRequest()
		req.Query = ptr("rate limit")
		if mod != nil {
			mod(&req)
		}
		resp, err := h.e.RecallRaw(ctx, &req)
		if err != nil {
			t.Fatal(err)
		}
		var ids []memory.ID
		for _, r := range resp.Records {
			ids = append(ids, r.ID)
		}
		return ids, resp.TotalCandidates
	}
	// Full text, stemmed, any word order, newest first; secret and private
	// hidden by default.
	if ids, total := q(nil); !slices.Equal(ids, []memory.ID{r3, r2, r1}) || total != 3 {
		t.Fatalf("raw search %v total %d", ids, total)
	}
	if ids, _ := q(func(r *memory.RecallRawQueryRequest) { r.SessionID = ptr("s1") }); !slices.Equal(ids, []memory.ID{r2, r1}) {
		t.Fatalf("session filter %v", ids)
	}
	// Session and time combine.
	start := h.rawCreated(t, r2)
	if ids, _ := q(func(r *memory.RecallRawQueryRequest) {
		r.SessionID = ptr("s1")
		r.Temporal = &memory.TemporalRange{Start: start, End: start.Add(time.Hour)}
	}); !slices.Equal(ids, []memory.ID{r2}) {
		t.Fatalf("session+time %v", ids)
	}
	if ids, total := q(func(r *memory.RecallRawQueryRequest) { r.Limit = 1 }); len(ids) != 1 || ids[0] != r3 || total != 3 {
		t.Fatalf("limit 1: %v %d", ids, total)
	}
	if ids, total := q(func(r *memory.RecallRawQueryRequest) { r.Limit = 0 }); len(ids) != 0 || total != 3 {
		t.Fatalf("limit 0: %v %d", ids, total)
	}
	if _, total := q(func(r *memory.RecallRawQueryRequest) {
		r.IncludePrivateScratch = true
		r.SecrecyLevels = []memory.SecrecyLevel{memory.SecrecyPublic, memory.SecrecySensitive, memory.SecrecySecret}
	}); total != 5 {
		t.Fatalf("everything: %d", total)
	}
	// A query without index terms matches as a substring.
	if ids, _ := q(func(r *memory.RecallRawQueryRequest) { r.Query = ptr("the") }); !slices.Equal(ids, []memory.ID{r3, r1}) {
		t.Fatalf("stop-word substring query %v", ids)
	}
	// A range with only an end bounds a text search as it bounds a
	// listing: the later match is left out either way.
	later := put("s1", "the rate limit held later", nil)
	for _, query := range []*string{ptr("rate limit"), nil} {
		ids, _ := q(func(r *memory.RecallRawQueryRequest) {
			r.Query = query
			r.SessionID = ptr("s1")
			r.Temporal = &memory.TemporalRange{End: start}
		})
		if !slices.Equal(ids, []memory.ID{r2, r1}) || slices.Contains(ids, later) {
			t.Fatalf("end-only range (text query: %v): %v", query != nil, ids)
		}
	}
}

// rawCreated returns the creation time of a raw entry.
func (h *harness) rawCreated(t *testing.T, id memory.ID) time.Time {
	rec, err := h.db.GetRaw(store.DefaultNS, id)
	if err != nil {
		t.Fatal(err)
	}
	return rec.CreatedAt
}

// TestReinforcementKeepsTheIndex: a recall rewrites the records it returns
// (access count, stability) without touching their postings; the records
// stay findable, now and after a restart, and the index statistics do not
// move.
func TestReinforcementKeepsTheIndex(t *testing.T) {
	h := newHarness(t, Options{PersistIndexes: true})
	ctx := context.Background()
	a := h.store("the quarterly budget review moved to Thursday", memory.StoreEpisodic)
	b := h.store("budget owners send numbers before the review", memory.StoreSemantic)
	if err := h.e.syncLinks(ctx); err != nil {
		t.Fatal(err)
	}
	before := h.e.defaultSpace().text.Stats()
	for range 3 {
		req := textQuery("budget review")
		req.Reconsolidate = true
		resp, err := h.e.RecallQuery(ctx, &req)
		if err != nil || len(resp.Memories) != 2 {
			t.Fatalf("recall: %+v %v", resp, err)
		}
	}
	if got := h.record(a).AccessCount; got != 3 {
		t.Fatalf("access count %d after three recalls, want 3", got)
	}
	if after := h.e.defaultSpace().text.Stats(); after != before {
		t.Fatalf("index statistics moved: %+v, then %+v", before, after)
	}
	h.reopen()
	if after := h.e.defaultSpace().text.Stats(); after != before {
		t.Fatalf("index statistics after a restart: %+v, want %+v", after, before)
	}
	for _, q := range []string{"quarterly Thursday", "owners numbers"} {
		resp, err := h.e.RecallQuery(ctx, ptr(textQuery(q)))
		if err != nil || len(resp.Memories) == 0 {
			t.Fatalf("%q after reinforcement and restart: %+v %v", q, resp, err)
		}
		if id := resp.Memories[0].Record.ID; id != a && id != b {
			t.Fatalf("%q found %s", q, id)
		}
	}
	if got := h.record(b).AccessCount; got != 3 {
		t.Fatalf("access count of the second record %d after a restart, want 3", got)
	}
}
