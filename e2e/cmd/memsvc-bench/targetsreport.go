package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// targetsReport is everything one targets run measured.
type targetsReport struct {
	runInfo
	Error string `json:"error,omitempty"`
	// Rows are the operations timed against GET /health, in run order.
	Rows          []pairedRow          `json:"rows"`
	ColdStart     *row                 `json:"cold_start,omitempty"`
	Concurrent    *crowdResult         `json:"concurrent,omitempty"`
	Consolidation *consolidationResult `json:"consolidation,omitempty"`
	Stores        *storesResult        `json:"stores,omitempty"`
	MCP           []mcpPoint           `json:"mcp,omitempty"`

	// ColdStartRebuilt is the cold start with
	// security.persist_search_indexes = false.
	ColdStartRebuilt *row             `json:"cold_start_indexes_not_persisted,omitempty"`
	Encrypted        *encryptedResult `json:"encrypted_cli,omitempty"`

	// ColdStartCPUms and ColdStartRebuiltCPUms are the p50 of the CPU
	// time the server had used when it was ready.
	ColdStartCPUms        float64 `json:"cold_start_cpu_p50_ms,omitempty"`
	ColdStartRebuiltCPUms float64 `json:"cold_start_indexes_not_persisted_cpu_p50_ms,omitempty"`

	// MCPPeer names the peer and its version; MCPPeerSkipped says why it
	// did not run, when it did not.
	MCPPeer        string   `json:"mcp_peer,omitempty"`
	MCPPeerSkipped string   `json:"mcp_peer_skipped,omitempty"`
	Verdicts       []budget `json:"verdicts"`
}

// pairedRow is an operation timed in rounds with GET /health.
type pairedRow struct {
	row
	HealthP50ms float64 `json:"health_p50_ms"`
	Ratio       float64 `json:"ratio_to_health"` // p50 over HealthP50ms
}

// crowdResult is the concurrent clients' section.
type crowdResult struct {
	Clients    int     `json:"clients"`
	Asked      int     `json:"recalls_asked"`
	Recalls    row     `json:"recalls"` // the answered ones
	MaxMs      float64 `json:"max_ms"`
	Unfinished string  `json:"unfinished,omitempty"`
}

// storesResult is single synced stores from one client and from many.
type storesResult struct {
	Clients    int     `json:"clients"`
	Single     row     `json:"single"`
	Concurrent row     `json:"concurrent"`
	Ratio      float64 `json:"ratio"` // Concurrent over Single throughput
}

// consolidationResult is the full consolidation with recalls during it.
type consolidationResult struct {
	Records   int     `json:"records"`
	BoundMs   float64 `json:"bound_ms"`
	TookMs    float64 `json:"took_ms"` // 0 when Unfinished
	Processed int     `json:"records_processed"`
	Note      string  `json:"note,omitempty"`
	// Unfinished says the consolidation was still running at BoundMs.
	Unfinished bool    `json:"unfinished"`
	Recalls    row     `json:"recalls"` // answered during the consolidation
	MaxMs      float64 `json:"max_ms"`
	// UnansweredMs is how long the recall cut off by the bound had waited.
	UnansweredMs float64 `json:"unanswered_ms,omitempty"`
}

func (c *consolidationResult) took() string {
	if c.Unfinished {
		return fmt.Sprintf("not finished after %s ms", msf(c.BoundMs))
	}
	return msf(c.TookMs) + " ms"
}

// mcpPoint is MCP search at one note count through both servers.
type mcpPoint struct {
	Notes int        `json:"notes"`
	Ours  *mcpResult `json:"memsvc_mcp"`
	Peer  *mcpResult `json:"peer,omitempty"`
	Ratio float64    `json:"ratio,omitempty"` // the peer's p50 over ours
}

// reportTargets prints the Markdown report to w and writes the JSON file;
// runErr, when not nil, is reported as the run's failure.
func (b *bench) reportTargets(w io.Writer, runErr error) error {
	r := b.targets
	if runErr != nil {
		r.Error = runErr.Error()
	}
	r.Took = time.Since(b.begin).Round(time.Second).String()
	r.Verdicts = r.verdicts(b.cfg.targets)
	return writeReport(w, b.cfg.jsonPath, r, r.markdown())
}

