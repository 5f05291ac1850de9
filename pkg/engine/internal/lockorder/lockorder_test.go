package lockorder

import (
	"strings"
	"testing"
)

// collect returns a report function and what it collected so far; the
// tests read it after the goroutines that report are done.
func collect() (func(error), func() []string) {
	var errs []string
	report := func(err error) { errs = append(errs, err.Error()) }
	take := func() []string {
		out := errs
		errs = nil
		return out
	}
	return report, take
}

// TestOrder: locks taken in rank order pass; an inversion, two locks of
// one rank, a stripe taken below one already held and a read lock taken
// twice are each reported once, naming both locks.
func TestOrder(t *testing.T) {
	report, take := collect()
	c := NewChecker(report)
	var outer, other Mutex
	var state RWMutex
	var stripes [3]Mutex
	outer.Init(c, "outer", 1)
	other.Init(c, "other", 1)
	state.Init(c, "state", 3)
	for i := range stripes {
		stripes[i].InitFamily(c, "stripe", 2, i)
	}

	Nest(&outer, &stripes[0], &stripes[2], state.RLocker())
	if errs := take(); len(errs) != 0 {
		t.Fatalf("in-order locking reported: %q", errs)
	}

	cases := []struct {
		name string
		run  func()
		want string
	}{
		{"inversion", func() { Nest(&state, &outer) },
			"outer (rank 1) taken while holding state (rank 3)"},
		{"same rank", func() { Nest(&outer, &other) },
			"other (rank 1) taken while holding outer (rank 1)"},
		{"stripes backwards", func() { Nest(&stripes[2], &stripes[1]) },
			"stripe[1] (rank 2) taken while holding stripe[2] (rank 2)"},
		{"read lock twice", func() { Nest(state.RLocker(), state.RLocker()) },
			"state (rank 3) taken while holding state (rank 3)"},
	}
	for _, tc := range cases {
		tc.run()
		errs := take()
		if len(errs) != 1 || !strings.Contains(errs[0], tc.want) {
			t.Errorf("%s: reported %q, want one report containing %q", tc.name, errs, tc.want)
		}
	}
	// Everything was released: in-order locking passes again.
	Nest(&outer, &state)
	if errs := take(); len(errs) != 0 {
		t.Fatalf("locks still counted as held after release: %q", errs)
	}
	got := c.Observed()
	for _, want := range [][2]string{{"outer", "stripe"}, {"stripe", "stripe"}, {"state", "outer"}, {"stripe", "state"}} {
		found := false
		for _, p := range got {
			found = found || p == want
		}
		if !found {
			t.Errorf("observed pairs %v miss %v", got, want)
		}
	}
}

// TestGoroutinesApart: what one goroutine holds does not constrain
// another; a lock without a checker is a plain lock.
func TestGoroutinesApart(t *testing.T) {
	report, take := collect()
	c := NewChecker(report)
	var low, high Mutex
	low.Init(c, "low", 1)
	high.Init(c, "high", 2)
	high.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Nest(&low)
	}()
	<-done
	high.Unlock()
	if errs := take(); len(errs) != 0 {
		t.Fatalf("locks of two goroutines were mixed up: %q", errs)
	}
	var plain RWMutex
	Nest(&plain)
	Nest(plain.RLocker())
}

// TestPanicsByDefault: without a report function an inversion panics, so
// a test that takes the path fails even outside the engine's own tests.
func TestPanicsByDefault(t *testing.T) {
	c := NewChecker(nil)
	var a, b Mutex
	a.Init(c, "a", 1)
	b.Init(c, "b", 2)
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(error).Error(), "a (rank 1) taken while holding b (rank 2)") {
			t.Fatalf("recovered %v, want the inversion", r)
		}
	}()
	b.Lock()
	defer b.Unlock()
	a.Lock()
	t.Fatal("inversion not reported")
}
