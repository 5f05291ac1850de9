package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/cli"
)

// runInfo opens the reports of the speed runs (the default run and
// targets): the command, when and where it ran, and how loaded the machine
// was. Embedded, its fields stand first in the JSON of either report.
type runInfo struct {
	Command    string    `json:"command"`
	Started    time.Time `json:"started"`
	Took       string    `json:"took"`
	Machine    machine   `json:"machine"`
	LoadBefore string    `json:"loadavg_before"`
	LoadAfter  string    `json:"loadavg_after"`
	Quick      bool      `json:"quick"`
}

// writeHead opens the Markdown of a speed report: the title, on a quick
// run a warning that says what quick leaves out (quickly), then the
// machine, date, command and load lines.
func (ri *runInfo) writeHead(sb *strings.Builder, title, quickly string) {
	fmt.Fprintf(sb, "## %s\n\n", title)
	if ri.Quick {
		fmt.Fprintf(sb, "**Quick run**: %s, to check the driver works; not a measurement.\n\n", quickly)
	}
	m := ri.Machine
	fmt.Fprintf(sb, "- Machine: %s, %d cores, %s memory, %s\n", m.CPU, m.Cores, m.Memory, m.Kernel)
	fmt.Fprintf(sb, "- Date: %s (run took %s; driver built with %s)\n", ri.Started.Format("2006-01-02 15:04 MST"), ri.Took, m.Go)
	fmt.Fprintf(sb, "- Command: `%s`\n", ri.Command)
	fmt.Fprintf(sb, "- Load average (1, 5, 15 min) before: %s; after: %s\n", ri.LoadBefore, ri.LoadAfter)
}

// report is everything one run measured.
type report struct {
	runInfo
	Embeddings bool          `json:"embeddings"`
	Error      string        `json:"error,omitempty"`
	Sizes      []*sizeReport `json:"sizes"`
	MCP        *mcpReport    `json:"mcp,omitempty"`
	Budgets    []budget      `json:"budgets"`
	// MemBandwidth is the memory read rate the vector scan is compared
	// with, in bytes per second (measured with --embeddings only).
	MemBandwidth float64 `json:"mem_bandwidth_bytes_per_s,omitempty"`
}

// budget is one performance budget of DESIGN.md §9 and how the run did.
type budget struct {
	Budget   string `json:"budget"`
	Measured string `json:"measured"`
	Verdict  string `json:"verdict"` // met, missed or not measured
}

// report prints the Markdown report to w and writes the JSON file; runErr,
// when not nil, is reported as the run's failure.
func (b *bench) report(w io.Writer, runErr error) error {
	r := b.result
	if runErr != nil {
		r.Error = runErr.Error()
	}
	r.Took = time.Since(b.begin).Round(time.Second).String()
	r.Budgets = r.budgets()
	return writeReport(w, b.cfg.jsonPath, r, r.markdown())
}

// writeReport writes markdown to w and, when jsonPath is set, v as indented
// JSON to that file; a failure of either does not stop the other, and both
// are returned.
func writeReport(w io.Writer, jsonPath string, v any, markdown string) error {
	var errs []error
	if jsonPath != "" {
		data, err := json.MarshalIndent(v, "", "  ")
		if err == nil {
			err = os.WriteFile(jsonPath, append(data, '\n'), 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("write --json: %w", err))
		}
	}
	if _, err := io.WriteString(w, markdown); err != nil {
		errs = append(errs, fmt.Errorf("write report: %w", err))
	}
	return errors.Join(errs...)
}

