package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
)

// exportOf exports from ctx with req and returns the archive and its
// entries.
func exportOf(t *testing.T, e *Engine, ctx context.Context, req memory.ExportRequest) ([]byte, []archive.Entry, archive.Header) {
	t.Helper()
	req.Format = "cma"
	var buf bytes.Buffer
	must(e.Export(ctx, &req, &buf))(t)
	entries, h := readArchive(t, buf.Bytes())
	return buf.Bytes(), entries, h
}

// exportEverything is an export request for every entry of a namespace:
// raw entries, sealed and secret ones included.
func exportEverything() memory.ExportRequest {
	return memory.ExportRequest{IncludeRawJournal: true, IncludeSealed: true, IncludeSecret: true}
}

// readArchive returns the entries of an archive, in order, and its header.
func readArchive(t *testing.T, data []byte) ([]archive.Entry, archive.Header) {
	t.Helper()
	ar := must(archive.NewReader(bytes.NewReader(data), archive.ReaderOptions{}))(t)
	var out []archive.Entry
	for {
		ent, err := ar.Next()
		if errors.Is(err, io.EOF) {
			return out, ar.Header()
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ent)
	}
}

// byNamespace counts entries per namespace ("" for those naming none).
func byNamespace(entries []archive.Entry) map[string]int {
	out := map[string]int{}
	for _, e := range entries {
		out[e.Namespace]++
	}
	return out
}

func (w *nsWorld) counts(name string) (records, raws int) {
	o := w.observe(name)
	return len(o.ids), len(o.rawTexts)
}

func TestExportNamespaces(t *testing.T) {
	w := newNSWorld(t, "alpha", "beta", memory.DefaultNamespace)
	e := w.h.e
	size := map[string]int{}
	for _, name := range []string{"alpha", "beta", memory.DefaultNamespace} {
		r, raw := w.counts(name)
		size[name] = r + raw
	}

	// The caller's namespace by default; its entries name it, in a 2.0
	// bundle even without the raw journal.
	_, entries, h := exportOf(t, e, w.ctx("alpha"), memory.ExportRequest{})
	if h.Version != archive.Version2 || len(entries) == 0 {
		t.Fatalf("export of alpha: version %s, %d entries", h.Version, len(entries))
	}
	if got := byNamespace(entries); got["alpha"] != len(entries) {
		t.Errorf("export of alpha names %v", got)
	}
	// The default namespace alone keeps the upstream shape.
	_, entries, h = exportOf(t, e, context.Background(), memory.ExportRequest{})
	if h.Version != archive.Version1 || byNamespace(entries)[""] != len(entries) {
		t.Errorf("export of default: version %s, namespaces %v", h.Version, byNamespace(entries))
	}
	// A list, and every namespace; raw entries after every curated one.
	_, entries, _ = exportOf(t, e, context.Background(), memory.ExportRequest{Namespaces: []string{"beta", "alpha", "beta"}, IncludeRawJournal: true})
	if got := byNamespace(entries); got["alpha"] != size["alpha"] || got["beta"] != size["beta"] || len(got) != 2 {
		t.Errorf("export of alpha and beta: %v, want %v", got, size)
	}
	_, entries, _ = exportOf(t, e, w.ctx("alpha"), memory.ExportRequest{Namespaces: []string{memory.AllNamespaces}, IncludeRawJournal: true})
	if got := byNamespace(entries); got["alpha"] != size["alpha"] || got["beta"] != size["beta"] || got[""] != size[memory.DefaultNamespace] {
		t.Errorf("export of every namespace: %v, want %v", got, size)
	}
	raw := false
	for _, ent := range entries {
		if ent.Raw != nil {
			raw = true
		} else if raw {
			t.Fatal("a curated record after raw entries")
		}
	}
	// A namespace that does not exist exports nothing.
	_, entries, _ = exportOf(t, e, w.ctx("ghost"), memory.ExportRequest{})
	if len(entries) != 0 {
		t.Errorf("export of a namespace that does not exist: %d entries", len(entries))
	}
	for _, bad := range [][]string{{memory.AllNamespaces, "alpha"}, {"Alpha"}, {""}} {
		_, err := e.Export(context.Background(), &memory.ExportRequest{Format: "cma", Namespaces: bad}, io.Discard)
		wantCode(t, err, memory.CodeValidation, "namespaces")
	}
}

