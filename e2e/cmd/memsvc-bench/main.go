// Command memsvc-bench measures memsvc end to end, the way a user runs it:
// real `memsvc serve` processes on temporary data directories, driven over
// loopback HTTP with pkg/client, and the memsvc-mcp stdio proxy side by side
// with the reference MCP memory server from npm.
//
// For every corpus size (--sizes) it starts a fresh server, loads generated
// memories (textindex.CorpusGen text, optional 384-dimension embeddings with
// --embeddings) and raw journal sessions, then times a fixed number of
// operations per section: store, batch store, raw batch ingest, recall
// (text, vector, hybrid, no query), associate, timeline, decay and dream
// ticks, streaming export and import, cold start-up, and the server's
// resident memory per record. Results are a Markdown report on stdout (and
// JSON with --json); progress goes to stderr.
//
// Every section is bounded by its operation count and the whole run by
// --timeout. Child processes are killed and temporary directories removed
// on every exit path, Ctrl-C included. Run it from the repository root:
//
//	go run ./e2e/cmd/memsvc-bench --sizes 1000,10000,100000 --embeddings
//	go run ./e2e/cmd/memsvc-bench --quick --sizes 1000 --skip-peer
//
// The recall-quality subcommand measures what recall finds rather than how
// fast: it stores a dataset of conversations (e2e/testdata/recall), asks
// its questions and scores the answers against the turns that hold the
// evidence, beside a plain BM25 index of the same turns (see recall.go):
//
//	go run ./e2e/cmd/memsvc-bench recall-quality --dataset e2e/testdata/recall/dialogue.jsonl
//
// Exit codes: 0 success, 1 the run failed (the report of what was measured
// is still printed), 2 the command line was wrong.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError is a wrong command line (exit code 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "memsvc-bench: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "memsvc-bench: %v\n", err)
		return 1
	}
}

// whyStopped says why a run that failed once ctx had ended stopped: it ran
// past --timeout or it was interrupted. Other errors pass unchanged.
func whyStopped(ctx context.Context, timeout time.Duration, err error) error {
	switch {
	case err == nil || ctx.Err() == nil:
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("run exceeded --timeout %v: %w", timeout, err)
	default:
		return fmt.Errorf("interrupted: %w", err)
	}
}

// run is the whole program: parse, validate, measure, report.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "recall-quality" {
		return runRecall(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "targets" {
		return runTargets(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "rankeval" {
		return runRankeval(args[1:], stdout, stderr)
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg == nil { // --help
		return nil
	}
	return measureAndReport(ctx, cfg, stdout, stderr, (*bench).run, (*bench).report)
}

// measureAndReport runs measure on a new bench within cfg.timeout, then has
// report write what was measured, with the run's error if it failed (a
// failed run still prints its report).
func measureAndReport(ctx context.Context, cfg *config, stdout, stderr io.Writer,
	measure func(*bench, context.Context) error, report func(b *bench, w io.Writer, runErr error) error) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	b, err := newBench(cfg, stderr)
	if err != nil {
		return err
	}
	defer b.close()
	runErr := whyStopped(ctx, cfg.timeout, measure(b, ctx))
	if err := report(b, stdout, runErr); err != nil {
		return errors.Join(runErr, err)
	}
	return runErr
}
