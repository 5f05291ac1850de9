package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testsync"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
)

// nsWorld is an engine with two namespaces filled the same way, plus a few
// records and raw entries only one of them has (marked with a word of its
// own), and an audit log.
type nsWorld struct {
	t     *testing.T
	h     *harness
	audit string
	// unique words: records and entries with them exist in one
	// namespace only
	word map[string]string
}

// sharedRawIDs are client-supplied raw entry ids both namespaces use: a
// raw id is looked up in its own namespace only.
var sharedRawIDs = []memory.ID{
	memory.MustParseID("0196a9e2-5c1d-7f00-8a00-00000000a001"),
	memory.MustParseID("0196a9e2-5c1d-7f00-8a00-00000000a002"),
	memory.MustParseID("0196a9e2-5c1d-7f00-8a00-00000000a003"),
}

func newNSWorld(t *testing.T, names ...string) *nsWorld {
	t.Helper()
	return newNSWorldWith(t, Options{}, names...)
}

// newNSWorldWith is newNSWorld with engine options (clock, audit log and
// working capacity are the world's).
func newNSWorldWith(t *testing.T, opts Options, names ...string) *nsWorld {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), clock: testsync.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	path := filepath.Join(h.dir, "audit.jsonl")
	alog, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts.Now, opts.Audit, opts.WorkingCapacity = h.clock.Now, alog, 3
	h.opts = opts
	h.open()
	t.Cleanup(func() {
		h.close()
		alog.Close()
	})
	w := &nsWorld{t: t, h: h, audit: path, word: map[string]string{}}
	uniq := []string{"zebra", "quokka", "narwhal"}
	for i, name := range names {
		w.word[name] = uniq[i]
		w.fill(w.ctx(name), uniq[i])
	}
	if err := h.e.syncLinks(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(48 * time.Hour)
	return w
}

func (w *nsWorld) ctx(name string) context.Context {
	return memory.WithNamespace(context.Background(), name)
}

// must is the result of a call that must not fail: must(f())(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// fill stores the same texts in every namespace, and a few with the
// namespace's own word.
func (w *nsWorld) fill(ctx context.Context, word string) {
	t, e := w.t, w.h.e
	put := func(text string, st memory.StoreType, emb []float32, links ...memory.ID) memory.ID {
		c := memory.TextContent(text)
		c.Blocks[0].Embedding = emb
		req := &memory.EncodeStoreRequest{Content: c, Store: &st}
		for _, l := range links {
			req.Associations = append(req.Associations, memory.ManualAssociation{TargetID: l, AssociationType: memory.AssocCausal, Weight: 0.8})
		}
		if st == memory.StoreEmotional {
			req.Emotion = &memory.EmotionVector{Fear: 0.7, Intensity: 0.8}
		}
		return must(e.EncodeStore(ctx, req))(t).RecordID
	}
	first := put("the deploy pipeline runs through staging before production", memory.StoreEpisodic, []float32{1, 0, 0})
	put("staging mirrors the production configuration of the deploy pipeline", memory.StoreSemantic, []float32{0.9, 0.1, 0})
	put("run make deploy to ship the service through the pipeline", memory.StoreProcedural, nil)
	put("the outage last friday was stressful for the on-call team", memory.StoreEmotional, nil)
	put("currently reviewing the deploy checklist", memory.StoreWorking, nil)
	put("the rollback happened because the deploy skipped staging", memory.StoreEpisodic, []float32{0.8, 0.2, 0}, first)
	put(word+" sightings near the deploy pipeline are rare", memory.StoreEpisodic, []float32{0, 1, 0})
	put("the "+word+" team owns the staging cluster", memory.StoreSemantic, nil)
	must(e.EncodeBatch(ctx, &memory.EncodeBatchRequest{InferAssociations: true, Records: []memory.EncodeStoreRequest{
		{Content: memory.TextContent("database migrations lock tables during the deploy")},
		{Content: memory.TextContent("schedule database migrations at night")},
		{Content: memory.TextContent("database migrations need a rollback plan")},
	}}))(t)
	topic := "deploy"
	raw := func(id *memory.ID, session, text string) memory.EncodeStoreRawRequest {
		r := memory.DefaultEncodeStoreRawRequest()
		r.RecordID, r.SessionID, r.TopicID, r.Content = id, session, &topic, memory.TextContent(text)
		return r
	}
	must(e.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{
		raw(&sharedRawIDs[0], "s1", "how do we deploy the billing service"),
		raw(&sharedRawIDs[1], "s1", "deploy billing through staging then production"),
		raw(&sharedRawIDs[2], "s1", "the billing deploy passed its smoke test on staging"),
		raw(nil, "s1", "the "+word+" deploy of billing is done"),
		raw(nil, "s2", word+" notes about the staging cluster"),
	}}))(t)
}

