package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func addFixtureSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fixtures", "*.jsonl"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(referenceLog(f, 5))
}

// FuzzVerify checks that Verify never panics, that it reports every
// failure as a *BrokenError on the line after the verified ones, and that
// rendering the verified entries anew gives exactly the verified bytes.
func FuzzVerify(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var entries []entry
		rep, err := verify(bytes.NewReader(data), func(_ []byte, e *entry) { entries = append(entries, *e) })
		if err != nil {
			be, ok := errors.AsType[*BrokenError](err)
			if !ok {
				t.Fatalf("error %v is not a *BrokenError", err)
			}
			if be.Line != len(entries)+1 || be.Sequence != rep.LastSequence+1 || be.Reason == "" {
				t.Fatalf("broken line %d sequence %d after %d entries", be.Line, be.Sequence, len(entries))
			}
		}
		if rep.Entries != uint64(len(entries)) || rep.LastSequence != rep.Entries {
			t.Fatalf("report %+v for %d entries", rep, len(entries))
		}
		enc := newEncoder()
		var out []byte
		prev := GenesisHash
		for i := range entries {
			body, err := enc.appendBody(nil, &entries[i].ev)
			if err != nil {
				t.Fatalf("verified entry %d does not render: %v", i+1, err)
			}
			out, prev = appendLine(out, body, prev)
		}
		if !bytes.HasPrefix(data, out) {
			t.Fatalf("verified entries render differently:\n%q\n%q", out, data)
		}
		if err == nil && len(out) != len(data) {
			t.Fatalf("verified %d of %d bytes", len(out), len(data))
		}
		if prev != rep.HeadHash {
			t.Fatalf("head %s, rendered %s", rep.HeadHash, prev)
		}
	})
}

// FuzzRender checks that whatever the writer accepts, the verifier accepts
// and parses back to the same values.
func FuzzRender(f *testing.F) {
	f.Add("encode.store", "0190f5d2-8c4e-7a1b-9c3d-2e4f6a8b0c1d", "episodic", []byte(`{"b":1,"a":[true,null,"x"]}`), int64(1777346055), int64(123456789))
	f.Add("a<b>&\u2028\"\\", "\x00\x1f\x7f", "é", []byte(`{"\u00e9":"\ud83d\ude00","n":-1.5e-3}`), int64(0), int64(1))
	f.Add("x", "", "", []byte(` null `), int64(-62135596800), int64(0))
	f.Fuzz(func(t *testing.T, op, id, store string, summary []byte, sec, nsec int64) {
		ev := Event{
			Sequence:   1,
			Time:       time.Unix(sec, nsec),
			Operation:  op,
			RecordIDs:  []string{id, id},
			StoreTypes: []string{store},
			Summary:    summary,
		}
		enc := newEncoder()
		body, err := enc.appendBody(nil, &ev)
		if err != nil {
			return // refused
		}
		line, hash := appendLine(nil, body, GenesisHash)
		var got []entry
		rep, err := verify(bytes.NewReader(line), func(_ []byte, e *entry) { got = append(got, *e) })
		if err != nil {
			t.Fatalf("writer output does not verify: %v\n%s", err, line)
		}
		if rep.HeadHash != hash || len(got) != 1 {
			t.Fatalf("report %+v", rep)
		}
		e := got[0].ev
		if !e.Time.Equal(ev.Time) || e.Operation != op || !slices.Equal(e.RecordIDs, ev.RecordIDs) || !slices.Equal(e.StoreTypes, ev.StoreTypes) {
			t.Fatalf("parsed %+v, wrote %+v", e, ev)
		}
		canon, err := enc.appendSummary(nil, summary)
		if err != nil || !bytes.Equal(e.Summary, canon) {
			t.Fatalf("summary %s, canonical %s, %v", e.Summary, canon, err)
		}
		again, err := enc.appendSummary(nil, canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("canonical summary not stable: %s -> %s, %v", canon, again, err)
		}
	})
}