func (r *report) markdown() string {
	var sb strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&sb, format, a...) }
	r.writeHead(&sb, "memsvc-bench results", "a few operations per section")
	if r.MemBandwidth > 0 {
		p("- Memory read bandwidth (all cores, measured by the driver): %.1f GB/s\n", r.MemBandwidth/1e9)
	}
	if r.Error != "" {
		p("- **The run failed**: %s\n", r.Error)
	}

	p("\n### Latency and throughput\n\n")
	p("Every operation is one HTTP request from one client over loopback (pkg/client), measured from send to decoded answer.\n\n")
	p("| Operation | Records | Ops | p50 ms | p95 ms | p99 ms | Throughput | Notes |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---|\n")
	var order []string
	for _, s := range r.Sizes {
		for _, row := range s.Rows {
			if !slices.Contains(order, row.Operation) {
				order = append(order, row.Operation)
			}
		}
	}
	for _, op := range order {
		for _, s := range r.Sizes {
			for _, row := range s.Rows {
				switch {
				case row.Operation != op:
				case row.Ops == 0: // the operation failed; the note says why
					p("| %s | %s | 0 | — | — | — | — | %s |\n", row.Operation, group(row.Records), row.Note)
				default:
					p("| %s | %s | %d | %s | %s | %s | %s | %s |\n", row.Operation, group(row.Records), row.Ops,
						msf(row.P50ms), msf(row.P95ms), msf(row.P99ms), rate(row.Throughput, row.Unit), row.Note)
				}
			}
		}
	}

	for i, s := range r.Sizes {
		mr := s.Memory
		if mr == nil {
			continue
		}
		if i == 0 {
			p("\n### Resident memory of the server\n\n")
			p("VmRSS of the server process, read once it has been idle for 12 s; per record = growth over the empty server divided by the records and raw entries stored.\n\n")
			p("| Records | Empty server | After load | Per record | After cold start | Per record | Content per record |\n")
			p("|---:|---:|---:|---:|---:|---:|---:|\n")
		}
		after, afterPer := "—", "—"
		if mr.RestartRSS > 0 {
			after = mib(mr.RestartRSS) + " (" + group(mr.RestartRecords) + " stored)"
			afterPer = bytesf(perRecord(mr.RestartRSS, mr.EmptyRSS, mr.RestartRecords))
		}
		p("| %s | %s | %s (%s stored) | %s | %s | %s | %s |\n", group(s.Records), mib(mr.EmptyRSS),
			mib(mr.LoadedRSS), group(mr.LoadedRecords), bytesf(perRecord(mr.LoadedRSS, mr.EmptyRSS, mr.LoadedRecords)),
			after, afterPer, bytesf(mr.ContentBytes))
	}

	if r.MCP != nil {
		r.MCP.markdown(&sb)
	}

	p("\n### Budgets (DESIGN.md §9)\n\n")
	p("| Budget | Measured | Verdict |\n|---|---|---|\n")
	for _, bg := range r.Budgets {
		p("| %s | %s | %s |\n", bg.Budget, bg.Measured, bg.Verdict)
	}
	return sb.String()
}

// findRow returns the row op of the first size of at least n records.
func (r *report) findRow(op string, n int) (*sizeReport, *row) {
	for _, s := range r.Sizes {
		if s.Records < n {
			continue
		}
		for i := range s.Rows {
			if s.Rows[i].Operation == op {
				return s, &s.Rows[i]
			}
		}
		return s, nil
	}
	return nil, nil
}

// worst returns the row op with the highest p50 over all sizes.
func (r *report) worst(op string) *row {
	var w *row
	for _, s := range r.Sizes {
		for i := range s.Rows {
			if s.Rows[i].Operation == op && (w == nil || s.Rows[i].P50ms > w.P50ms) {
				w = &s.Rows[i]
			}
		}
	}
	return w
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "**missed**"
}

const notMeasured = "not measured"

// budgets checks the measurements against DESIGN.md §9. Size-independent
// budgets take the worst p50 over all sizes; the others need a run of at
// least 100,000 records.
func (r *report) budgets() []budget {
	const big = 100_000
	var out []budget
	add := func(name, measured, v string) { out = append(out, budget{name, measured, v}) }
	needBig := fmt.Sprintf("no run of %s records or more", group(big))

	if w := r.worst(opStore); w != nil {
		add("store p50 under 2 ms, synced", fmt.Sprintf("p50 %s ms (worst size: %s records)", msfUnder(w.P50ms, 2), group(w.Records)), verdict(w.P50ms < 2))
	} else {
		add("store p50 under 2 ms, synced", "—", notMeasured)
	}
	if w := r.worst(opRaw); w != nil {
		add("raw batch ingest of 1,000 entries under 100 ms", fmt.Sprintf("p50 %s ms, p99 %s ms (worst size: %s records)", msfUnder(w.P50ms, 100), msf(w.P99ms), group(w.Records)), verdict(w.P50ms < 100))
	} else {
		add("raw batch ingest of 1,000 entries under 100 ms", "—", notMeasured)
	}
	if s, row := r.findRow(opRecallText, big); row != nil {
		add("recall p50 under 10 ms at 100,000 records (text)", fmt.Sprintf("p50 %s ms at %s records", msfUnder(row.P50ms, 10), group(s.Records)), verdict(row.P50ms < 10))
	} else {
		add("recall p50 under 10 ms at 100,000 records (text)", needBig, notMeasured)
	}
	out = append(out, r.vectorBudget(big, needBig))
	if s, row := r.findRow(opColdStart, big); row != nil {
		add("start-up under 2 s at 100,000 records", fmt.Sprintf("p50 %s ms, slowest %s ms at %s records", msfUnder(row.P50ms, 2000), msf(row.P99ms), group(s.Records)), verdict(row.P50ms < 2000))
	} else {
		add("start-up under 2 s at 100,000 records", needBig, notMeasured)
	}
	if s, _ := r.findRow(opLoad, big); s != nil && s.Memory != nil && s.Memory.RestartRSS > 0 {
		mr := s.Memory
		per := max(perRecord(mr.LoadedRSS, mr.EmptyRSS, mr.LoadedRecords), perRecord(mr.RestartRSS, mr.EmptyRSS, mr.RestartRecords))
		over := per - mr.ContentBytes
		add("memory under 1 KiB of overhead per record beyond its content",
			fmt.Sprintf("%s per record (higher of after load and after cold start) − %s of content = %s at %s records",
				bytesf(per), bytesf(mr.ContentBytes), bytesf(over), group(s.Records)), verdict(over < 1024))
	} else {
		add("memory under 1 KiB of overhead per record beyond its content", needBig, notMeasured)
	}
	return out
}