func TestImportIntoNamespaces(t *testing.T) {
	w := newNSWorld(t, "alpha", "beta")
	e := w.h.e
	alpha := w.observe("alpha")
	all, _, _ := exportOf(t, e, context.Background(), memory.ExportRequest{Namespaces: []string{memory.AllNamespaces}, IncludeRawJournal: true, IncludeSealed: true, IncludeSecret: true})
	fromAlpha, _, _ := exportOf(t, e, w.ctx("alpha"), memory.ExportRequest{IncludeRawJournal: true, IncludeSealed: true, IncludeSecret: true})
	imp := func(ctx context.Context, data []byte, strategy memory.ImportStrategy, preserve bool) *memory.ImportResponse {
		t.Helper()
		req := memory.DefaultImportRequest()
		req.Strategy, req.PreserveNamespaces = strategy, preserve
		return must(e.Import(ctx, &req, bytes.NewReader(data)))(t)
	}

	// Into a chosen namespace: the same ids, as records of their own.
	resp := imp(w.ctx("gamma"), fromAlpha, memory.ImportMerge, false)
	if int(resp.RecordsImported) != len(alpha.ids)+len(alpha.rawTexts) {
		t.Fatalf("imported %+v into gamma, alpha holds %d and %d", resp, len(alpha.ids), len(alpha.rawTexts))
	}
	gamma := w.observe("gamma")
	if !slices.Equal(gamma.ids, alpha.ids) || len(gamma.rawTexts) != len(alpha.rawTexts) {
		t.Fatalf("gamma holds %d records and %d raw entries, alpha %d and %d", len(gamma.ids), len(gamma.rawTexts), len(alpha.ids), len(alpha.rawTexts))
	}
	yes := true
	id := memory.MustParseID(alpha.ids[0])
	if r := must(e.Forget(w.ctx("gamma"), &memory.ForgetRequest{RecordIDs: []memory.ID{id}, Confirm: &yes}))(t); r.RecordsDeleted != 1 {
		t.Fatalf("forget in gamma: %+v", r)
	}
	if d := alpha.diff(w.observe("alpha")); d != "" {
		t.Fatalf("importing into gamma and forgetting there changed alpha:\n%s", d)
	}
	// Importing the same archive again finds every raw id in gamma.
	resp = imp(w.ctx("gamma"), fromAlpha, memory.ImportMerge, false)
	if int(resp.RecordsSkipped) < len(alpha.rawTexts) || resp.RawConflicts != 0 {
		t.Errorf("second import into gamma: %+v", resp)
	}

	// A replace without preserve_namespaces empties the caller's only.
	beta := w.observe("beta")
	imp(w.ctx("gamma"), fromAlpha, memory.ImportReplace, false)
	if got := w.observe("gamma"); len(got.ids) != len(alpha.ids) {
		t.Errorf("gamma after a replace: %d records, want %d", len(got.ids), len(alpha.ids))
	}
	if d := beta.diff(w.observe("beta")); d != "" {
		t.Fatalf("a replace in gamma changed beta:\n%s", d)
	}

	// Everything, as archived, into a fresh engine: the namespaces come
	// back with their data.
	w2 := newNSWorld(t)
	resp = must(w2.h.e.Import(context.Background(), &memory.ImportRequest{Strategy: memory.ImportMerge,
		ConflictResolution: memory.KeepNewer, PreserveNamespaces: true}, bytes.NewReader(all)))(t)
	if resp.RecordsImported == 0 {
		t.Fatal("nothing imported")
	}
	for _, name := range []string{"alpha", "beta"} {
		want := w.observe(name)
		if name == "alpha" {
			want = alpha
		}
		got := w2.observe(name)
		if !slices.Equal(got.ids, want.ids) || len(got.rawTexts) != len(want.rawTexts) {
			t.Errorf("%s after importing everything: %d records, %d raw entries; want %d, %d", name, len(got.ids), len(got.rawTexts), len(want.ids), len(want.rawTexts))
		}
	}
	if o := w2.observe(memory.DefaultNamespace); len(o.ids) != 0 {
		t.Errorf("the default namespace got %d records", len(o.ids))
	}

	// A replace with preserve_namespaces empties every namespace, even
	// one the archive does not name.
	must(w2.h.e.EncodeStore(w2.ctx("delta"), &memory.EncodeStoreRequest{Content: memory.TextContent("delta's only record")}))(t)
	must(w2.h.e.Import(context.Background(), &memory.ImportRequest{Strategy: memory.ImportReplace,
		ConflictResolution: memory.KeepNewer, PreserveNamespaces: true}, bytes.NewReader(fromAlpha)))(t)
	if o := w2.observe("delta"); len(o.ids) != 0 {
		t.Errorf("delta kept %d records through a replacing import of everything", len(o.ids))
	}
	if o := w2.observe("beta"); len(o.ids) != 0 {
		t.Errorf("beta kept %d records through a replacing import of alpha's archive", len(o.ids))
	}
	if o := w2.observe("alpha"); !slices.Equal(o.ids, alpha.ids) {
		t.Errorf("alpha after the replace: %d records, want %d", len(o.ids), len(alpha.ids))
	}
}

