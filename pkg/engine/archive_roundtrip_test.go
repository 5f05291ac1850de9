package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// populateEveryKind fills h with curated records in every store, each with
// its own mix of the optional parts (emotion, embeddings, several blocks, a
// summary, metadata, meta-memory, manual and similarity associations), and
// with raw journal entries of every visibility and secrecy, some of them
// already dreamt into summaries. Records are also updated, recalled and
// decayed so that versions, access counts and fidelity are not defaults.
func populateEveryKind(t *testing.T, h *harness) {
	t.Helper()
	ctx := context.Background()
	loadTranscript(t, h, "roundtrip")
	if _, err := h.e.DreamTick(ctx, dreamReq()); err != nil {
		t.Fatal(err)
	}
	sealed := rawReq("roundtrip-2", "a sealed note about the on-call rota")
	sealed.Visibility, sealed.SecrecyLevel, sealed.Speaker = memory.VisibilitySealed, memory.SecrecySecret, memory.SpeakerTool
	sealed.TurnID, sealed.TopicID = ptr("turn-9"), ptr("rota")
	sealed.Metadata = memory.JSON(`{"tool":"pager","attempt":2}`)
	sealed.Meta = &memory.MetaMemory{SchemaVersion: 1, CaptureStatus: memory.CaptureProvided, Intent: ptr("keep the rota private"), Tags: []string{"ops"}}
	if _, err := h.e.EncodeStoreRaw(ctx, &sealed); err != nil {
		t.Fatal(err)
	}

	anchor := h.store("the deploy pipeline runs on self-hosted runners", memory.StoreSemantic)
	captured := time.Date(2026, 2, 27, 9, 30, 0, 0, time.UTC)
	summary := "why the cache is write-through"
	fear, err := memory.ParseEmotionLabel("fear")
	if err != nil {
		t.Fatal(err)
	}
	requests := []memory.EncodeStoreRequest{{
		Content: memory.MemoryContent{Blocks: []memory.ContentBlock{
			{Modality: memory.ModalityText, Format: "text/markdown", Data: memory.Bytes("the cache is **write-through**"), Embedding: []float32{0.25, -0.5, 1}},
			{Modality: memory.ModalityImage, Format: "image/png", Data: memory.Bytes{0x89, 'P', 'N', 'G', 0, 0xff}},
		}, Summary: &summary},
		Store:        ptr(memory.StoreEpisodic),
		Emotion:      &memory.EmotionVector{Joy: 0.4, Trust: 0.7, Anticipation: 0.2, Intensity: 0.6, Valence: 0.5},
		Metadata:     memory.JSON(`{"project":"memsvc","ticket":412,"labels":["cache","design"]}`),
		Associations: []memory.ManualAssociation{{TargetID: anchor, AssociationType: memory.AssocCausal, Weight: 0.8}},
		Meta: &memory.MetaMemory{
			SchemaVersion: 1, CaptureStatus: memory.CaptureProvided,
			Intent: ptr("pick a cache policy"), Rationale: ptr("reads dominate and staleness is costly"),
			Trigger: ptr("design review"), Goals: []string{"fresh reads"}, Assumptions: []string{"writes are rare"},
			Evidence: []memory.MetaEvidenceRef{{RecordID: &anchor, Label: ptr("runner note"), Confidence: ptr(0.9)}},
			Alternatives: []memory.MetaAlternative{
				{Option: "write-back", Reason: ptr("loses writes on crash")},
				{Option: "write-through", Chosen: true},
			},
			Decision: ptr("write-through"), Confidence: ptr(0.75), SourceRecordIDs: []memory.ID{anchor},
			ContextEdges: []memory.MetaEdge{{TargetID: anchor, Relation: memory.RelSupports, Rationale: ptr("same pipeline"), CreatedAt: &captured}},
			Tags:         []string{"cache", "design"}, CapturedAt: &captured,
		},
	}, {
		Content: memory.TextContent("to rotate the signing key run make rotate-key then redeploy"),
		Store:   ptr(memory.StoreProcedural),
		Associations: []memory.ManualAssociation{
			{TargetID: anchor, AssociationType: memory.AssocSequential, Weight: 0.5},
		},
	}, {
		Content: memory.TextContent("the outage last spring was frightening"),
		Store:   ptr(memory.StoreEmotional),
		Emotion: &fear,
	}, {
		Content: memory.TextContent("self-hosted runners need the docker socket"),
		Store:   ptr(memory.StoreSemantic),
	}, {
		Content: memory.TextContent("currently reviewing pull request 77"),
		Store:   ptr(memory.StoreWorking),
		Meta:    &memory.MetaMemory{SchemaVersion: 1, CaptureStatus: memory.CaptureInferred, Goals: []string{"finish the review"}},
	}}
	var ids []memory.ID
	for i := range requests {
		h.clock.Advance(time.Minute)
		resp, err := h.e.EncodeStore(ctx, &requests[i])
		if err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
		ids = append(ids, resp.RecordID)
	}
	vecRecord(h, "runner capacity planning", []float32{0.3, 0.1, 0.9})

	// A second version, an access, decay and similarity links.
	h.clock.Advance(time.Hour)
	if err := h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: ids[1], Metadata: memory.JSON(`{"reviewed":true}`)}); err != nil {
		t.Fatal(err)
	}
	q := textQuery("runners")
	q.Reconsolidate = true
	if _, err := h.e.RecallQuery(ctx, &q); err != nil {
		t.Fatal(err)
	}
	tick(t, h, 2*day)
	if err := h.e.syncLinks(ctx); err != nil {
		t.Fatal(err)
	}
}

