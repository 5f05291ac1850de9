package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/metrics"
)

// backgroundWork is what the background loops ask of the engine.
type backgroundWork interface {
	AdvanceDecay(ctx context.Context) (*memory.DecayTickResponse, error)
	DreamTick(ctx context.Context, req *memory.DreamTickRequest) (*memory.DreamTickResponse, error)
}

// loop is one background loop: how it runs and what it does each round.
type loop struct {
	opts loopOptions
	work func(context.Context) error
}

// dreamGroupsPerRound bounds the work of one background dream round; the
// rest waits for the next round.
const dreamGroupsPerRound = 50

// backgroundLoops returns the loops serve runs: decay, which advances every
// record's clock by the real time elapsed (first right away, to catch up
// on time the server was down) and counts its panics in met; and dream,
// which summarises pending raw entries with the default filters.
func backgroundLoops(cfg *config.Config, eng backgroundWork, met *metrics.Metrics, log *slog.Logger) []loop {
	return []loop{
		{
			opts: loopOptions{
				name: metrics.LoopDecay, interval: time.Duration(cfg.Decay.BackgroundIntervalSecs) * time.Second,
				runFirst: true, maxBackoff: time.Minute, log: log, onPanic: met.DecayPanic,
				onRound: func(result string) { met.BackgroundRound(metrics.LoopDecay, result) },
			},
			work: func(ctx context.Context) error {
				_, err := eng.AdvanceDecay(ctx)
				return err
			},
		},
		{
			opts: loopOptions{
				name: metrics.LoopDream, interval: time.Duration(cfg.Dream.BackgroundIntervalSecs) * time.Second,
				maxBackoff: 5 * time.Minute, log: log,
				onRound: func(result string) { met.BackgroundRound(metrics.LoopDream, result) },
			},
			work: func(ctx context.Context) error {
				req := memory.DefaultDreamTickRequest()
				req.MaxGroups = dreamGroupsPerRound
				_, err := eng.DreamTick(ctx, &req)
				return err
			},
		},
	}
}

// loopOptions describe a background loop.
type loopOptions struct {
	name     string
	interval time.Duration
	// runFirst runs the work once right away (the decay loop catches up
	// on time that passed while the server was down).
	runFirst   bool
	maxBackoff time.Duration
	log        *slog.Logger
	// onPanic is called after a recovered panic (a metric counter).
	onPanic func()
	// onRound is called after each round that did not panic, with its
	// result (metrics.RoundOK, RoundError, RoundSkipped); nil ignores it.
	onRound func(result string)
	// after replaces time.After in tests.
	after func(time.Duration) <-chan time.Time
}

// runLoop runs work every interval until ctx is cancelled. Errors are
// logged and the loop goes on. A panic is recovered, logged with its stack,
// reported through onPanic, and the loop restarts after a back-off that
// starts at one second, doubles up to maxBackoff, and resets once a round
// completes.
func runLoop(ctx context.Context, o loopOptions, work func(context.Context) error) {
	if o.after == nil {
		o.after = time.After
	}
	backoff := time.Second
	first := o.runFirst
	for ctx.Err() == nil {
		ok := runRounds(ctx, o, first, work, func() { backoff = time.Second })
		if ok || ctx.Err() != nil {
			return
		}
		if o.onPanic != nil {
			o.onPanic()
		}
		o.log.Warn("background loop restarting after a panic", "loop", o.name, "backoff", backoff)
		select {
		case <-ctx.Done():
			return
		case <-o.after(backoff):
		}
		backoff = min(2*backoff, o.maxBackoff)
		first = true
	}
}

// errRoundSkipped is the result of a round that did not run (the disk is
// below the free-space floor); it is not a failure.
var errRoundSkipped = errors.New("round skipped")

// runRounds runs rounds until ctx ends (true) or a round panics (false).
func runRounds(ctx context.Context, o loopOptions, first bool, work func(context.Context) error, succeeded func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			o.log.Error("background loop panicked", "loop", o.name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			ok = false
		}
	}()
	for {
		if !first {
			select {
			case <-ctx.Done():
				return true
			case <-o.after(o.interval):
			}
		}
		first = false
		if ctx.Err() != nil {
			return true
		}
		err := work(ctx)
		if ctx.Err() == nil {
			result := metrics.RoundOK
			switch {
			case errors.Is(err, errRoundSkipped):
				result = metrics.RoundSkipped
			case err != nil:
				result = metrics.RoundError
				o.log.Error("background loop round failed", "loop", o.name, "err", err)
			}
			if o.onRound != nil {
				o.onRound(result)
			}
		}
		succeeded()
	}
}