func TestDropNamespace(t *testing.T) {
	for _, persist := range []bool{false, true} {
		t.Run(map[bool]string{false: "indexes in memory", true: "indexes on disk"}[persist], func(t *testing.T) {
			testDropNamespace(t, persist)
		})
	}
}

func testDropNamespace(t *testing.T, persist bool) {
	w := newNSWorldWith(t, Options{PersistIndexes: persist}, "alpha", "beta", memory.DefaultNamespace)
	e := w.h.e
	ctx := context.Background()
	if err := e.SetMode(w.ctx("alpha"), &memory.SetModeRequest{Mode: memory.ModePerfect}); err != nil {
		t.Fatal(err)
	}
	alphaRecords, alphaRaw := w.counts("alpha")
	w.forgetWorking("beta") // it would not survive the restarts below
	beta := w.observe("beta")

	_, err := e.DropNamespace(ctx, &memory.DropNamespaceRequest{Name: "alpha"})
	wantCode(t, err, memory.CodeValidation, "confirm")
	_, err = e.DropNamespace(ctx, &memory.DropNamespaceRequest{Name: "ghost", Confirm: true})
	wantCode(t, err, memory.CodeNotFound, "ghost")
	_, err = e.DropNamespace(ctx, &memory.DropNamespaceRequest{Name: "Alpha", Confirm: true})
	wantCode(t, err, memory.CodeValidation, "namespace")

	resp := must(e.DropNamespace(ctx, &memory.DropNamespaceRequest{Name: "alpha", Confirm: true}))(t)
	if resp.Name != "alpha" || int(resp.RecordsDeleted) != alphaRecords || int(resp.RawEntriesDeleted) != alphaRaw {
		t.Errorf("drop answered %+v, alpha held %d records and %d raw entries", resp, alphaRecords, alphaRaw)
	}
	check := func(when string) {
		t.Helper()
		for _, n := range must(e.Namespaces(ctx))(t).Namespaces {
			if n.Name == "alpha" {
				t.Errorf("%s: alpha is still listed", when)
			}
		}
		if _, ok := w.h.db.LookupNamespace("alpha"); ok {
			t.Errorf("%s: alpha is still registered", when)
		}
		if s := must(e.Stats(w.ctx("alpha")))(t); s.TotalRecords != 0 || s.RawJournalRecords != 0 {
			t.Errorf("%s: alpha's stats %+v", when, s)
		}
		if d := beta.diff(w.observe("beta")); d != "" {
			t.Errorf("%s: dropping alpha changed beta:\n%s", when, d)
		}
	}
	check("after the drop")
	w.h.reopen()
	e = w.h.e
	check("after a restart")

	// The name is free: a new, empty namespace with default settings.
	must(e.EncodeStore(w.ctx("alpha"), &memory.EncodeStoreRequest{Content: memory.TextContent("alpha again")}))(t)
	fresh := fmt.Sprint(e.modes(nil))
	if got := w.observe("alpha"); len(got.ids) != 1 || got.modes != fresh {
		t.Errorf("the new alpha: %d records, modes %s", len(got.ids), got.modes)
	}
	req := memory.DefaultRecallQueryRequest()
	req.Cue.Text = ptr("deploy pipeline staging")
	if r := must(e.RecallQuery(w.ctx("alpha"), &req))(t); len(r.Memories) != 0 {
		t.Errorf("the new alpha recalls %d of the dropped one's records", len(r.Memories))
	}

	// The default namespace is emptied and reset, and stays.
	if err := e.SetMode(ctx, &memory.SetModeRequest{Mode: memory.ModePerfect}); err != nil {
		t.Fatal(err)
	}
	must(e.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: ptr(uint32(86400))}))(t)
	resp = must(e.DropNamespace(ctx, &memory.DropNamespaceRequest{Name: memory.DefaultNamespace, Confirm: true}))(t)
	if resp.RecordsDeleted == 0 {
		t.Errorf("dropping default deleted nothing: %+v", resp)
	}
	for _, when := range []string{"after the drop", "after a restart"} {
		if when != "after the drop" {
			w.h.reopen()
			e = w.h.e
		}
		o := w.observe(memory.DefaultNamespace)
		if len(o.ids) != 0 || len(o.rawTexts) != 0 || o.modes != fresh || o.info == "" {
			t.Errorf("default %s: %d records, %d raw entries, modes %s, listed %q", when, len(o.ids), len(o.rawTexts), o.modes, o.info)
		}
		if off := e.defaultSpace().offset.Load(); off != 0 {
			t.Errorf("default's clock offset %s: %v", when, off)
		}
		if d := beta.diff(w.observe("beta")); d != "" {
			t.Errorf("%s: dropping default changed beta:\n%s", when, d)
		}
	}
	r := memory.DefaultRecallQueryRequest()
	r.Cue.Text = ptr("deploy pipeline staging")
	if got := must(e.RecallQuery(ctx, &r))(t); len(got.Memories) != 0 {
		t.Errorf("the emptied default namespace recalls %d records", len(got.Memories))
	}

	// Both drops are in the audit log, naming the namespace.
	if err := e.syncAudit(); err != nil {
		t.Fatal(err)
	}
	var dropped []string
	for _, l := range readAudit(t, w.audit) {
		if l.Operation != audit.OpNamespaceDrop {
			continue
		}
		var s struct {
			Namespace string `json:"namespace"`
			Records   int    `json:"records_deleted"`
		}
		if err := json.Unmarshal(l.Summary, &s); err != nil {
			t.Fatal(err)
		}
		dropped = append(dropped, s.Namespace)
	}
	if !slices.Equal(dropped, []string{"alpha", memory.DefaultNamespace}) {
		t.Errorf("audited drops %v", dropped)
	}
}

