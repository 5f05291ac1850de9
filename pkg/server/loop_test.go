package server

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/metrics"
)

// panickyEngine is background work whose decay round panics and whose dream
// round records its request.
type panickyEngine struct {
	dreams []memory.DreamTickRequest
}

func (*panickyEngine) AdvanceDecay(context.Context) (*memory.DecayTickResponse, error) {
	panic("decay round exploded")
}

func (p *panickyEngine) DreamAll(_ context.Context, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error) {
	p.dreams = append(p.dreams, *req)
	return &memory.DreamTickResponse{}, nil
}

// TestBackgroundLoops: serve's loops take their intervals from the
// configuration, the decay loop catches up at once and counts a panic in
// memsvc_decay_panics_total, and the dream loop runs bounded rounds with
// the default filters.
func TestBackgroundLoops(t *testing.T) {
	cfg := config.Defaults()
	cfg.Decay.BackgroundIntervalSecs = 7
	cfg.Dream.BackgroundIntervalSecs = 11
	reg := prometheus.NewRegistry()
	met, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	eng := &panickyEngine{}
	loops := backgroundLoops(cfg, eng, met, slog.New(slog.DiscardHandler))
	if len(loops) != 2 {
		t.Fatalf("%d loops, want decay and dream", len(loops))
	}
	decay, dream := loops[0], loops[1]
	if decay.opts.name != "decay" || decay.opts.interval != 7*time.Second || !decay.opts.runFirst {
		t.Fatalf("decay loop %+v", decay.opts)
	}
	if dream.opts.name != "dream" || dream.opts.interval != 11*time.Second || dream.opts.runFirst {
		t.Fatalf("dream loop %+v", dream.opts)
	}

	// The first decay round panics; the loop recovers, counts it, and is
	// stopped while it waits out its back-off.
	ctx, cancel := context.WithCancel(context.Background())
	decay.opts.after = func(time.Duration) <-chan time.Time {
		cancel()
		return make(chan time.Time)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runLoop(ctx, decay.opts, decay.work)
	}()
	testkit.Receive(t, done, 10*time.Second, "the decay loop to stop")
	if got := counter(t, reg, "memsvc_decay_panics_total"); got != 1 {
		t.Fatalf("memsvc_decay_panics_total = %v, want 1", got)
	}

	if err := dream.work(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := memory.DefaultDreamTickRequest()
	want.MaxGroups = dreamGroupsPerRound
	if len(eng.dreams) != 1 || !reflect.DeepEqual(eng.dreams[0], want) {
		t.Fatalf("dream rounds %+v, want one %+v", eng.dreams, want)
	}
}

// counter is the value of the counter name in reg.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}

// TestWarnShortKeys: keys under access.MinKeyLength are named by position
// with their length, never their value, and only when auth is on.
func TestWarnShortKeys(t *testing.T) {
	cfg := config.Defaults()
	cfg.Auth.APIKeys = []string{"0123456789abcdef", "hunter2", "ключ-ключ-ключ-ключ"}
	var buf strings.Builder
	log := slog.New(slog.NewTextHandler(&buf, nil))
	warnShortKeys(log, cfg)
	if buf.Len() != 0 {
		t.Fatalf("auth off, yet: %s", buf.String())
	}
	cfg.Auth.Enabled = true
	warnShortKeys(log, cfg)
	out := buf.String()
	if strings.Count(out, "short API key") != 1 || !strings.Contains(out, "key=auth.api_keys[1] characters=7") {
		t.Fatalf("warnings:\n%s", out)
	}
	if strings.Contains(out, "hunter2") {
		t.Fatalf("a key's value reached the log:\n%s", out)
	}
}

// TestLoopReportsRounds: each round that ends is reported with its
// result, a round the disk guard skipped as skipped, and a round cut
// short by the shutdown not at all.
func TestLoopReportsRounds(t *testing.T) {
	ready := func(time.Duration) <-chan time.Time {
		c := make(chan time.Time, 1)
		c <- time.Time{}
		return c
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var results []string
	calls := 0
	runLoop(ctx, loopOptions{name: "test", interval: time.Hour, runFirst: true, maxBackoff: time.Second,
		log: slog.New(slog.DiscardHandler), after: ready, onRound: func(r string) { results = append(results, r) }},
		func(context.Context) error {
			calls++
			switch calls {
			case 1:
				return nil
			case 2:
				return errors.New("a failed round")
			case 3:
				return errRoundSkipped
			}
			cancel()
			return errors.New("cut short")
		})
	want := []string{metrics.RoundOK, metrics.RoundError, metrics.RoundSkipped}
	if !reflect.DeepEqual(results, want) {
		t.Fatalf("rounds reported %v, want %v", results, want)
	}
}
