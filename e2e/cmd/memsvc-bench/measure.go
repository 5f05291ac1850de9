package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// row is one measured section: a fixed number of operations, their latency
// percentiles and the throughput over the section.
type row struct {
	Operation  string  `json:"operation"`
	Records    int     `json:"records"` // corpus size of the run (notes for MCP rows)
	Ops        int     `json:"ops"`
	P50ms      float64 `json:"p50_ms"`
	P95ms      float64 `json:"p95_ms"`
	P99ms      float64 `json:"p99_ms"`
	Throughput float64 `json:"throughput"`
	Unit       string  `json:"unit"` // of Throughput: "records/s", "queries/s", ...
	Note       string  `json:"note,omitempty"`
}

// timings collects the latencies of one section.
type timings struct {
	d     []time.Duration
	items int           // units of work done (records stored, queries run)
	wall  time.Duration // from the first operation's start to the last one's end
}

// timeOps runs op n times in sequence and records each latency. op returns
// the units of work it did. The section stops at the first error.
func timeOps(ctx context.Context, n int, perOp time.Duration, op func(ctx context.Context, i int) (int, error)) (*timings, error) {
	t := &timings{d: make([]time.Duration, 0, n)}
	start := time.Now()
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		opCtx, cancel := context.WithTimeout(ctx, perOp)
		s := time.Now()
		k, err := op(opCtx, i)
		d := time.Since(s)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("operation %d of %d: %w", i+1, n, err)
		}
		t.d = append(t.d, d)
		t.items += k
	}
	t.wall = time.Since(start)
	return t, nil
}

// pct is the nearest-rank percentile p (0 < p <= 100) of d.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(len(sorted)-1, i))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// row summarises t; the throughput is items per second of wall time.
func (t *timings) row(op string, records int, unit, note string) row {
	s := slices.Clone(t.d)
	slices.Sort(s)
	r := row{Operation: op, Records: records, Ops: len(s), Unit: unit, Note: note,
		P50ms: ms(pct(s, 50)), P95ms: ms(pct(s, 95)), P99ms: ms(pct(s, 99))}
	if t.wall > 0 {
		r.Throughput = float64(t.items) / t.wall.Seconds()
	}
	return r
}