func (r *targetsReport) markdown() string {
	var sb strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&sb, format, a...) }
	r.writeHead(&sb, "memsvc-bench targets", "small corpora and a few operations")
	if r.Error != "" {
		p("- **The run failed**: %s\n", r.Error)
	}

	if len(r.Rows) > 0 {
		p("\n### Against GET /health\n\n")
		p("Each operation alternates with one GET /health on the same client and connection " +
			"(pkg/client over loopback, send to decoded answer). Each request is timed on its own; " +
			"the ratio is the operation's p50 over the health p50 of the same rounds.\n\n")
		p("| Operation | Records | Rounds | p50 ms | p95 ms | p99 ms | GET /health p50 ms | p50 / health | Notes |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, x := range r.Rows {
			p("| %s | %s | %d | %s | %s | %s | %s | %.1f× | %s |\n", x.Operation, group(x.Records), x.Ops,
				msf(x.P50ms), msf(x.P95ms), msf(x.P99ms), msf(x.HealthP50ms), x.Ratio, x.Note)
		}
	}
	if c := r.ColdStart; c != nil {
		p("\nCold start at %s records (SIGTERM, then exec on the same directory until /readiness answers 200), %d times: p50 %s ms, slowest %s ms; server CPU time at readiness p50 %s ms.\n",
			group(c.Records), c.Ops, msf(c.P50ms), msf(c.P99ms), msf(r.ColdStartCPUms))
	}
	if c := r.ColdStartRebuilt; c != nil {
		p("\nCold start at %s records with `security.persist_search_indexes = false` (no index snapshot: every start builds the search indexes from the records), %d times: p50 %s ms, slowest %s ms; server CPU time at readiness p50 %s ms.\n",
			group(c.Records), c.Ops, msf(c.P50ms), msf(c.P99ms), msf(r.ColdStartRebuiltCPUms))
	}
	if c := r.Encrypted; c != nil {
		p("\n### Embedded CLI with store encryption\n\n")
		p("Two data directories of the same %s text records, one plaintext and one encrypted (`security.store_encryption_passphrase`), "+
			"each loaded by a server that is then stopped. Each command opens the directory itself; it runs %d times on each, "+
			"alternating which goes first. Wall time is exec to exit; CPU is the process's user and system time.\n\n", group(c.Records), c.Runs)
		p("| Command | Records | Runs | plaintext p50 ms | slowest | CPU p50 ms | encrypted p50 ms | slowest | CPU p50 ms | encrypted / plaintext |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, x := range c.Commands {
			p("| `%s` | %s | %d | %s | %s | %s | %s | %s | %s | %.2f× |\n", x.Command, group(c.Records), x.Plain.Ops,
				msf(x.Plain.P50ms), msf(x.Plain.P99ms), msf(x.PlainCPUms), msf(x.Encrypted.P50ms), msf(x.Encrypted.P99ms), msf(x.EncryptedCPUms), x.Ratio)
		}
	}
	if c := r.Concurrent; c != nil {
		p("\n### Concurrent recall clients\n\n")
		p("%d clients start at once, each making its text recalls (limit 10, queries of one to four words drawn like the corpus words) one after the other.\n\n", c.Clients)
		p("| Clients | Records | Recalls | p50 ms | p95 ms | p99 ms | max ms | Throughput |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		x := c.Recalls
		p("| %d | %s | %d of %d | %s | %s | %s | %s | %s |\n", c.Clients, group(x.Records), x.Ops, c.Asked,
			msf(x.P50ms), msf(x.P95ms), msf(x.P99ms), msf(c.MaxMs), rate(x.Throughput, x.Unit))
		if c.Unfinished != "" {
			p("\n**%s.**\n", c.Unfinished)
		}
	}
	if c := r.Consolidation; c != nil {
		p("\n### Recall during a full consolidation\n\n")
		p("`consolidate` with strategy full over %s episodic records; meanwhile one client recalls (text, limit 10) every %v, or as soon as the previous recall answers when it took longer.\n\n",
			group(c.Records), probeEvery)
		p("| Records | Consolidation | Recalls during it | p50 ms | p99 ms | max ms | Notes |\n|---:|---|---:|---:|---:|---:|---|\n")
		note := c.Note
		if c.UnansweredMs > 0 {
			note = fmt.Sprintf("one recall still unanswered after %s ms when the run gave up", msf(c.UnansweredMs))
		}
		lat := "— | — | —" // no recall answered during it
		if c.Recalls.Ops > 0 {
			lat = fmt.Sprintf("%s | %s | %s", msf(c.Recalls.P50ms), msf(c.Recalls.P99ms), msf(c.MaxMs))
		}
		p("| %s | %s | %d | %s | %s |\n", group(c.Records), c.took(), c.Recalls.Ops, lat, note)
	}
	if c := r.Stores; c != nil {
		p("\n### Concurrent stores\n\n")
		p("Single synced stores (`POST /v1/encode`), first from one client in a row, then from %d clients at once, as many in all.\n\n", c.Clients)
		p("| Clients | Records after | Stores | p50 ms | p99 ms | Throughput |\n|---:|---:|---:|---:|---:|---:|\n")
		for _, x := range []struct {
			n int
			r row
		}{{1, c.Single}, {c.Clients, c.Concurrent}} {
			p("| %d | %s | %d | %s | %s | %s |\n", x.n, group(x.r.Records), x.r.Ops, msf(x.r.P50ms), msf(x.r.P99ms), rate(x.r.Throughput, x.r.Unit))
		}
	}
	if len(r.MCP) > 0 {
		p("\n### MCP search\n\n")
		p("One MCP client over stdio; the notes are stored with batch calls (memsvc-mcp `batch_store`, the peer `create_entities`), "+
			"then %d one-word searches are timed at each size.", r.MCP[0].Ours.Search.Ops)
		if r.MCPPeer != "" {
			p(" Peer: %s.", r.MCPPeer)
		}
		p("\n\n| Notes | memsvc-mcp p50 ms | p99 ms | results | peer p50 ms | p99 ms | results | peer p50 / ours |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, x := range r.MCP {
			peer := "— | — | — | —"
			if x.Peer != nil {
				peer = fmt.Sprintf("%s | %s | %.1f | %.1f×", msf(x.Peer.Search.P50ms), msf(x.Peer.Search.P99ms), x.Peer.Results, x.Ratio)
			}
			p("| %s | %s | %s | %.1f | %s |\n", group(x.Notes), msf(x.Ours.Search.P50ms), msf(x.Ours.Search.P99ms), x.Ours.Results, peer)
		}
		if r.MCPPeerSkipped != "" {
			p("\nThe peer did not run: %s.\n", r.MCPPeerSkipped)
		}
	}

	p("\n### Targets\n\n| Target | Measured | Verdict |\n|---|---|---|\n")
	for _, v := range r.Verdicts {
		p("| %s | %s | %s |\n", v.Budget, v.Measured, v.Verdict)
	}
	return sb.String()
}

