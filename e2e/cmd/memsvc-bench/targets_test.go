package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// verdictOf returns the verdict and measurement of the target whose name
// starts with prefix.
func verdictOf(t *testing.T, bs []budget, prefix string) budget {
	t.Helper()
	var found []budget
	for _, b := range bs {
		if strings.HasPrefix(b.Budget, prefix) {
			found = append(found, b)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d targets named %q..., want 1: %+v", len(found), prefix, bs)
	}
	return found[0]
}

// TestTargetVerdictsNothingMeasured: every target of the issue is listed
// and, with nothing measured, says so.
func TestTargetVerdictsNothingMeasured(t *testing.T) {
	sc := fullScale()
	bs := (&targetsReport{}).verdicts(&sc)
	if len(bs) != 16 {
		t.Fatalf("%d targets, want 16: %+v", len(bs), bs)
	}
	for _, b := range bs {
		if b.Verdict != notMeasured || b.Measured != "—" {
			t.Errorf("%+v: want not measured", b)
		}
	}
	for _, prefix := range []string{
		"text recall p50 at 20,000 records at most 3×", "text recall p50 at 100,000 records at most 3×",
		"hybrid recall, 64 dims, p50 at 20,000 records at most 5×", "hybrid recall, 384 dims, p50 at 20,000 records at most 5×",
		"recall without a query p50 at 20,000", "recall without a query p50 at 100,000",
		"store p50 at 100,000 records at most 1.5× the p50 at 2,000",
		"48 concurrent recall clients over 40,000 records: p99 under 50 ms",
		"recall during a full consolidation of 40,000 records within 50 ms", "full consolidation of 40,000 records under 1 minute",
		"16 concurrent clients store at least 5×", "cold start at 100,000 records under 1 s",
		"cold start without persisted search indexes at 100,000 records under 1 s",
		"encrypted embedded CLI command at 20,000 records at most 1.5× the unencrypted one",
		"MCP search p50 at 2,000 notes at least 10×", "MCP search p50 at 10,000 notes at least 30×",
	} {
		verdictOf(t, bs, prefix)
	}
}

// TestTargetVerdictsJudge: each measured target is judged against its
// own limit, on the side of the limit the issue puts it.
func TestTargetVerdictsJudge(t *testing.T) {
	sc := fullScale()
	paired := func(op string, n int, p50, health float64) pairedRow {
		return pairedRow{row: row{Operation: op, Records: n, Ops: 1, P50ms: p50}, HealthP50ms: health, Ratio: p50 / health}
	}
	r := &targetsReport{
		Rows: []pairedRow{
			paired(opStore, 2000, 1.0, 0.2),
			paired(opRecallText, 20_000, 0.6, 0.2),   // 3×: met
			paired(opRecallText, 100_000, 0.62, 0.2), // 3.1×: missed
			paired(hybridOp(64), 20_000, 1.0, 0.2),   // 5×: met
			paired(hybridOp(384), 20_000, 1.2, 0.2),  // 6×: missed
			paired(opRecallNoQuery, 20_000, 0.4, 0.2),
			paired(opStore, 100_000, 1.6, 0.2), // 1.6× of 2,000: missed
		},
		Concurrent:       &crowdResult{Clients: 48, Asked: 10, Recalls: row{Ops: 10, P50ms: 5, P99ms: 49}},
		Consolidation:    &consolidationResult{Records: 40_000, TookMs: 61_000, Recalls: row{Ops: 40, P99ms: 20}, MaxMs: 30},
		Stores:           &storesResult{Clients: 16, Ratio: 5, Single: row{Throughput: 100, Unit: "records/s"}, Concurrent: row{Throughput: 500, Unit: "records/s"}},
		ColdStart:        &row{Operation: opColdStart, Records: 100_020, Ops: 3, P50ms: 1000, P99ms: 1200},
		ColdStartRebuilt: &row{Operation: opColdStart, Records: 100_020, Ops: 3, P50ms: 999, P99ms: 1200},
		Encrypted: &encryptedResult{Records: 20_000, Runs: 5, Commands: []cliPoint{
			cliRun("stats", 100, 150),  // 1.5×: met alone
			cliRun("recall", 100, 151), // 1.51×: the worst, missed
		}},
		MCP: []mcpPoint{
			{Notes: 2000, Ours: &mcpResult{}, Peer: &mcpResult{}, Ratio: 10},
			{Notes: 10_000, Ours: &mcpResult{}, Peer: &mcpResult{}, Ratio: 29.9},
		},
	}
	bs := r.verdicts(&sc)
	for prefix, want := range map[string]string{
		"text recall p50 at 20,000":                   "met",
		"text recall p50 at 100,000":                  missed,
		"hybrid recall, 64 dims":                      "met",
		"hybrid recall, 384 dims":                     missed,
		"recall without a query p50 at 20,000":        "met",
		"recall without a query p50 at 100,000":       notMeasured,
		"store p50 at 100,000":                        missed,
		"48 concurrent recall clients":                "met",
		"recall during a full consolidation":          "met",
		"full consolidation of 40,000 records":        missed,
		"16 concurrent clients store":                 "met",
		"cold start at 100,000":                       missed,
		"cold start without persisted search indexes": "met",
		"encrypted embedded CLI command":              missed,
		"MCP search p50 at 2,000 notes at least 10×":  "met",
		"MCP search p50 at 10,000 notes at least 30×": missed,
	} {
		if got := verdictOf(t, bs, prefix); got.Verdict != want {
			t.Errorf("%s: verdict %q, want %q (%+v)", prefix, got.Verdict, want, got)
		}
	}
	if got := verdictOf(t, bs, "store p50 at 100,000").Measured; got != "1.60× (1.60 ms at 100,000, 1.00 ms at 2,000)" {
		t.Errorf("store measurement %q", got)
	}
	if got, want := verdictOf(t, bs, "encrypted embedded CLI command").Measured,
		"`memsvc stats` 1.50× (150 ms vs 100 ms); `memsvc recall` 1.51× (151 ms vs 100 ms)"; got != want {
		t.Errorf("encrypted CLI measurement %q, want %q", got, want)
	}
	// Every command within the bound meets it; a smaller directory than
	// the target names is no measurement of it.
	r.Encrypted.Commands[1] = cliRun("recall", 100, 120)
	r.ColdStartRebuilt.P50ms = 1000
	bs = r.verdicts(&sc)
	for prefix, want := range map[string]string{
		"encrypted embedded CLI command":              "met",
		"cold start without persisted search indexes": missed,
	} {
		if got := verdictOf(t, bs, prefix); got.Verdict != want {
			t.Errorf("%s: verdict %q, want %q (%+v)", prefix, got.Verdict, want, got)
		}
	}
	r.Encrypted.Records = 500
	if got := verdictOf(t, r.verdicts(&sc), "encrypted embedded CLI command"); got.Verdict != notMeasured {
		t.Errorf("500 records judged as 20,000: %+v", got)
	}

	// A concurrent run cut off by its bound, or a consolidation that had
	// a recall still waiting, misses whatever was answered.
	r.Concurrent.Unfinished = "3 of 10 recalls had not answered"
	r.Consolidation.UnansweredMs = 900
	bs = r.verdicts(&sc)
	for _, prefix := range []string{"48 concurrent recall clients", "recall during a full consolidation"} {
		if got := verdictOf(t, bs, prefix); got.Verdict != missed {
			t.Errorf("%s: %+v, want missed", prefix, got)
		}
	}
}

// cliRun is an embedded command's point with these wall p50s.
func cliRun(name string, plain, encrypted float64) cliPoint {
	return cliPoint{Command: "memsvc " + name, Plain: row{Ops: 5, P50ms: plain}, Encrypted: row{Ops: 5, P50ms: encrypted},
		Ratio: encrypted / plain}
}

// TestTargetsMCPAgainstStdioPeer runs the MCP section with a second
// memsvc-mcp as the peer: both are timed at each note count, the ratio is
// the peer's p50 over ours, and both MCP targets are judged.
func TestTargetsMCPAgainstStdioPeer(t *testing.T) {
	memsvcBin, mcpBin := binaries(t)
	sc := quickScale()
	sc.mcpNotes, sc.mcpSearches = []int{30, 60}, 5
	b := benchFor(t, &config{memsvcBin: memsvcBin, mcpBin: mcpBin, seed: 7, targets: &sc, sections: map[string]bool{secMCP: true}})
	b.peer = memsvcMCPPeer(b, memsvcBin, mcpBin, "second-memsvc-mcp")
	r := runTargetsFor(t, b, 2*time.Minute)
	if len(r.MCP) != 2 || r.MCPPeer != "second-memsvc-mcp test-peer" {
		t.Fatalf("MCP points %+v, peer %q", r.MCP, r.MCPPeer)
	}
	for i, x := range r.MCP {
		if x.Notes != sc.mcpNotes[i] || x.Ours == nil || x.Peer == nil {
			t.Fatalf("point %d: %+v", i, x)
		}
		if x.Ours.Search.Ops != 5 || x.Peer.Search.Ops != 5 || x.Ours.Search.Records != x.Notes {
			t.Errorf("point %d: searches %+v / %+v", i, x.Ours.Search, x.Peer.Search)
		}
		// Both hold the same notes and answer the same searches.
		if x.Ours.Results != x.Peer.Results || x.Ours.Results == 0 {
			t.Errorf("point %d: %v results vs the peer's %v", i, x.Ours.Results, x.Peer.Results)
		}
		if want := x.Peer.Search.P50ms / x.Ours.Search.P50ms; x.Ratio != want {
			t.Errorf("point %d: ratio %v, want %v", i, x.Ratio, want)
		}
	}
	bs := r.verdicts(&sc)
	for _, prefix := range []string{"MCP search p50 at 30 notes", "MCP search p50 at 60 notes"} {
		if v := verdictOf(t, bs, prefix); v.Verdict == notMeasured {
			t.Errorf("%+v: want a verdict", v)
		}
	}
	if v := verdictOf(t, bs, "text recall p50 at 500"); v.Verdict != notMeasured {
		t.Errorf("%+v: the text section did not run", v)
	}
}

// TestConsolidationWithoutAnswers: a consolidation during which no recall
// answered reports no latencies rather than zeros, and misses.
func TestConsolidationWithoutAnswers(t *testing.T) {
	sc := fullScale()
	r := &targetsReport{Consolidation: &consolidationResult{Records: 40_000, BoundMs: 300_000, Unfinished: true, UnansweredMs: 299_999}}
	r.Verdicts = r.verdicts(&sc)
	md := r.markdown()
	for _, want := range []string{
		"| 40,000 | not finished after 300,000 ms | 0 | — | — | — | one recall still unanswered after 299,999 ms when the run gave up |",
		"| no recall answered; one was still waiting after 299,999 ms | **missed** |",
		"| full consolidation of 40,000 records under 1 minute | not finished after 300,000 ms | **missed** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// TestTargetsColdStartsAndEncryptedCLI runs the text section (tiny) and
// the encrypted section through the built binaries: both kinds of cold
// start are timed, and each embedded command runs on both directories.
func TestTargetsColdStartsAndEncryptedCLI(t *testing.T) {
	memsvcBin, mcpBin := binaries(t)
	sc := quickScale()
	sc.storeSmall, sc.textMid, sc.textBig, sc.rounds, sc.stores = 20, 40, 60, 3, 3
	sc.encrypted, sc.cliRuns = 50, 3
	b := benchFor(t, &config{memsvcBin: memsvcBin, mcpBin: mcpBin, seed: 7, targets: &sc,
		sections: map[string]bool{secText: true, secEncrypted: true}})
	r := runTargetsFor(t, b, 3*time.Minute)
	for _, c := range []*row{r.ColdStart, r.ColdStartRebuilt} {
		if c == nil || c.Ops != 1 || c.Records != 63 || c.P50ms <= 0 {
			t.Errorf("cold start %+v, want one at 63 records", c)
		}
	}
	if r.ColdStart != nil && r.ColdStartRebuilt != nil &&
		(strings.Contains(r.ColdStart.Note, "persist_search_indexes") || !strings.Contains(r.ColdStartRebuilt.Note, "persist_search_indexes")) {
		t.Errorf("cold start rows mixed up: %q, %q", r.ColdStart.Note, r.ColdStartRebuilt.Note)
	}
	// A start uses some CPU, and it is counted in nanoseconds.
	if r.ColdStartCPUms <= 0 || r.ColdStartRebuiltCPUms <= 0 {
		t.Errorf("cold start CPU %v and %v ms, want both measured", r.ColdStartCPUms, r.ColdStartRebuiltCPUms)
	}
	e := r.Encrypted
	if e == nil || e.Records != 50 || e.Runs != 3 || len(e.Commands) != 2 {
		t.Fatalf("encrypted section %+v", e)
	}
	for _, x := range e.Commands {
		if x.Plain.Ops != 3 || x.Encrypted.Ops != 3 || x.PlainCPUms <= 0 || x.EncryptedCPUms <= 0 {
			t.Errorf("%s: %+v", x.Command, x)
		}
		if want := x.Encrypted.P50ms / x.Plain.P50ms; x.Ratio != want {
			t.Errorf("%s: ratio %v, want %v", x.Command, x.Ratio, want)
		}
	}
	bs := r.verdicts(&sc)
	for _, prefix := range []string{"cold start at 60", "cold start without persisted search indexes at 60",
		"encrypted embedded CLI command at 50"} {
		if v := verdictOf(t, bs, prefix); v.Verdict == notMeasured {
			t.Errorf("%+v: want a verdict", v)
		}
	}
	md := r.markdown()
	for _, want := range []string{"### Embedded CLI with store encryption", "| `memsvc stats` | 50 | 3 | ",
		"| `memsvc recall <query>` | 50 | 3 | ", "Cold start at 63 records with `security.persist_search_indexes = false`"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// runTargetsFor runs b's target sections into a fresh report within timeout
// and returns the report.
func runTargetsFor(t *testing.T, b *bench, timeout time.Duration) *targetsReport {
	t.Helper()
	b.targets = &targetsReport{}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	if err := b.runTargets(ctx); err != nil {
		t.Fatal(err)
	}
	return b.targets
}
