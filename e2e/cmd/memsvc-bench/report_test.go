package main

import (
	"strings"
	"testing"
)

// Budget names in the order budgets reports them.
const (
	bStore  = "store p50 under 2 ms, synced"
	bRaw    = "raw batch ingest of 1,000 entries under 100 ms"
	bRecall = "recall p50 under 10 ms at 100,000 records (text)"
	bVector = "vector scan at memory bandwidth"
	bStart  = "start-up under 2 s at 100,000 records"
	bMemory = "memory under 1 KiB of overhead per record beyond its content"
)

const missed = "**missed**"

// size is a hand-made corpus size with rows of the given p50s.
func size(records int, p50 map[string]float64) *sizeReport {
	s := &sizeReport{Records: records}
	for op, v := range p50 {
		s.add(row{Operation: op, Records: records, Ops: 1, P50ms: v, P95ms: v, P99ms: v})
	}
	return s
}

// withMemory gives s a memory report whose growth per record is
// loadedPer after load and restartPer after a cold start (0: no cold
// start measured), over content bytes of content per record.
func withMemory(s *sizeReport, loadedPer, restartPer int64, content float64) *sizeReport {
	const empty = 50 << 20
	n := int64(s.Records)
	s.Memory = &memReport{EmptyRSS: empty, LoadedRSS: empty + n*loadedPer, LoadedRecords: s.Records, ContentBytes: content}
	if restartPer > 0 {
		s.Memory.RestartRSS, s.Memory.RestartRecords = empty+n*restartPer, s.Records
	}
	return s
}

func budgetByName(t *testing.T, bs []budget, name string) budget {
	t.Helper()
	for _, b := range bs {
		if b.Budget == name {
			return b
		}
	}
	t.Fatalf("no budget %q in %+v", name, bs)
	return budget{}
}

// TestBudgetsNothingMeasured: every budget is listed, in order, and a
// report without the runs a budget needs says so rather than judging.
func TestBudgetsNothingMeasured(t *testing.T) {
	bs := (&report{}).budgets()
	want := []string{bStore, bRaw, bRecall, bVector, bStart, bMemory}
	if len(bs) != len(want) {
		t.Fatalf("%d budgets, want %d: %+v", len(bs), len(want), bs)
	}
	for i, name := range want {
		if bs[i].Budget != name || bs[i].Verdict != notMeasured {
			t.Errorf("budget %d: %+v, want %q not measured", i, bs[i], name)
		}
	}
	for _, name := range []string{bRecall, bStart, bMemory} {
		if got := budgetByName(t, bs, name).Measured; got != "no run of 100,000 records or more" {
			t.Errorf("%s: measured %q", name, got)
		}
	}
	if got := budgetByName(t, bs, bVector).Measured; got != "no run of 100,000 records or more with --embeddings" {
		t.Errorf("vector: measured %q", got)
	}

	// Sizes below 100,000 records leave the large-corpus budgets
	// unjudged, however good their numbers.
	small := withMemory(size(99_999, map[string]float64{opRecallText: 0.1, opColdStart: 1, opLoad: 1}), 10, 10, 5)
	small.VectorBytes = 1e9
	small.add(row{Operation: opRecallVector, Records: small.Records, Ops: 1, P50ms: 1})
	bs = (&report{Sizes: []*sizeReport{small}, MemBandwidth: 1e9}).budgets()
	for _, name := range []string{bRecall, bVector, bStart, bMemory} {
		if v := budgetByName(t, bs, name).Verdict; v != notMeasured {
			t.Errorf("%s judged %q on 99,999 records", name, v)
		}
	}
}