// curatedRecords returns every curated record of h, working store
// included, as h's introspection presents it, keyed by id.
func curatedRecords(t *testing.T, h *harness) map[memory.ID]*memory.MemoryRecord {
	t.Helper()
	var ids []memory.ID
	for _, st := range memory.PersistentStores() {
		if err := h.db.ScanRecords(store.DefaultNS, st, func(rec *memory.MemoryRecord) error { ids = append(ids, rec.ID); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	ns := h.e.defaultSpace()
	h.e.mu.RLock()
	for _, rec := range ns.working.all() {
		ids = append(ids, rec.ID)
	}
	h.e.mu.RUnlock()
	out := make(map[memory.ID]*memory.MemoryRecord, len(ids))
	for _, id := range ids {
		out[id] = h.record(id)
	}
	return out
}

// rawRecords returns every raw journal entry of h as stored, keyed by id.
func rawRecords(t *testing.T, h *harness) map[memory.ID]*memory.RawJournalRecord {
	t.Helper()
	out := map[memory.ID]*memory.RawJournalRecord{}
	if err := h.db.ScanRaw(store.DefaultNS, func(r *memory.RawJournalRecord) error { out[r.ID] = r; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// scoreTolerance absorbs the rounding of the decay age an importer derives
// from the archived score (the archive carries the score, not the clock).
const scoreTolerance = 1e-12

// comparable returns rec's JSON with the fields that an archive does not
// carry verbatim set to zero: the score and noise level, which sameCurated
// compares with scoreTolerance.
func comparable(t *testing.T, rec *memory.MemoryRecord) string {
	t.Helper()
	c := *rec
	c.Fidelity.Score, c.Fidelity.NoiseLevel = 0, 0
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameCurated fails unless got holds exactly the records of want, field for
// field.
func sameCurated(t *testing.T, when string, want, got map[memory.ID]*memory.MemoryRecord) {
	t.Helper()
	sameSet(t, when, "curated record", want, got, func(id memory.ID, w, g *memory.MemoryRecord) {
		if math.Abs(g.Fidelity.Score-w.Fidelity.Score) > scoreTolerance || math.Abs(g.Fidelity.NoiseLevel-w.Fidelity.NoiseLevel) > scoreTolerance {
			t.Errorf("%s: fidelity of %s was %v (noise %v), is %v (noise %v)", when, id,
				w.Fidelity.Score, w.Fidelity.NoiseLevel, g.Fidelity.Score, g.Fidelity.NoiseLevel)
		}
		if cw, cg := comparable(t, w), comparable(t, g); cw != cg {
			t.Errorf("%s: curated record %s changed:\n%s", when, id, jsonDiff(cw, cg))
		}
	})
}

// sameRaw fails unless got holds exactly the raw entries of want, each with
// identical JSON.
func sameRaw(t *testing.T, when string, want, got map[memory.ID]*memory.RawJournalRecord) {
	t.Helper()
	sameSet(t, when, "raw entry", want, got, func(id memory.ID, w, g *memory.RawJournalRecord) {
		jw, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		jg, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(jw, jg) {
			t.Errorf("%s: raw entry %s changed:\n%s", when, id, jsonDiff(string(jw), string(jg)))
		}
	})
}

// sameSet fails for every id missing from got or new in it, and compares
// the others with same.
func sameSet[T any](t *testing.T, when, kind string, want, got map[memory.ID]T, same func(id memory.ID, w, g T)) {
	t.Helper()
	for id, w := range want {
		if g, ok := got[id]; ok {
			same(id, w, g)
		} else {
			t.Errorf("%s: %s %s missing", when, kind, id)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("%s: %s %s appeared", when, kind, id)
		}
	}
}

// jsonDiff lists the paths at which two JSON documents differ, with both
// values, so that a failure names the field instead of printing two
// records.
func jsonDiff(a, b string) string {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return "before " + a + "\nafter  " + b
	}
	var out strings.Builder
	var walk func(path string, x, y any)
	walk = func(path string, x, y any) {
		mx, okx := x.(map[string]any)
		my, oky := y.(map[string]any)
		if okx && oky {
			keys := maps.Clone(mx)
			maps.Copy(keys, my)
			for _, k := range slices.Sorted(maps.Keys(keys)) {
				walk(path+"."+k, mx[k], my[k])
			}
			return
		}
		ax, okx := x.([]any)
		ay, oky := y.([]any)
		if okx && oky && len(ax) == len(ay) {
			for i := range ax {
				walk(fmt.Sprintf("%s[%d]", path, i), ax[i], ay[i])
			}
			return
		}
		jx, _ := json.Marshal(x)
		jy, _ := json.Marshal(y)
		if !bytes.Equal(jx, jy) {
			fmt.Fprintf(&out, "  %s: %s became %s\n", path, jx, jy)
		}
	}
	walk("", va, vb)
	return out.String()
}

// TestArchiveRoundTripIdentity is the round trip: export, import
// into an empty directory, and every curated record and raw entry is
// identical field for field (ids, content, fidelity, emotion, associations,
// metadata, meta-memory; see comparable for the two derived fields), for a
// plaintext and an encrypted archive; without the raw journal the curated
// records are still identical and no raw entry arrives.
func TestArchiveRoundTripIdentity(t *testing.T) {
	src := newHarness(t, Options{ArchiveKDF: testKDF})
	populateEveryKind(t, src)
	wantCurated, wantRaw := curatedRecords(t, src), rawRecords(t, src)

	// The fixture must cover what the round trip claims to keep.
	stores := map[memory.StoreType]bool{}
	var assocs, embeddings, metas, emotions, decayed int
	for _, rec := range wantCurated {
		stores[rec.Store] = true
		assocs += len(rec.Associations)
		if rec.Content.Embedding() != nil {
			embeddings++
		}
		if rec.Meta.Intent != nil {
			metas++
		}
		if rec.Emotion.Intensity > 0 {
			emotions++
		}
		if rec.Fidelity.Score < 1 {
			decayed++
		}
	}
	var sealed, secret, derived int
	for _, r := range wantRaw {
		if r.Visibility == memory.VisibilitySealed {
			sealed++
		}
		if r.SecrecyLevel == memory.SecrecySecret {
			secret++
		}
		if len(r.DerivedMemoryIDs) > 0 {
			derived++
		}
	}
	if len(stores) != len(memory.AllStores()) || assocs == 0 || embeddings == 0 || metas == 0 || emotions == 0 || decayed == 0 ||
		sealed == 0 || secret < 2 || derived == 0 {
		t.Fatalf("fixture does not cover every kind: stores %v, associations %d, embeddings %d, meta %d, emotion %d, decayed %d, sealed %d, secret %d, dreamt %d",
			stores, assocs, embeddings, metas, emotions, decayed, sealed, secret, derived)
	}

	persistent := maps.Clone(wantCurated)
	maps.DeleteFunc(persistent, func(_ memory.ID, rec *memory.MemoryRecord) bool { return rec.Store == memory.StoreWorking })

	key := "round trip passphrase"
	tests := []struct {
		name    string
		export  memory.ExportRequest
		decrypt *string
		withRaw bool
	}{
		{"plain with raw journal", memory.ExportRequest{Format: "cma", IncludeRawJournal: true, IncludeSealed: true, IncludeSecret: true}, nil, true},
		{"encrypted with raw journal", memory.ExportRequest{Format: "cma", IncludeRawJournal: true, IncludeSealed: true, IncludeSecret: true, Encrypt: true, EncryptionKey: &key}, &key, true},
		{"plain without raw journal", memory.ExportRequest{Format: "cma"}, nil, false},
		{"encrypted without raw journal", memory.ExportRequest{Format: "cma", Encrypt: true, EncryptionKey: &key}, &key, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, resp := exportBytes(t, src, tt.export)
			if got := archive.Detect(data) == archive.FormatEncrypted; got != tt.export.Encrypt {
				t.Fatalf("archive encrypted = %v, want %v", got, tt.export.Encrypt)
			}
			wantCount := len(wantCurated)
			if tt.withRaw {
				wantCount += len(wantRaw)
			}
			if int(resp.RecordCount) != wantCount {
				t.Fatalf("exported %d records, want %d", resp.RecordCount, wantCount)
			}
			dst := newHarness(t, Options{})
			// The import happens after the export, as it would on one
			// machine: a tick later than the importer's clock is capped.
			dst.clock.Advance(src.clock.Now().Sub(dst.clock.Now()) + time.Minute)
			got, err := importBytes(t, dst, data, func(r *memory.ImportRequest) { r.DecryptionKey = tt.decrypt })
			if err != nil || int(got.RecordsImported) != wantCount {
				t.Fatalf("import: %+v %v", got, err)
			}
			sameCurated(t, "after import", wantCurated, curatedRecords(t, dst))
			if tt.withRaw {
				sameRaw(t, "after import", wantRaw, rawRecords(t, dst))
			} else if n := len(rawRecords(t, dst)); n != 0 {
				t.Errorf("%d raw entries imported from an archive without the raw journal", n)
			}
			// The copy is durable: the same after a restart, except for the
			// working store, which lives in memory only.
			dst.reopen()
			sameCurated(t, "after reopen", persistent, curatedRecords(t, dst))
			if tt.withRaw {
				sameRaw(t, "after reopen", wantRaw, rawRecords(t, dst))
			}
		})
	}
}