// TestNamespacesSurviveRestart: what each namespace holds and its
// settings (modes, clock offset, recall count, last dream tick) come back
// after a restart, each in its own namespace.
func TestNamespacesSurviveRestart(t *testing.T) {
	for _, persist := range []bool{false, true} {
		w := newNSWorldWith(t, Options{PersistIndexes: persist}, "alpha", "beta")
		e := w.h.e
		w.forgetWorking("alpha")
		w.forgetWorking("beta")
		if err := e.SetMode(w.ctx("alpha"), &memory.SetModeRequest{Mode: memory.ModePerfect, Scope: []memory.StoreType{memory.StoreSemantic}}); err != nil {
			t.Fatal(err)
		}
		must(e.DecayTick(w.ctx("beta"), &memory.DecayTickRequest{TickDurationSeconds: ptr(uint32(3 * 86400))}))(t)
		must(e.DreamTick(w.ctx("alpha"), dreamReq()))(t)
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = ptr("deploy staging")
		must(e.RecallQuery(w.ctx("beta"), &req))(t)
		if err := e.syncLinks(context.Background()); err != nil {
			t.Fatal(err)
		}
		alpha, beta := w.observe("alpha"), w.observe("beta")
		if alpha.modes == beta.modes || alpha.stats == beta.stats {
			t.Fatal("the namespaces should differ by now")
		}
		w.h.reopen()
		for name, before := range map[string]observation{"alpha": alpha, "beta": beta} {
			after := w.observe(name)
			// Evolution observations start afresh after a restart.
			before.evolution, after.evolution = "", ""
			before.stats, after.stats = statsWithoutEvolution(t, before.stats), statsWithoutEvolution(t, after.stats)
			if d := before.diff(after); d != "" {
				t.Errorf("persist %v: %s changed over a restart:\n%s", persist, name, d)
			}
		}
	}
}