// observation is everything a namespace shows, as comparable text.
type observation struct {
	stats, evolution, records, raws, info, modes string
	ids, rawTexts                                []string
}

// observe reads everything namespace name shows; it changes nothing.
func (w *nsWorld) observe(name string) observation {
	t, e, ctx := w.t, w.h.e, w.ctx(name)
	t.Helper()
	var o observation
	js := func(v any) string { return string(must(json.Marshal(v))(t)) }
	o.stats = js(must(e.Stats(ctx))(t))
	o.evolution = js(must(e.Evolution(ctx))(t))
	_, entries, _ := exportOf(t, e, ctx, exportEverything())
	var recs, raws []string
	for _, ent := range entries {
		if ent.Namespace != "" && ent.Namespace != name {
			t.Fatalf("export of %s holds an entry of %s", name, ent.Namespace)
		}
		if ent.Record != nil {
			recs = append(recs, js(ent.Record))
			o.ids = append(o.ids, ent.Record.ID.String())
		} else {
			raws = append(raws, js(ent.Raw))
			text, _ := ent.Raw.Content.Text()
			o.rawTexts = append(o.rawTexts, text)
		}
	}
	slices.Sort(recs)
	slices.Sort(raws)
	o.records, o.raws = strings.Join(recs, "\n"), strings.Join(raws, "\n")
	for _, n := range must(e.Namespaces(ctx))(t).Namespaces {
		if n.Name == name {
			o.info = js(n)
		}
	}
	o.modes = fmt.Sprint(e.modes(e.space(ctx)))
	return o
}

func (o observation) diff(p observation) string {
	var out []string
	for _, f := range []struct{ name, a, b string }{
		{"stats", o.stats, p.stats}, {"evolution", o.evolution, p.evolution}, {"records", o.records, p.records},
		{"raw entries", o.raws, p.raws}, {"namespace list entry", o.info, p.info}, {"modes", o.modes, p.modes},
	} {
		if f.a != f.b {
			out = append(out, fmt.Sprintf("%s changed:\n%s", f.name, lineDiff(f.a, f.b)))
		}
	}
	return strings.Join(out, "\n")
}

// lineDiff lists the lines only one of a and b has (cut short).
func lineDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	short := func(l string) string { return l[:min(len(l), 400)] }
	for _, l := range la {
		if !slices.Contains(lb, l) {
			out = append(out, "- "+short(l))
		}
	}
	for _, l := range lb {
		if !slices.Contains(la, l) {
			out = append(out, "+ "+short(l))
		}
	}
	return strings.Join(out, "\n")
}

