package server

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
)

// events records what the actors of a test did, in order.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, fmt.Sprintf(format, args...))
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.log)
}

// blocker is an actor that runs until interrupted. With a release
// channel it returns only once that is closed too, as a drain takes time.
func blocker(ev *events, name string, release ...chan struct{}) actor {
	stop := make(chan struct{})
	var once sync.Once
	return actor{
		name: name,
		execute: func() error {
			<-stop
			for _, r := range release {
				<-r
			}
			ev.add("%s returned", name)
			return nil
		},
		interrupt: func(error) {
			ev.add("%s interrupted", name)
			once.Do(func() { close(stop) })
		},
	}
}

// runGroup runs g with a bound on the time it may take.
func runGroup(t *testing.T, g *group) error {
	t.Helper()
	res := make(chan error, 1)
	go func() { res <- g.run() }()
	return testkit.Receive(t, res, 20*time.Second, "the group to stop")
}

// TestGroupStopsStagesInReverse: when one actor returns, the stages stop
// from the last added to the first; the actors of a stage are all
// interrupted before any of them is waited for, and a stage is interrupted
// only after every actor of the later stages has returned.
func TestGroupStopsStagesInReverse(t *testing.T) {
	ev := &events{}
	trigger := make(chan struct{})
	httpDrained, grpcDrained := make(chan struct{}), make(chan struct{})
	var g group
	g.stage(blocker(ev, "loop-a"), blocker(ev, "loop-b"))
	g.stage(blocker(ev, "http", httpDrained), blocker(ev, "grpc", grpcDrained))
	g.stage(actor{
		name:      "signal",
		execute:   func() error { <-trigger; ev.add("signal returned"); return nil },
		interrupt: func(error) { ev.add("signal interrupted") },
	})
	res := make(chan error, 1)
	go func() { res <- g.run() }()
	close(trigger)
	// Both transports are interrupted while neither has drained.
	testkit.WaitFor(t, 10*time.Second, "the transports interrupted together", func() bool {
		log := ev.list()
		return slices.Contains(log, "http interrupted") && slices.Contains(log, "grpc interrupted")
	}, func() string { return fmt.Sprintf("%q", ev.list()) })
	close(httpDrained)
	close(grpcDrained)
	if err := testkit.Receive(t, res, 20*time.Second, "the group to stop"); err != nil {
		t.Fatalf("run: %v", err)
	}
	log := ev.list()
	pos := func(s string) int {
		i := slices.Index(log, s)
		if i < 0 {
			t.Fatalf("%q never happened: %q", s, log)
		}
		return i
	}
	if pos("signal returned") != 0 {
		t.Fatalf("the signal did not come first: %q", log)
	}
	// The loops stop only after both transports have, however long their
	// drain takes.
	for _, loop := range []string{"loop-a", "loop-b"} {
		for _, tr := range []string{"http", "grpc"} {
			if pos(loop+" interrupted") < pos(tr+" returned") {
				t.Errorf("%s was interrupted before %s returned: %q", loop, tr, log)
			}
		}
	}
	if len(log) != 2*4+2 {
		t.Errorf("events %q", log)
	}
}

// TestGroupReturnsFirstError: an actor that fails stops the group, the
// others are interrupted with its error, and run returns it.
func TestGroupReturnsFirstError(t *testing.T) {
	boom := errors.New("listener failed")
	ev := &events{}
	var got []error
	var mu sync.Mutex
	var g group
	b := blocker(ev, "loop")
	inner := b.interrupt
	b.interrupt = func(err error) {
		mu.Lock()
		got = append(got, err)
		mu.Unlock()
		inner(err)
	}
	g.stage(b)
	g.stage(actor{name: "http", execute: func() error { return boom }, interrupt: func(error) {}})
	if err := runGroup(t, &g); !errors.Is(err, boom) {
		t.Fatalf("run returned %v", err)
	}
	if len(got) != 1 || !errors.Is(got[0], boom) {
		t.Fatalf("interrupts saw %v", got)
	}
	if log := strings.Join(ev.list(), ", "); log != "loop interrupted, loop returned" {
		t.Fatalf("events %s", log)
	}
}

func TestGroupEmpty(t *testing.T) {
	var g group
	if err := runGroup(t, &g); err != nil {
		t.Fatal(err)
	}
}