// forgetWorking forgets the working records of namespace name: they do
// not survive a restart.
func (w *nsWorld) forgetWorking(name string) {
	w.t.Helper()
	yes := true
	working := memory.StoreWorking
	must(w.h.e.Forget(w.ctx(name), &memory.ForgetRequest{Store: &working, Confirm: &yes}))(w.t)
}

func statsWithoutEvolution(t *testing.T, s string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "evolution_metrics")
	return string(must(json.Marshal(m))(t))
}

// TestBackgroundWorkCoversNamespaces: the background decay loop ages every
// namespace, and the background dream loop processes every namespace's
// journal.
func TestBackgroundWorkCoversNamespaces(t *testing.T) {
	w := newNSWorld(t, "alpha", "beta", memory.DefaultNamespace)
	e := w.h.e
	must(e.AdvanceDecay(context.Background()))(t) // starts the clock
	w.h.clock.Advance(10 * 24 * time.Hour)
	resp := must(e.AdvanceDecay(context.Background()))(t)
	var total uint32
	for _, name := range []string{"alpha", "beta", memory.DefaultNamespace} {
		s := must(e.Stats(w.ctx(name)))(t)
		if s.AvgFidelity >= 0.9 {
			t.Errorf("%s did not age: average fidelity %v", name, s.AvgFidelity)
		}
		total += s.TotalRecords - s.RecordsByStore[memory.StoreWorking]
	}
	if resp.RecordsUpdated != total {
		t.Errorf("the background tick updated %d records, the namespaces hold %d", resp.RecordsUpdated, total)
	}
	dream := memory.DefaultDreamTickRequest()
	dr := must(e.DreamAll(context.Background(), &dream))(t)
	if dr.GroupsProcessed < 3 {
		t.Errorf("the background dream processed %d groups", dr.GroupsProcessed)
	}
	for _, name := range []string{"alpha", "beta", memory.DefaultNamespace} {
		s := must(e.Stats(w.ctx(name)))(t)
		if s.RawJournalPendingDream != 0 || s.DreamEpisodicSummaries == 0 {
			t.Errorf("%s after the background dream: %d pending, %d summaries", name, s.RawJournalPendingDream, s.DreamEpisodicSummaries)
		}
	}
}