// pairedAt returns the row op at records, or nil.
func (r *targetsReport) pairedAt(op string, records int) *pairedRow {
	for i := range r.Rows {
		if r.Rows[i].Operation == op && r.Rows[i].Records == records {
			return &r.Rows[i]
		}
	}
	return nil
}

// verdicts judges the measurements against their targets; sc gives the
// sizes the targets name.
func (r *targetsReport) verdicts(sc *targetScale) []budget {
	var out []budget
	add := func(name, measured, v string) { out = append(out, budget{name, measured, v}) }
	ratio := func(op, what string, n int, limit float64) {
		name := fmt.Sprintf("%s p50 at %s records at most %g× GET /health", what, group(n), limit)
		x := r.pairedAt(op, n)
		if x == nil {
			add(name, "—", notMeasured)
			return
		}
		add(name, fmt.Sprintf("%.2f× (%s ms / %s ms)", x.Ratio, msf(x.P50ms), msf(x.HealthP50ms)), verdict(x.Ratio <= limit))
	}
	ratio(opRecallText, "text recall", sc.textMid, 3)
	ratio(opRecallText, "text recall", sc.textBig, 3)
	for _, d := range sc.dims {
		ratio(hybridOp(d), fmt.Sprintf("hybrid recall, %d dims,", d), sc.hybrid, 5)
	}
	ratio(opRecallNoQuery, "recall without a query", sc.textMid, 3)
	ratio(opRecallNoQuery, "recall without a query", sc.textBig, 3)

	name := fmt.Sprintf("store p50 at %s records at most 1.5× the p50 at %s", group(sc.textBig), group(sc.storeSmall))
	small, big := r.pairedAt(opStore, sc.storeSmall), r.pairedAt(opStore, sc.textBig)
	if small != nil && big != nil && small != big && small.P50ms > 0 {
		q := big.P50ms / small.P50ms
		add(name, fmt.Sprintf("%.2f× (%s ms at %s, %s ms at %s)", q, msf(big.P50ms), group(big.Records), msf(small.P50ms), group(small.Records)), verdict(q <= 1.5))
	} else {
		add(name, "—", notMeasured)
	}

	name = fmt.Sprintf("%d concurrent recall clients over %s records: p99 under 50 ms", sc.clients, group(sc.crowd))
	switch c := r.Concurrent; {
	case c == nil:
		add(name, "—", notMeasured)
	case c.Unfinished != "":
		add(name, c.Unfinished, verdict(false))
	default:
		add(name, fmt.Sprintf("p99 %s ms (p50 %s ms, %d recalls)", msfUnder(c.Recalls.P99ms, 50), msf(c.Recalls.P50ms), c.Recalls.Ops), verdict(c.Recalls.P99ms < 50))
	}

	name = fmt.Sprintf("recall during a full consolidation of %s records within 50 ms (p99)", group(sc.crowd))
	name2 := fmt.Sprintf("full consolidation of %s records under 1 minute", group(sc.crowd))
	switch c := r.Consolidation; {
	case c == nil:
		add(name, "—", notMeasured)
		add(name2, "—", notMeasured)
	default:
		switch {
		case c.UnansweredMs > 0:
			answered := "no recall answered"
			if c.Recalls.Ops > 0 {
				answered = fmt.Sprintf("%d recalls answered (p99 %s ms)", c.Recalls.Ops, msf(c.Recalls.P99ms))
			}
			add(name, fmt.Sprintf("%s; one was still waiting after %s ms", answered, msf(c.UnansweredMs)), verdict(false))
		case c.Recalls.Ops == 0:
			add(name, "no recall was issued during it", notMeasured)
		default:
			add(name, fmt.Sprintf("p99 %s ms, max %s ms over %d recalls", msf(c.Recalls.P99ms), msf(c.MaxMs), c.Recalls.Ops), verdict(c.Recalls.P99ms <= 50))
		}
		add(name2, c.took(), verdict(!c.Unfinished && c.TookMs < 60_000))
	}

	name = fmt.Sprintf("%d concurrent clients store at least 5× the single-client rate", sc.storeClients)
	if c := r.Stores; c != nil {
		add(name, fmt.Sprintf("%.2f× (%s vs %s)", c.Ratio, rate(c.Concurrent.Throughput, c.Concurrent.Unit), rate(c.Single.Throughput, c.Single.Unit)), verdict(c.Ratio >= 5))
	} else {
		add(name, "—", notMeasured)
	}

	name = fmt.Sprintf("cold start at %s records under 1 s", group(sc.textBig))
	if c := r.ColdStart; c != nil && c.Records >= sc.textBig {
		add(name, fmt.Sprintf("p50 %s ms, slowest %s ms", msfUnder(c.P50ms, 1000), msf(c.P99ms)), verdict(c.P50ms < 1000))
	} else {
		add(name, "—", notMeasured)
	}

	name = fmt.Sprintf("cold start without persisted search indexes at %s records under 1 s", group(sc.textBig))
	if c := r.ColdStartRebuilt; c != nil && c.Records >= sc.textBig {
		add(name, fmt.Sprintf("p50 %s ms, slowest %s ms", msfUnder(c.P50ms, 1000), msf(c.P99ms)), verdict(c.P50ms < 1000))
	} else {
		add(name, "—", notMeasured)
	}

	name = fmt.Sprintf("encrypted embedded CLI command at %s records at most 1.5× the unencrypted one", group(sc.encrypted))
	if w := r.Encrypted.worst(); w != nil && r.Encrypted.Records >= sc.encrypted {
		var each []string
		for _, x := range r.Encrypted.Commands {
			each = append(each, fmt.Sprintf("`%s` %.2f× (%s ms vs %s ms)", x.Command, x.Ratio, msf(x.Encrypted.P50ms), msf(x.Plain.P50ms)))
		}
		add(name, strings.Join(each, "; "), verdict(w.Ratio <= 1.5))
	} else {
		add(name, "—", notMeasured)
	}

	for i, n := range sc.mcpNotes {
		limit := 10.0
		if i > 0 {
			limit = 30
		}
		name := fmt.Sprintf("MCP search p50 at %s notes at least %g× faster than server-memory", group(n), limit)
		var x *mcpPoint
		for j := range r.MCP {
			if r.MCP[j].Notes == n {
				x = &r.MCP[j]
			}
		}
		if x == nil || x.Peer == nil {
			add(name, "—", notMeasured)
			continue
		}
		add(name, fmt.Sprintf("%.1f× (%s ms vs %s ms)", x.Ratio, msf(x.Ours.Search.P50ms), msf(x.Peer.Search.P50ms)), verdict(x.Ratio >= limit))
	}
	return out
}