// serviceMethods lists the methods of memory.Service, and the engine's
// namespace methods, so every one of them must have a case below.
func serviceMethods() []string {
	var out []string
	st := reflect.TypeFor[memory.Service]()
	for i := range st.NumMethod() {
		out = append(out, st.Method(i).Name)
	}
	for _, m := range []string{"Namespaces", "DropNamespace"} {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// TestNamespaceIsolation stores the same texts in two namespaces, then
// runs every Service method in one of them and checks that the other saw
// nothing of it: everything it shows (stats, records with their fidelity,
// access counts and associations, raw entries, modes, evolution, its entry
// in the namespace list) is exactly as before, and no answer in it ever
// names a record of the first. Each method must also have done something
// in its own namespace, so the check cannot pass by doing nothing.
func TestNamespaceIsolation(t *testing.T) {
	for _, roles := range [][2]string{{"alpha", "beta"}, {"beta", "alpha"}} {
		t.Run(roles[0]+" acts", func(t *testing.T) {
			testIsolation(t, roles[0], roles[1])
		})
	}
}

func testIsolation(t *testing.T, actor, watched string) {
	w := newNSWorld(t, "alpha", "beta")
	e, ctx := w.h.e, w.ctx(actor)
	mine := w.observe(actor)
	myID := func(i int) memory.ID { return memory.MustParseID(mine.ids[i]) }

	// The watched namespace's own raw id: the actor may use it freely.
	theirRaw := memory.MustParseID("0196a9e2-5c1d-7f00-8a00-00000000b001")
	r := memory.DefaultEncodeStoreRawRequest()
	r.RecordID, r.SessionID, r.Content = &theirRaw, "s9", memory.TextContent("an entry only the watched namespace has")
	must(e.EncodeStoreRaw(w.ctx(watched), &r))(t)
	before := w.observe(watched)
	if err := e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	auditFrom := len(readAudit(t, w.audit))

	text := func(s string) *string { return &s }
	query := func(q *string, emb []float32) *memory.RecallQueryRequest {
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text, req.Cue.Embedding = q, emb
		return &req
	}
	yes := true
	var archiveBuf bytes.Buffer
	cases := map[string]func() error{
		"EncodeStore": func() error {
			resp, err := e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("the deploy pipeline runs through staging before production again")})
			if err == nil && resp.RecordID.IsNil() {
				err = errors.New("no record stored")
			}
			return err
		},
		"EncodeBatch": func() error {
			resp, err := e.EncodeBatch(ctx, &memory.EncodeBatchRequest{InferAssociations: true, Records: []memory.EncodeStoreRequest{
				{Content: memory.TextContent("database migrations lock tables during the deploy window")},
				{Content: memory.TextContent("database migrations need a tested rollback plan")},
			}})
			if err == nil && resp.AssociationsInferred == 0 {
				err = errors.New("no associations inferred")
			}
			return err
		},
		"EncodeUpdate": func() error {
			c := memory.TextContent("the deploy pipeline now runs canaries")
			return e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: myID(0), Content: &c})
		},
		"EncodeStoreRaw": func() error {
			r := memory.DefaultEncodeStoreRawRequest()
			r.RecordID, r.SessionID, r.Content = &theirRaw, "s9", memory.TextContent("the actor's own entry under the same id")
			resp, err := e.EncodeStoreRaw(ctx, &r)
			if err == nil && resp.Duplicate {
				err = errors.New("an id stored only in the other namespace counts as a duplicate here")
			}
			return err
		},
		"EncodeBatchRaw": func() error {
			r := memory.DefaultEncodeStoreRawRequest()
			r.RecordID, r.SessionID, r.Content = &sharedRawIDs[0], "s1", memory.TextContent("a replay of the first entry")
			n := memory.DefaultEncodeStoreRawRequest()
			n.SessionID, n.Content = "s1", memory.TextContent("deploy billing once more")
			resp, err := e.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{r, n}})
			if err == nil && (!resp.Results[0].Duplicate || resp.Results[1].Duplicate) {
				err = fmt.Errorf("duplicates %v, want the replay only", resp.Results)
			}
			return err
		},
		"RecallQuery": func() error {
			for _, q := range []*memory.RecallQueryRequest{query(text("deploy staging"), nil), query(nil, []float32{1, 0, 0}), query(nil, nil)} {
				resp, err := e.RecallQuery(ctx, q)
				if err != nil {
					return err
				}
				if len(resp.Memories) == 0 {
					return errors.New("nothing recalled")
				}
			}
			return nil
		},
		"RecallRaw": func() error {
			resp, err := e.RecallRaw(ctx, &memory.RecallRawQueryRequest{Query: text("billing"), Limit: 10})
			if err == nil && len(resp.Records) == 0 {
				err = errors.New("nothing found")
			}
			return err
		},
		"RecallAssociate": func() error {
			resp, err := e.RecallAssociate(ctx, &memory.RecallAssociateRequest{RecordID: myID(0), Limit: 10})
			_ = resp
			return err
		},
		"RecallTimeline": func() error {
			resp, err := e.RecallTimeline(ctx, &memory.RecallTimelineRequest{Range: memory.TemporalRange{Start: time.Unix(0, 0), End: w.h.clock.Now()}, Granularity: memory.GranularityDay})
			if err == nil && len(resp.Buckets) == 0 {
				err = errors.New("empty timeline")
			}
			return err
		},
		"RecallGraph": func() error {
			resp, err := e.RecallGraph(ctx, &memory.RecallGraphRequest{Depth: 2, LimitNodes: 50})
			if err == nil && len(resp.Nodes) == 0 {
				err = errors.New("empty graph")
			}
			return err
		},
		"Consolidate": func() error {
			resp, err := e.Consolidate(ctx, &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull})
			if err == nil && resp.RecordsMigrated == 0 {
				err = errors.New("nothing consolidated")
			}
			return err
		},
		"DreamTick": func() error {
			resp, err := e.DreamTick(ctx, dreamReq())
			if err == nil && resp.GroupsProcessed == 0 {
				err = errors.New("nothing dreamt")
			}
			return err
		},
		"DecayTick": func() error {
			resp, err := e.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: ptr(uint32(2 * 86400))})
			if err == nil && resp.RecordsUpdated == 0 {
				err = errors.New("nothing aged")
			}
			return err
		},
		"SetMode": func() error {
			return e.SetMode(ctx, &memory.SetModeRequest{Mode: memory.ModePerfect})
		},
		"Forget": func() error {
			resp, err := e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{myID(1)}, Cascade: true, Confirm: &yes})
			if err == nil && resp.RecordsDeleted == 0 {
				err = errors.New("nothing forgotten")
			}
			if err == nil {
				st := memory.StoreProcedural
				resp, err = e.Forget(ctx, &memory.ForgetRequest{Store: &st, Confirm: &yes})
				if err == nil && resp.RecordsDeleted == 0 {
					err = errors.New("no procedural record forgotten")
				}
			}
			return err
		},
		"Export": func() error {
			archiveBuf.Reset()
			resp, err := e.Export(ctx, &memory.ExportRequest{Format: "cma", IncludeRawJournal: true}, &archiveBuf)
			if err == nil && resp.RecordCount == 0 {
				err = errors.New("empty export")
			}
			return err
		},
		"Import": func() error {
			req := memory.DefaultImportRequest()
			req.Strategy = memory.ImportReplace
			resp, err := e.Import(ctx, &req, bytes.NewReader(archiveBuf.Bytes()))
			if err == nil && resp.RecordsImported == 0 {
				err = errors.New("nothing imported")
			}
			return err
		},
		"Stats": func() error {
			s, err := e.Stats(ctx)
			if err == nil && s.TotalRecords == 0 {
				err = errors.New("no records counted")
			}
			return err
		},
		"StatsAll": func() error {
			// Unscoped by design: it counts the other namespace too, and
			// reading it changes nothing there.
			all, err := e.StatsAll(ctx)
			if err != nil {
				return err
			}
			mine, err := e.Stats(ctx)
			if err == nil && all.TotalRecords <= mine.TotalRecords {
				err = fmt.Errorf("StatsAll counts %d records, the namespace alone %d", all.TotalRecords, mine.TotalRecords)
			}
			return err
		},
		"Record": func() error {
			_, err := e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: myID(2)})
			return err
		},
		"DecayForecast": func() error {
			_, err := e.DecayForecast(ctx, &memory.DecayForecastRequest{RecordIDs: []memory.ID{myID(2)}, ForecastAt: w.h.clock.Now().Add(24 * time.Hour)})
			return err
		},
		"Evolution": func() error {
			_, err := e.Evolution(ctx)
			return err
		},
		"Namespaces": func() error {
			resp, err := e.Namespaces(ctx)
			if err == nil && len(resp.Namespaces) < 2 {
				err = fmt.Errorf("namespaces %v", resp.Namespaces)
			}
			return err
		},
		"DropNamespace": func() error {
			resp, err := e.DropNamespace(ctx, &memory.DropNamespaceRequest{Name: actor, Confirm: true})
			if err == nil && resp.RecordsDeleted == 0 {
				err = errors.New("nothing dropped")
			}
			return err
		},
	}
	order := serviceMethods()
	// Export before Import (it imports what Export wrote), Record before
	// Forget could take its record, and the drop last.
	slices.SortStableFunc(order, func(a, b string) int {
		rank := func(m string) int {
			switch m {
			case "Record", "DecayForecast", "RecallAssociate", "EncodeUpdate":
				return 0
			case "Export":
				return 1
			case "Import":
				return 2
			case "DropNamespace":
				return 4
			}
			return 3
		}
		return rank(a) - rank(b)
	})
	for _, m := range order {
		op, ok := cases[m]
		if !ok {
			t.Errorf("memory.Service method %s has no case in the isolation test", m)
			continue
		}
		if err := op(); err != nil {
			t.Fatalf("%s in %s: %v", m, actor, err)
		}
		w.h.clock.Advance(time.Minute)
		if err := e.syncLinks(context.Background()); err != nil {
			t.Fatal(err)
		}
		if d := before.diff(w.observe(watched)); d != "" {
			t.Fatalf("%s in %s changed %s:\n%s", m, actor, watched, d)
		}
	}

	// Every audit entry of the actor's operations names the actor (the
	// observations in between are the watched namespace's exports).
	if err := e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	for _, l := range readAudit(t, w.audit)[auditFrom:] {
		var s struct {
			Namespace  *string  `json:"namespace"`
			Namespaces []string `json:"namespaces"`
		}
		if err := json.Unmarshal(l.Summary, &s); err != nil {
			t.Fatal(err)
		}
		switch {
		case s.Namespace == nil && s.Namespaces == nil:
			t.Errorf("audit entry %d (%s) names no namespace: %s", l.Sequence, l.Operation, l.Summary)
		case s.Namespace != nil && *s.Namespace == watched && l.Operation != audit.OpExport:
			t.Errorf("audit entry %d (%s) changed %s: %s", l.Sequence, l.Operation, watched, l.Summary)
		}
	}
}