// TestReadsCreateNoNamespace: reading a namespace that does not exist
// answers as an empty one and leaves nothing behind; writing to an
// invalid name is refused.
func TestReadsCreateNoNamespace(t *testing.T) {
	w := newNSWorld(t, "alpha")
	e, ctx := w.h.e, w.ctx("ghost")
	id := memory.MustParseID(w.observe("alpha").ids[0])
	req := memory.DefaultRecallQueryRequest()
	req.Cue.Text = ptr("deploy")
	if r := must(e.RecallQuery(ctx, &req))(t); len(r.Memories) != 0 {
		t.Errorf("recall in ghost: %+v", r)
	}
	if r := must(e.RecallRaw(ctx, &memory.RecallRawQueryRequest{Limit: 10}))(t); len(r.Records) != 0 {
		t.Errorf("raw recall in ghost: %+v", r)
	}
	if s := must(e.Stats(ctx))(t); s.TotalRecords != 0 {
		t.Errorf("stats of ghost: %+v", s)
	}
	if _, err := e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: id}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("record in ghost: %v", err)
	}
	must(e.DecayTick(ctx, &memory.DecayTickRequest{}))(t)
	must(e.DreamTick(ctx, dreamReq()))(t)
	must(e.Consolidate(ctx, &memory.ConsolidateRequest{Strategy: memory.ConsolidateFull}))(t)
	must(e.Evolution(ctx))(t)
	must(e.RecallTimeline(ctx, &memory.RecallTimelineRequest{Range: memory.TemporalRange{Start: time.Unix(0, 0), End: w.h.clock.Now()}, Granularity: memory.GranularityDay}))(t)
	must(e.RecallGraph(ctx, &memory.RecallGraphRequest{Depth: 1, LimitNodes: 5}))(t)
	if _, ok := w.h.db.LookupNamespace("ghost"); ok {
		t.Error("reading ghost created it")
	}
	for _, n := range must(e.Namespaces(context.Background()))(t).Namespaces {
		if n.Name == "ghost" {
			t.Error("ghost is listed")
		}
	}
	_, err := e.EncodeStore(memory.WithNamespace(context.Background(), "Not Valid"), &memory.EncodeStoreRequest{Content: memory.TextContent("x")})
	wantCode(t, err, memory.CodeValidation, "namespace")
	if got := len(w.h.db.Namespaces()); got != 2 {
		t.Errorf("%d namespaces registered, want default and alpha", got)
	}
}

// TestWritesCreateNamespaces: every operation that writes creates the
// namespace it names, taking the engine's locks in order (the checker
// reports any lock taken out of order, in every build).
func TestWritesCreateNamespaces(t *testing.T) {
	var reports lines
	h := newHarness(t, Options{SimilarLinks: -1, WorkingCapacity: 1, lockReport: reports.report})
	e := h.e
	working := memory.StoreWorking
	raw := memory.DefaultEncodeStoreRawRequest()
	raw.RecordID, raw.SessionID, raw.Content = ptr(memory.MustParseID("0196a9e2-5c1d-7f00-8a00-00000000c001")), "s", memory.TextContent("a raw entry")
	must(e.EncodeStore(context.Background(), &memory.EncodeStoreRequest{Content: memory.TextContent("to export")}))(t)
	var archive bytes.Buffer
	must(e.Export(context.Background(), &memory.ExportRequest{Format: "cma"}, &archive))(t)
	ops := map[string]func(ctx context.Context) error{
		"store": func(ctx context.Context) error {
			_, err := e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: memory.TextContent("a working note"), Store: &working})
			return err
		},
		"batch": func(ctx context.Context) error {
			_, err := e.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: []memory.EncodeStoreRequest{{Content: memory.TextContent("x")}}})
			return err
		},
		"raw with an id": func(ctx context.Context) error {
			_, err := e.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{raw}})
			return err
		},
		"set-mode": func(ctx context.Context) error {
			return e.SetMode(ctx, &memory.SetModeRequest{Mode: memory.ModePerfect})
		},
		"import": func(ctx context.Context) error {
			req := memory.DefaultImportRequest()
			_, err := e.Import(ctx, &req, bytes.NewReader(archive.Bytes()))
			return err
		},
	}
	for name, op := range ops {
		ns := strings.ReplaceAll(name, " ", "-")
		if err := op(memory.WithNamespace(context.Background(), ns)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok := h.db.LookupNamespace(ns); !ok {
			t.Errorf("%s did not create namespace %s", name, ns)
		}
	}
	if got := reports.take(); len(got) > 0 {
		t.Errorf("locks taken out of order:\n%s", strings.Join(got, "\n"))
	}
}
