package audit

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkAppend appends single events and groups of 64, each Append
// with its one fsync, to a file in the test's temporary directory.
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("group=%d", n), func(b *testing.B) {
			l := openT(b, logPath(b), Options{})
			template := testEvent(1)
			evs := make([]Event, n)
			var seq uint64
			b.ReportAllocs()
			for b.Loop() {
				for i := range evs {
					evs[i] = template
					evs[i].Sequence = seq + uint64(i) + 1
				}
				if err := l.Append(evs...); err != nil {
					b.Fatal(err)
				}
				seq += uint64(n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(seq), "ns/entry")
		})
	}
}

// BenchmarkVerify verifies a log of 10,000 entries in memory.
func BenchmarkVerify(b *testing.B) {
	const n = 10_000
	data := referenceLog(b, n)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Verify(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
}

// BenchmarkOpen opens a log of 10,000 entries with the default tail check
// and with full verification.
func BenchmarkOpen(b *testing.B) {
	path := logPath(b)
	writeFile(b, path, referenceLog(b, 10_000))
	for _, full := range []bool{false, true} {
		b.Run(fmt.Sprintf("full=%v", full), func(b *testing.B) {
			for b.Loop() {
				l, err := Open(path, Options{VerifyFull: full})
				if err != nil {
					b.Fatal(err)
				}
				l.Close()
			}
		})
	}
}