// vectorBudget judges the vector scan. A vector recall is a scan plus a
// fixed cost (HTTP, JSON of the ten answers with their embeddings,
// reconsolidation); between two sizes the fixed cost cancels out, so the
// scan rate is the extra bytes scanned over the extra time. With a single
// size the whole request time is used.
func (r *report) vectorBudget(big int, needBig string) budget {
	const name = "vector scan at memory bandwidth"
	type point struct {
		s   *sizeReport
		p50 float64 // ms
	}
	var pts []point
	for _, s := range r.Sizes {
		for _, row := range s.Rows {
			if row.Operation == opRecallVector && s.VectorBytes > 0 {
				pts = append(pts, point{s, row.P50ms})
			}
		}
	}
	i := slices.IndexFunc(pts, func(p point) bool { return p.s.Records >= big })
	if i < 0 || r.MemBandwidth == 0 {
		return budget{name, needBig + " with --embeddings", notMeasured}
	}
	hi := pts[i]
	whole := hi.s.VectorBytes / (hi.p50 / 1e3)
	bw := r.MemBandwidth
	measured := fmt.Sprintf("p50 %s ms for %s of vectors at %s records: %.1f GB/s for the whole request",
		msf(hi.p50), mib(int64(hi.s.VectorBytes)), group(hi.s.Records), whole/1e9)
	rate := whole
	if i > 0 && hi.p50 > pts[i-1].p50 {
		lo := pts[i-1]
		rate = (hi.s.VectorBytes - lo.s.VectorBytes) / ((hi.p50 - lo.p50) / 1e3)
		measured += fmt.Sprintf("; scan alone (extra bytes over extra time from %s records, p50 %s ms): %.1f GB/s",
			group(lo.s.Records), msf(lo.p50), rate/1e9)
	}
	measured += fmt.Sprintf(" = %.0f%% of the %.1f GB/s memory read rate (met at 50%% or more)", 100*rate/bw, bw/1e9)
	return budget{name, measured, verdict(rate >= bw/2)}
}

// group writes n with thousands separators: 100000 → "100,000".
func group(n int) string { return cli.FormatCount(int64(n)) }

// msf formats milliseconds with three significant digits or so.
func msf(v float64) string {
	switch {
	case v < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return group(int(v + 0.5))
	}
}

// msfUnder is msf, with more decimals when v is under limit but msf would
// round it to the limit or past it, so that a "met" never stands next to a
// figure that reads as the limit.
func msfUnder(v, limit float64) string {
	s := msf(v)
	if v >= limit || parseGrouped(s) < limit {
		return s
	}
	for d := 1; d <= 9; d++ {
		t := strconv.FormatFloat(v, 'f', d, 64)
		if f, _ := strconv.ParseFloat(t, 64); f < limit {
			whole, frac, _ := strings.Cut(t, ".")
			n, _ := strconv.Atoi(whole)
			return group(n) + "." + frac
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// parseGrouped reads a number written with thousands separators.
func parseGrouped(s string) float64 {
	f, _ := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	return f
}

func rate(v float64, unit string) string {
	if unit == "" || v == 0 {
		return "—"
	}
	if v < 100 {
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + unit
	}
	return group(int(v+0.5)) + " " + unit
}

func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }

func bytesf(v float64) string { return group(int(v+0.5)) + " B" }