// TestBudgetVerdicts puts each budget's measurement just under and at its
// limit: the limits are strict ("under"), so the limit itself is missed.
func TestBudgetVerdicts(t *testing.T) {
	tests := []struct {
		name     string
		sizes    []*sizeReport
		budget   string
		verdict  string
		measured string // a part of the measured column
	}{
		{"store just under", []*sizeReport{size(1000, map[string]float64{opStore: 1.999})}, bStore, "met", "p50 1.999 ms (worst size: 1,000 records)"},
		{"store at the limit", []*sizeReport{size(1000, map[string]float64{opStore: 2})}, bStore, missed, "p50 2.00 ms"},
		{"store judged by the worst size", []*sizeReport{
			size(1000, map[string]float64{opStore: 2.5}), size(100_000, map[string]float64{opStore: 0.5}),
		}, bStore, missed, "worst size: 1,000 records"},

		{"raw just under", []*sizeReport{size(1000, map[string]float64{opRaw: 99.99})}, bRaw, "met", "p50 99.99 ms"},
		{"raw at the limit", []*sizeReport{size(1000, map[string]float64{opRaw: 100})}, bRaw, missed, "p50 100 ms"},
		{"raw judged by the worst size", []*sizeReport{
			size(1000, map[string]float64{opRaw: 20}), size(10_000, map[string]float64{opRaw: 150}),
		}, bRaw, missed, "worst size: 10,000 records"},

		{"recall just under", []*sizeReport{size(100_000, map[string]float64{opRecallText: 9.99})}, bRecall, "met", "p50 9.99 ms at 100,000 records"},
		{"recall at the limit", []*sizeReport{size(100_000, map[string]float64{opRecallText: 10})}, bRecall, missed, "p50 10.0 ms"},
		{"recall judged at the first large size", []*sizeReport{
			size(1000, map[string]float64{opRecallText: 50}),
			size(100_000, map[string]float64{opRecallText: 5}),
			size(1_000_000, map[string]float64{opRecallText: 50}),
		}, bRecall, "met", "at 100,000 records"},
		{"recall missing at the first large size", []*sizeReport{
			size(100_000, map[string]float64{opStore: 1}),
			size(1_000_000, map[string]float64{opRecallText: 1}),
		}, bRecall, notMeasured, "no run of 100,000"},

		{"start-up just under", []*sizeReport{size(100_000, map[string]float64{opColdStart: 1999.9})}, bStart, "met", "p50 1,999.9 ms"},
		{"start-up at the limit", []*sizeReport{size(100_000, map[string]float64{opColdStart: 2000})}, bStart, missed, "at 100,000 records"},

		{"memory just under", []*sizeReport{withMemory(size(100_000, map[string]float64{opLoad: 1}), 500+1023, 500+1023, 500)}, bMemory, "met", "1,523 B per record"},
		{"memory at the limit", []*sizeReport{withMemory(size(100_000, map[string]float64{opLoad: 1}), 500+1024, 500, 500)}, bMemory, missed, "= 1,024 B at 100,000 records"},
		{"memory judged by the higher of load and cold start", []*sizeReport{
			withMemory(size(100_000, map[string]float64{opLoad: 1}), 1000, 1600, 500),
		}, bMemory, missed, "1,600 B per record"},
		{"memory without a cold start", []*sizeReport{withMemory(size(100_000, map[string]float64{opLoad: 1}), 10, 0, 500)}, bMemory, notMeasured, "no run of 100,000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := budgetByName(t, (&report{Sizes: tc.sizes}).budgets(), tc.budget)
			if got.Verdict != tc.verdict || !strings.Contains(got.Measured, tc.measured) {
				t.Errorf("%+v, want verdict %q and measured containing %q", got, tc.verdict, tc.measured)
			}
		})
	}
}

// vectorSize is a size whose vector recall has the given p50 over
// vectorBytes of vectors.
func vectorSize(records int, vectorBytes, p50 float64) *sizeReport {
	s := size(records, map[string]float64{opRecallVector: p50})
	s.VectorBytes = vectorBytes
	return s
}

// TestVectorBudget: the scan rate is met at half the memory bandwidth or
// more. Between two sizes the fixed cost of a request cancels out; the
// numbers are chosen so the arithmetic is exact in float64.
func TestVectorBudget(t *testing.T) {
	const bw = 1e10 // bytes per second; half of it is 5e9
	tests := []struct {
		name     string
		r        report
		verdict  string
		measured []string
	}{
		{"no bandwidth measured", report{MemBandwidth: 0, Sizes: []*sizeReport{vectorSize(100_000, 1.25e9, 1)}}, notMeasured,
			[]string{"with --embeddings"}},
		{"no vectors at the large size", report{MemBandwidth: bw, Sizes: []*sizeReport{
			vectorSize(10_000, 1.25e8, 10), size(100_000, map[string]float64{opRecallVector: 250}),
		}}, notMeasured, []string{"no run of 100,000 records or more with --embeddings"}},
		{"one size at exactly half", report{MemBandwidth: bw, Sizes: []*sizeReport{vectorSize(100_000, 1.25e9, 250)}}, "met",
			[]string{"5.0 GB/s for the whole request", "= 50% of the 10.0 GB/s"}},
		{"one size just below half", report{MemBandwidth: bw + 2, Sizes: []*sizeReport{vectorSize(100_000, 1.25e9, 250)}}, missed,
			[]string{"5.0 GB/s for the whole request"}},
		// Whole requests give 1.375e9 B / 0.3 s = 4.6 GB/s, below half;
		// the scan alone gives 1.25e9 B / 0.25 s = 5 GB/s.
		{"two sizes, scan alone at exactly half", report{MemBandwidth: bw, Sizes: []*sizeReport{
			vectorSize(10_000, 1.25e8, 50), vectorSize(100_000, 1.375e9, 300),
		}}, "met", []string{"4.6 GB/s for the whole request", "scan alone (extra bytes over extra time from 10,000 records, p50 50.0 ms): 5.0 GB/s"}},
		{"two sizes, scan alone just below half", report{MemBandwidth: bw + 2, Sizes: []*sizeReport{
			vectorSize(10_000, 1.25e8, 50), vectorSize(100_000, 1.375e9, 300),
		}}, missed, []string{"scan alone"}},
		{"two sizes, the larger no slower", report{MemBandwidth: bw, Sizes: []*sizeReport{
			vectorSize(10_000, 1.25e8, 300), vectorSize(100_000, 1.25e9, 250),
		}}, "met", []string{"5.0 GB/s for the whole request = 50%"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.r.vectorBudget(100_000, "no run of 100,000 records or more")
			if got.Budget != bVector || got.Verdict != tc.verdict {
				t.Errorf("%+v, want verdict %q", got, tc.verdict)
			}
			for _, m := range tc.measured {
				if !strings.Contains(got.Measured, m) {
					t.Errorf("measured %q lacks %q", got.Measured, m)
				}
			}
			if tc.name == "two sizes, the larger no slower" && strings.Contains(got.Measured, "scan alone") {
				t.Errorf("a scan rate from a negative time difference: %q", got.Measured)
			}
		})
	}
}