// TestNamespaceInvisibility: from one namespace, the records of another
// are not found by id, by search, by listing or by association, and are
// not counted.
func TestNamespaceInvisibility(t *testing.T) {
	w := newNSWorld(t, "alpha", "beta")
	e := w.h.e
	alpha, beta := w.observe("alpha"), w.observe("beta")
	ctx := w.ctx("beta")
	theirs := func(id memory.ID) bool { return slices.Contains(alpha.ids, id.String()) }
	for _, idText := range alpha.ids {
		id := memory.MustParseID(idText)
		if _, err := e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: id}); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("Record of alpha's %s from beta: %v", id, err)
		}
		c := memory.TextContent("overwritten")
		if err := e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Content: &c}); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("EncodeUpdate of alpha's %s from beta: %v", id, err)
		}
		if _, err := e.RecallAssociate(ctx, &memory.RecallAssociateRequest{RecordID: id, Limit: 5}); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("RecallAssociate from alpha's %s in beta: %v", id, err)
		}
		if _, err := e.DecayForecast(ctx, &memory.DecayForecastRequest{RecordIDs: []memory.ID{id}, ForecastAt: w.h.clock.Now()}); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("DecayForecast of alpha's %s from beta: %v", id, err)
		}
		if g, err := e.RecallGraph(ctx, &memory.RecallGraphRequest{CenterID: &id, Depth: 2, LimitNodes: 10}); err != nil || len(g.Nodes) != 0 {
			t.Errorf("RecallGraph around alpha's %s in beta: %v, %v", id, g, err)
		}
		if _, err := e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("a link across"),
			Associations: []memory.ManualAssociation{{TargetID: id, AssociationType: memory.AssocCausal, Weight: 0.5}}}); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("a link from beta to alpha's %s: %v", id, err)
		}
		yes := true
		if resp, err := e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{id}, Confirm: &yes}); err != nil || resp.RecordsDeleted != 0 {
			t.Errorf("Forget of alpha's %s from beta: %v, %v", id, resp, err)
		}
	}
	if d := alpha.diff(w.observe("alpha")); d != "" {
		t.Fatalf("alpha changed:\n%s", d)
	}

	// Searches and listings in beta return beta's records only; alpha's
	// word finds nothing.
	for _, req := range []memory.RecallQueryRequest{
		func() memory.RecallQueryRequest {
			r := memory.DefaultRecallQueryRequest()
			r.Cue.Text, r.Limit, r.RecallMode = ptr(w.word["alpha"]+" deploy staging pipeline"), 50, ptr(memory.ModePerfect)
			r.Reconsolidate = false
			return r
		}(),
		func() memory.RecallQueryRequest {
			r := memory.DefaultRecallQueryRequest()
			r.Cue.Embedding, r.Limit, r.Reconsolidate = []float32{0, 1, 0}, 50, false
			return r
		}(),
		func() memory.RecallQueryRequest {
			r := memory.DefaultRecallQueryRequest()
			r.Limit, r.Reconsolidate = 50, false
			return r
		}(),
	} {
		resp := must(e.RecallQuery(ctx, &req))(t)
		if len(resp.Memories) == 0 {
			t.Errorf("recall %+v found nothing in beta", req.Cue)
		}
		for _, m := range resp.Memories {
			text, _ := m.Record.Content.Text()
			if theirs(m.Record.ID) || strings.Contains(text, w.word["alpha"]) {
				t.Errorf("recall in beta returned alpha's %s %q", m.Record.ID, text)
			}
			for _, p := range m.ActivationPath {
				if theirs(p) {
					t.Errorf("activation in beta went through alpha's %s", p)
				}
			}
		}
	}
	raws := must(e.RecallRaw(ctx, &memory.RecallRawQueryRequest{Query: ptr(w.word["alpha"]), Limit: 50}))(t)
	if len(raws.Records) != 0 || raws.TotalCandidates != 0 {
		t.Errorf("raw recall in beta for alpha's word: %+v", raws)
	}
	tl := must(e.RecallTimeline(ctx, &memory.RecallTimelineRequest{Range: memory.TemporalRange{Start: time.Unix(0, 0), End: w.h.clock.Now()}, Granularity: memory.GranularityMonth, Limit: ptr(uint32(1000))}))(t)
	for _, b := range tl.Buckets {
		for _, m := range b.Memories {
			if theirs(m.Record.ID) {
				t.Errorf("timeline in beta lists alpha's %s", m.Record.ID)
			}
		}
	}
	g := must(e.RecallGraph(ctx, &memory.RecallGraphRequest{Depth: 3, LimitNodes: 100}))(t)
	for _, n := range g.Nodes {
		if theirs(n.ID) {
			t.Errorf("graph in beta holds alpha's %s", n.ID)
		}
	}

	// Counted: each namespace's stats count its own records only, and
	// together they make the totals.
	sa, sb := must(e.Stats(w.ctx("alpha")))(t), must(e.Stats(ctx))(t)
	if int(sb.TotalRecords) != len(beta.ids) || int(sa.TotalRecords) != len(alpha.ids) {
		t.Errorf("stats count %d and %d records, the namespaces hold %d and %d", sa.TotalRecords, sb.TotalRecords, len(alpha.ids), len(beta.ids))
	}
	if int(sb.RawJournalRecords) != len(beta.rawTexts) {
		t.Errorf("beta counts %d raw entries, holds %d", sb.RawJournalRecords, len(beta.rawTexts))
	}
	all := must(e.StatsAll(context.Background()))(t)
	if all.TotalRecords != sa.TotalRecords+sb.TotalRecords || all.RawJournalRecords != sa.RawJournalRecords+sb.RawJournalRecords ||
		all.TotalAssociations != sa.TotalAssociations+sb.TotalAssociations || all.VectorIndexRecords != sa.VectorIndexRecords+sb.VectorIndexRecords {
		t.Errorf("totals %+v are not alpha %+v plus beta %+v", all, sa, sb)
	}
}
