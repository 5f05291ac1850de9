package memory

import (
	"bytes"
	"io"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"
)

// seededReader is deterministic randomness for ids.
func seededReader(seed uint64) io.Reader {
	var s [32]byte
	s[0] = byte(seed)
	s[1] = byte(seed >> 8)
	return rand.NewChaCha8(s)
}

// zeroReader and onesReader are the extremes of randomness: the counter
// has to keep ids increasing on its own.
type fillReader byte

func (f fillReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(f)
	}
	return len(p), nil
}

func fixedClock(ts ...time.Time) func() time.Time {
	i := 0
	return func() time.Time {
		t := ts[min(i, len(ts)-1)]
		i++
		return t
	}
}

func checkV7(t *testing.T, id ID) {
	t.Helper()
	if v := id[6] >> 4; v != 7 {
		t.Fatalf("%s: version %d, want 7", id, v)
	}
	if id[8]&0xc0 != 0x80 {
		t.Fatalf("%s: variant bits %02b, want 10", id, id[8]>>6)
	}
}

func TestIDSourceVersionAndTime(t *testing.T) {
	for _, ms := range []int64{0, 1, 1735689600123, 1<<47 + 12345, 1<<48 - 2} {
		at := time.UnixMilli(ms).Add(999 * time.Microsecond) // sub-millisecond part is dropped
		src := NewIDSource(fixedClock(at), seededReader(uint64(ms)))
		id := src.New()
		checkV7(t, id)
		got, ok := id.Time()
		if !ok || !got.Equal(time.UnixMilli(ms)) || got.Location() != time.UTC {
			t.Errorf("ms %d: Time() = %v, %v", ms, got, ok)
		}
		if len(id.String()) != 36 || MustParseID(id.String()) != id {
			t.Errorf("%s does not round trip", id)
		}
	}
	v4 := MustParseID("9b2e6f7c-1d2a-4c3b-8e4f-0a1b2c3d4e5f")
	if _, ok := v4.Time(); ok {
		t.Error("Time() of a version 4 id reported ok")
	}
}

func TestIDSourceBurstInOneMillisecond(t *testing.T) {
	const n = 10_000
	at := time.UnixMilli(1735689600000)
	for name, r := range map[string]io.Reader{"random": seededReader(1), "zeros": fillReader(0), "ones": fillReader(0xff)} {
		t.Run(name, func(t *testing.T) {
			src := NewIDSource(fixedClock(at), r)
			prev := src.New()
			checkV7(t, prev)
			for i := 1; i < n; i++ {
				id := src.New()
				checkV7(t, id)
				if bytes.Compare(prev[:], id[:]) >= 0 {
					t.Fatalf("id %d %s is not greater than %s", i, id, prev)
				}
				prev = id
			}
			// The counter may borrow a few future milliseconds, never
			// more than the burst needs (4096 per millisecond).
			last, _ := prev.Time()
			if d := last.Sub(at); d < 0 || d > (n/2048+1)*time.Millisecond {
				t.Errorf("last id is %v ahead of the clock", d)
			}
		})
	}
}

func TestIDSourceClockGoesBackwards(t *testing.T) {
	base := time.UnixMilli(1735689600000)
	var ticks []time.Time
	for i := range 50 {
		ticks = append(ticks, base.Add(time.Duration(i)*time.Millisecond))
	}
	for i := range 50 {
		ticks = append(ticks, base.Add(-time.Second).Add(time.Duration(i)*time.Millisecond)) // NTP step back
	}
	ticks = append(ticks, base.Add(time.Hour))
	src := NewIDSource(fixedClock(ticks...), seededReader(2))
	var prev ID
	for i := range ticks {
		id := src.New()
		checkV7(t, id)
		if i > 0 && bytes.Compare(prev[:], id[:]) >= 0 {
			t.Fatalf("tick %d: id %s is not greater than %s", i, id, prev)
		}
		prev = id
	}
	if got, _ := prev.Time(); !got.Equal(base.Add(time.Hour)) {
		t.Errorf("after the clock recovers the id time is %v", got)
	}
}

func TestIDSourceConcurrent(t *testing.T) {
	const workers, each = 8, 2000
	src := NewIDSource(nil, nil) // real clock, crypto randomness
	out := make([][]ID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ids := make([]ID, each)
			for i := range ids {
				ids[i] = src.New()
			}
			out[w] = ids
		})
	}
	wg.Wait()
	seen := make(map[ID]bool, workers*each)
	var all []ID
	for w, ids := range out {
		for i, id := range ids {
			checkV7(t, id)
			if seen[id] {
				t.Fatalf("duplicate id %s", id)
			}
			seen[id] = true
			if i > 0 && bytes.Compare(ids[i-1][:], id[:]) >= 0 {
				t.Fatalf("worker %d: ids not increasing at %d", w, i)
			}
		}
		all = append(all, ids...)
	}
	sort.Slice(all, func(i, j int) bool { return bytes.Compare(all[i][:], all[j][:]) < 0 })
	if len(all) != workers*each {
		t.Fatalf("%d ids", len(all))
	}
}

func TestIDSourceBrokenRandomness(t *testing.T) {
	src := NewIDSource(fixedClock(t0), bytes.NewReader(nil))
	assertPanics(t, "New with an empty reader", func() { src.New() })
}
