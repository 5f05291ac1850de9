package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// archiveEntries reads a plaintext archive fully (so it is verified) and
// returns its curated records in archive order and its raw entry ids.
func archiveEntries(t *testing.T, data []byte) (curated []*memory.MemoryRecord, raw []memory.ID) {
	t.Helper()
	curated, raws := archiveRecords(t, data)
	for _, r := range raws {
		raw = append(raw, r.ID)
	}
	return curated, raw
}

// archiveRecords reads the curated records and raw entries of an archive.
func archiveRecords(t *testing.T, data []byte) (curated []*memory.MemoryRecord, raw []*memory.RawJournalRecord) {
	t.Helper()
	entries, _ := readArchive(t, data)
	for _, ent := range entries {
		if ent.Record != nil {
			curated = append(curated, ent.Record)
		} else {
			raw = append(raw, ent.Raw)
		}
	}
	return curated, raw
}

// TestExportStoreFilter: a store list exports exactly the records of those
// stores, in the order the list names them, each store once, and the raw
// journal only when asked for.
func TestExportStoreFilter(t *testing.T) {
	h := newHarness(t, Options{SimilarLinks: -1})
	ctx := context.Background()
	byStore := map[memory.StoreType][]memory.ID{}
	for _, st := range memory.AllStores() {
		for _, text := range []string{"first " + st.String() + " note", "second " + st.String() + " note"} {
			byStore[st] = append(byStore[st], h.store(text, st))
		}
	}
	var rawIDs []memory.ID
	for _, text := range []string{"raw one", "raw two"} {
		r := rawReq("filter", text)
		resp, err := h.e.EncodeStoreRaw(ctx, &r)
		if err != nil {
			t.Fatal(err)
		}
		rawIDs = append(rawIDs, resp.RecordID)
	}

	storesOf := func(recs []*memory.MemoryRecord) []memory.StoreType {
		var out []memory.StoreType
		for _, rec := range recs {
			if len(out) == 0 || out[len(out)-1] != rec.Store {
				out = append(out, rec.Store)
			}
		}
		return out
	}
	sortedIDs := func(recs []*memory.MemoryRecord) []memory.ID {
		var out []memory.ID
		for _, rec := range recs {
			out = append(out, rec.ID)
		}
		slices.SortFunc(out, compareIDs)
		return out
	}
	want := slices.Concat(byStore[memory.StoreProcedural], byStore[memory.StoreSemantic])
	slices.SortFunc(want, compareIDs)

	for _, withRaw := range []bool{false, true} {
		data, resp := exportBytes(t, h, memory.ExportRequest{Format: "cma", IncludeRawJournal: withRaw,
			Stores: []memory.StoreType{memory.StoreProcedural, memory.StoreSemantic, memory.StoreProcedural}})
		curated, raw := archiveEntries(t, data)
		if got := sortedIDs(curated); !slices.Equal(got, want) {
			t.Errorf("raw=%v: exported records %v, want the procedural and semantic ones %v", withRaw, got, want)
		}
		if got := storesOf(curated); !slices.Equal(got, []memory.StoreType{memory.StoreProcedural, memory.StoreSemantic}) {
			t.Errorf("raw=%v: store order in the archive %v, want procedural then semantic", withRaw, got)
		}
		wantRaw := []memory.ID(nil)
		if withRaw {
			wantRaw = rawIDs
		}
		slices.SortFunc(raw, compareIDs)
		slices.SortFunc(wantRaw, compareIDs)
		if !slices.Equal(raw, wantRaw) {
			t.Errorf("raw=%v: raw entries %v, want %v", withRaw, raw, wantRaw)
		}
		if int(resp.RecordCount) != len(want)+len(wantRaw) {
			t.Errorf("raw=%v: record_count %d, want %d", withRaw, resp.RecordCount, len(want)+len(wantRaw))
		}
	}

	// Without a list: every store, working included, in the canonical order.
	data, _ := exportBytes(t, h, memory.ExportRequest{Format: "cma"})
	curated, _ := archiveEntries(t, data)
	if got := storesOf(curated); !slices.Equal(got, memory.AllStores()) || len(curated) != 2*len(memory.AllStores()) {
		t.Errorf("unfiltered export: %d records from stores %v", len(curated), got)
	}

	_, err := h.e.Export(ctx, &memory.ExportRequest{Format: "cma", Stores: []memory.StoreType{memory.StoreSemantic, 99}}, io.Discard)
	wantCode(t, err, memory.CodeValidation, "stores[1]")
}

// TestExportEmptyStoreList pins what an explicit "stores": [] means over
// the API: no curated store. With the raw journal that is a raw-only
// archive; without it the request is refused instead of producing an
// archive with nothing in it, while "stores": null still means all stores.
func TestExportEmptyStoreList(t *testing.T) {
	h := newHarness(t, Options{})
	ctx := context.Background()
	h.store("a curated note", memory.StoreSemantic)
	r := rawReq("empty-list", "a raw note")
	rawResp, err := h.e.EncodeStoreRaw(ctx, &r)
	if err != nil {
		t.Fatal(err)
	}
	decode := func(body string) memory.ExportRequest {
		t.Helper()
		var req memory.ExportRequest
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		return req
	}

	var out bytes.Buffer
	_, err = h.e.Export(ctx, ptr(decode(`{"stores":[]}`)), &out)
	wantCode(t, err, memory.CodeValidation, "stores: an empty list")
	if out.Len() != 0 {
		t.Fatalf("a refused export wrote %d bytes", out.Len())
	}

	data, _ := exportBytes(t, h, decode(`{"stores":[],"include_raw_journal":true}`))
	curated, raw := archiveEntries(t, data)
	if len(curated) != 0 || !slices.Equal(raw, []memory.ID{rawResp.RecordID}) {
		t.Fatalf("raw-only export: %d curated, raw %v", len(curated), raw)
	}

	data, _ = exportBytes(t, h, decode(`{"stores":null}`))
	if curated, _ := archiveEntries(t, data); len(curated) != 1 {
		t.Fatalf(`"stores": null exported %d records, want all (1)`, len(curated))
	}
}
