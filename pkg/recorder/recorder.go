package recorder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sort"
	"time"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/redact"
	"memsvc.dev/memsvc/pkg/spool"
)

// Defaults of Config.
const (
	DefaultBatchMaxRecords = 50
	DefaultBatchMaxBytes   = 8 << 20
	DefaultFlushInterval   = time.Second
)

// Backoff after a retryable failure: batches are spooled without trying
// the server until it ends. It starts at minBackoff, doubles per failure up
// to maxBackoff, and a Retry-After from the server replaces it.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
)

// Sender delivers raw batches: *client.Client, or an engine in process.
type Sender interface {
	EncodeBatchRaw(ctx context.Context, req *memory.EncodeBatchStoreRawRequest) (*memory.EncodeBatchStoreRawResponse, error)
}

// Config configures a Recorder.
type Config struct {
	// Sender delivers batches; nil spools everything (no server).
	Sender Sender
	// Spool is the spool directory; required.
	Spool *spool.Dir
	// Logger receives notes about rejected lines, spooled and replayed
	// batches; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// IDs makes the client-generated record ids; nil makes a UUIDv7
	// source.
	IDs *memory.IDSource
	// WorkDir is recorded as metadata recorder_cwd; "" leaves it out.
	WorkDir string
	// MaxEventBytes bounds an input line (DefaultMaxEventBytes).
	MaxEventBytes int
	// MaxBatchRecords bounds a batch (DefaultBatchMaxRecords); at most
	// memory.MaxBatchRecords.
	MaxBatchRecords int
	// MaxBatchBytes bounds the estimated JSON size of a batch
	// (DefaultBatchMaxBytes), far below the server's 64 MiB body limit.
	MaxBatchBytes int
	// FlushInterval is how long an incomplete batch may wait for more
	// input (DefaultFlushInterval).
	FlushInterval time.Duration
	// Ticks, when set, replaces the flush-interval ticker (tests).
	Ticks <-chan time.Time
	// DedupeWindow is how many recent event identities are remembered
	// (DefaultDedupeWindow).
	DedupeWindow int
}

// Stats counts what a Recorder did.
type Stats struct {
	Accepted    int // valid new events (not duplicates)
	Duplicate   int // events dropped as duplicates
	Rejected    int // input lines or events refused (too long, invalid)
	Sent        int // accepted events the server acknowledged
	Spooled     int // records written to the spool
	Replayed    int // spooled records the server acknowledged
	Quarantined int // spool files quarantined as malformed
	Refused     int // records the server refused as invalid (quarantined)
	Lost        int // records neither sent nor spooled (the spool failed)
}

func (s Stats) String() string {
	out := fmt.Sprintf("accepted=%d duplicate=%d rejected=%d sent=%d spooled=%d replayed=%d quarantined=%d",
		s.Accepted, s.Duplicate, s.Rejected, s.Sent, s.Spooled, s.Replayed, s.Quarantined)
	if s.Refused > 0 {
		out += fmt.Sprintf(" refused=%d", s.Refused)
	}
	if s.Lost > 0 {
		out += fmt.Sprintf(" lost=%d", s.Lost)
	}
	return out
}

// Recorder runs the capture pipeline. It is not safe for concurrent use;
// make one per run.
type Recorder struct {
	cfg Config
	log *slog.Logger
	win *window

	stats Stats

	blocked    *SendError // stop sending: the server refused the key or answered oddly
	holdUntil  time.Time  // no attempts before this (backoff)
	backoff    time.Duration
	spooledRun bool  // spooled since the last spool flush
	readErr    error // the input broke off
	lostErr    error // the spool could not be written
}

// New checks cfg and returns a Recorder.
func New(cfg Config) (*Recorder, error) {
	if cfg.Spool == nil {
		return nil, errors.New("recorder: a spool directory is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IDs == nil {
		cfg.IDs = memory.NewIDSource(cfg.Now, nil)
	}
	if cfg.MaxEventBytes <= 0 {
		cfg.MaxEventBytes = DefaultMaxEventBytes
	}
	if cfg.MaxBatchRecords <= 0 {
		cfg.MaxBatchRecords = DefaultBatchMaxRecords
	}
	if cfg.MaxBatchRecords > memory.MaxBatchRecords {
		return nil, fmt.Errorf("recorder: batch size %d exceeds the server's limit of %d", cfg.MaxBatchRecords, memory.MaxBatchRecords)
	}
	if cfg.MaxBatchBytes <= 0 {
		cfg.MaxBatchBytes = DefaultBatchMaxBytes
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.DedupeWindow <= 0 {
		cfg.DedupeWindow = DefaultDedupeWindow
	}
	return &Recorder{cfg: cfg, log: cfg.Logger, win: newWindow(cfg.DedupeWindow)}, nil
}

// Stats returns the counts so far.
func (r *Recorder) Stats() Stats { return r.stats }

// item is one input line, converted (or the reason it was not).
type item struct {
	e   entry
	err error
}

// Ingest flushes pending spool files, then reads Capture Events (JSON
// lines) from in until EOF: each valid event is redacted, checked for
// duplicates, batched and sent; a batch that cannot be sent is spooled.
// A line that is too long or not a valid event is reported, counted and
// skipped; the lines around it go through.
//
// The error is nil when everything read was sent or spooled for a
// retryable reason (server down, 429, 5xx). It is non-nil when lines were
// rejected, when the server refused the API key or records, when it
// answered something unexpected (the records are spooled), or when the
// spool itself failed.
func (r *Recorder) Ingest(ctx context.Context, in io.Reader) error {
	r.FlushSpool(ctx)

	items := make(chan item, 8)
	done := make(chan struct{})
	defer close(done)
	go r.read(in, items, done)

	ticks := r.cfg.Ticks
	if ticks == nil {
		t := time.NewTicker(r.cfg.FlushInterval)
		defer t.Stop()
		ticks = t.C
	}
	var batch []entry
	size := 0
	flush := func() {
		r.flush(ctx, batch)
		batch, size = nil, 0
	}
	for {
		select {
		case it, ok := <-items:
			if !ok {
				flush()
				return r.Err()
			}
			if it.err != nil {
				if errors.Is(it.err, ErrLineTooLong) || errors.Is(it.err, ErrInvalidEvent) {
					r.stats.Rejected++
					r.log.Warn("input line rejected", "err", it.err)
				} else {
					r.readErr = it.err
				}
				continue
			}
			if !r.accept(it.e) {
				continue
			}
			if len(batch) > 0 && size+it.e.size > r.cfg.MaxBatchBytes {
				flush()
			}
			batch = append(batch, it.e)
			size += it.e.size
			if len(batch) >= r.cfg.MaxBatchRecords {
				flush()
			}
		case <-ticks:
			if len(batch) > 0 {
				flush()
			}
		case <-ctx.Done():
			// Keep what was already read: spool it with the batch.
			for drained := false; !drained; {
				select {
				case it, ok := <-items:
					if ok && it.err == nil && r.accept(it.e) {
						batch = append(batch, it.e)
					}
					drained = !ok
				default:
					drained = true
				}
			}
			r.spool(batch, ctx.Err())
			return errors.Join(fmt.Errorf("ingest: %w", ctx.Err()), r.Err())
		}
	}
}

// read turns input lines into items until EOF or a read error.
func (r *Recorder) read(in io.Reader, items chan<- item, done <-chan struct{}) {
	defer close(items)
	lr := NewLineReader(in, r.cfg.MaxEventBytes)
	for {
		line, n, err := lr.Next()
		var it item
		switch {
		case errors.Is(err, io.EOF):
			return
		case err != nil:
			it.err = err
		case len(bytes.TrimSpace(line)) == 0:
			continue
		default:
			it.e, it.err = r.convert(line)
			var ee *EventError
			if errors.As(it.err, &ee) {
				ee.Line = n
			}
		}
		select {
		case items <- it:
		case <-done:
			return
		}
		if err != nil && !errors.Is(err, ErrLineTooLong) {
			return
		}
	}
}

func (r *Recorder) convert(line []byte) (entry, error) {
	ev, err := ParseEvent(line)
	if err != nil {
		return entry{}, err
	}
	return toEntry(&ev, r.cfg.IDs.New(), r.cfg.WorkDir)
}

// Record runs events through the pipeline as Ingest does with input lines
// (without flushing the spool first): validation, redaction, duplicate
// dropping, batching, sending and spooling. It returns what Ingest would.
func (r *Recorder) Record(ctx context.Context, events []Event) error {
	var batch []entry
	size := 0
	for i := range events {
		ev := events[i]
		if err := ev.Validate(); err != nil {
			r.stats.Rejected++
			r.log.Warn("event rejected", "err", err)
			continue
		}
		id := ev.RecordID
		if id.IsNil() {
			id = r.cfg.IDs.New()
		}
		e, err := toEntry(&ev, id, r.cfg.WorkDir)
		if err != nil {
			r.stats.Rejected++
			r.log.Warn("event rejected", "err", err)
			continue
		}
		if !ev.RecordID.IsNil() {
			e.key = dedupeKey{} // the server drops a repeated id
		}
		if !r.accept(e) {
			continue
		}
		if len(batch) > 0 && (len(batch) >= r.cfg.MaxBatchRecords || size+e.size > r.cfg.MaxBatchBytes) {
			r.flush(ctx, batch)
			batch, size = nil, 0
		}
		batch = append(batch, e)
		size += e.size
	}
	r.flush(ctx, batch)
	return r.Err()
}

// accept drops an event seen recently in this run and counts it.
func (r *Recorder) accept(e entry) bool {
	if e.key != (dedupeKey{}) {
		if r.win.has(e.key) {
			r.stats.Duplicate++
			return false
		}
		r.win.add(e.key)
	}
	r.stats.Accepted++
	return true
}

// Err summarises what makes the run a failure so far (nil if nothing).
func (r *Recorder) Err() error {
	var errs []error
	if r.readErr != nil {
		errs = append(errs, fmt.Errorf("read input: %w", r.readErr))
	}
	if r.stats.Rejected > 0 {
		errs = append(errs, fmt.Errorf("%w: %d input line(s) or event(s) rejected", ErrInvalidEvent, r.stats.Rejected))
	}
	if r.blocked != nil {
		errs = append(errs, fmt.Errorf("%w; undelivered records stay spooled in %s for the next run", r.blocked, r.cfg.Spool.Path()))
	}
	if r.stats.Refused > 0 {
		errs = append(errs, fmt.Errorf("server refused %d record(s) as invalid; they are quarantined in %s", r.stats.Refused, r.cfg.Spool.Path()))
	}
	if r.lostErr != nil {
		errs = append(errs, fmt.Errorf("%d record(s) lost: %w", r.stats.Lost, r.lostErr))
	}
	return errors.Join(errs...)
}

// flush checks a batch against the other recorder processes' recent
// events and delivers (or spools) what is left.
func (r *Recorder) flush(ctx context.Context, batch []entry) {
	if len(batch) == 0 {
		return
	}
	kept, dropped, err := claim(ctx, r.cfg.Spool, r.cfg.DedupeWindow, batch)
	if err != nil {
		r.log.Warn("cross-process duplicate check incomplete", "err", err)
	}
	r.stats.Duplicate += dropped
	r.stats.Accepted -= dropped
	if len(kept) == 0 {
		return
	}
	reqs := make([]memory.EncodeStoreRawRequest, len(kept))
	for i := range kept {
		reqs[i] = kept[i].req
	}
	if why := r.holding(); why != nil {
		r.spool(kept, why)
		return
	}
	d := r.deliver(ctx, reqs)
	r.stats.Sent += d.sent
	if len(d.refused) > 0 {
		r.quarantine(pick(kept, d.refused), d.refuseErr)
	}
	if len(d.failed) > 0 {
		r.spool(pick(kept, d.failed), d.err)
		r.failed(d)
		return
	}
	r.backoff, r.holdUntil = 0, time.Time{}
	if r.spooledRun {
		// The server is back: send what was spooled meanwhile.
		r.FlushSpool(ctx)
	}
}

// holding returns why nothing should be sent now, or nil.
func (r *Recorder) holding() error {
	switch {
	case r.blocked != nil:
		return fmt.Errorf("not sent: %w", r.blocked)
	case r.cfg.Sender == nil:
		return errors.New("no server configured")
	case r.cfg.Now().Before(r.holdUntil):
		return fmt.Errorf("server unavailable; next attempt after %s", r.holdUntil.Format(time.RFC3339))
	}
	return nil
}

// failed records what a failed delivery means for the rest of the run.
func (r *Recorder) failed(d delivery) {
	if d.out != retry {
		r.blocked = &SendError{Status: d.status, Err: d.err, out: d.out}
		return
	}
	wait := retryAfter(d.err)
	if wait == 0 {
		r.backoff = min(max(2*r.backoff, minBackoff), maxBackoff)
		wait = r.backoff
	}
	r.holdUntil = r.cfg.Now().Add(wait)
}

// delivery is the result of sending records: indices into the request
// slice of those refused as invalid and of those not delivered.
type delivery struct {
	sent      int
	duplicate int // acknowledged as already stored
	refused   []int
	refuseErr error
	failed    []int // a suffix of the requests
	out       outcome
	status    int
	err       error
}

// errBadAnswer marks a 2xx answer that is not the expected one.
var errBadAnswer = errors.New("unexpected answer")

// deliver sends reqs as one atomic batch. When the server refuses it as
// invalid, the records are sent one by one so that a single bad record does
// not hold back the good ones.
func (r *Recorder) deliver(ctx context.Context, reqs []memory.EncodeStoreRawRequest) delivery {
	var d delivery
	dups, status, err := r.send(ctx, reqs)
	if err == nil {
		d.sent, d.duplicate = len(reqs), dups
		return d
	}
	out := classify(err, status)
	if errors.Is(err, errBadAnswer) {
		out = fatal
	}
	if out != rejected || len(reqs) == 1 {
		all := indices(0, len(reqs))
		if out == rejected {
			d.refused, d.refuseErr = all, err
		} else {
			d.failed, d.out, d.status, d.err = all, out, status, err
		}
		return d
	}
	for i := range reqs {
		dups, status, err := r.send(ctx, reqs[i:i+1])
		if err == nil {
			d.sent++
			d.duplicate += dups
			continue
		}
		out := classify(err, status)
		if errors.Is(err, errBadAnswer) {
			out = fatal
		}
		if out == rejected {
			d.refused = append(d.refused, i)
			d.refuseErr = err
			continue
		}
		d.failed, d.out, d.status, d.err = indices(i, len(reqs)), out, status, err
		break
	}
	return d
}

// send makes one batch call and returns how many records the server
// already had, and the HTTP status of a failed call.
func (r *Recorder) send(ctx context.Context, reqs []memory.EncodeStoreRawRequest) (int, int, error) {
	sctx, status := withStatus(ctx)
	resp, err := r.cfg.Sender.EncodeBatchRaw(sctx, &memory.EncodeBatchStoreRawRequest{Records: reqs})
	if err != nil {
		return 0, *status, err
	}
	if len(resp.Results) != len(reqs) {
		return 0, *status, fmt.Errorf("%w: %d result(s) for %d record(s)", errBadAnswer, len(resp.Results), len(reqs))
	}
	dups := 0
	for _, res := range resp.Results {
		if res.Duplicate {
			dups++
		}
	}
	return dups, 0, nil
}

func indices(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func pick[T any](s []T, idx []int) []T {
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = s[j]
	}
	return out
}

// spool writes entries to a new spool file.
func (r *Recorder) spool(es []entry, why error) {
	if len(es) == 0 {
		return
	}
	name, err := r.writeSpool(es)
	if err != nil {
		r.stats.Lost += len(es)
		r.lostErr = err
		r.log.Error("records lost: cannot spool them", "records", len(es), "err", err, "cause", why)
		return
	}
	r.stats.Spooled += len(es)
	r.spooledRun = true
	if r.cfg.Sender == nil {
		r.log.Info("queued in the spool", "records", len(es), "file", filepath.Join(r.cfg.Spool.Path(), name))
		return
	}
	r.log.Warn("send failed; spooled batch", "records", len(es), "file", filepath.Join(r.cfg.Spool.Path(), name), "err", why)
}

func (r *Recorder) writeSpool(es []entry) (string, error) {
	lines := make([][]byte, len(es))
	for i := range es {
		b, err := json.Marshal(&es[i].req)
		if err != nil {
			return "", fmt.Errorf("encode record: %w", err)
		}
		lines[i] = b
	}
	return r.cfg.Spool.Write(lines)
}

// quarantine keeps records the server refused in a quarantined spool
// file: they are not retried, but nothing is thrown away.
func (r *Recorder) quarantine(es []entry, why error) {
	r.stats.Refused += len(es)
	name, err := r.writeSpool(es)
	if err == nil {
		name, err = r.cfg.Spool.Quarantine(name)
	}
	if err != nil {
		r.stats.Lost += len(es)
		r.lostErr = err
		r.log.Error("records refused by the server and lost", "records", len(es), "err", err, "cause", why)
		return
	}
	r.log.Error("server refused records; quarantined them", "records", len(es), "file", filepath.Join(r.cfg.Spool.Path(), name), "err", why)
}

// FlushSpool sends pending spool files, oldest first, including files
// written while it runs. It stops at the first failure that is not the
// file's fault (the remaining files wait for a later run, so no file
// overtakes an older one); a malformed file is quarantined and the flush
// goes on. Only one recorder process flushes a spool directory at a time:
// if another one is at it, FlushSpool returns at once. It returns what Err
// returns.
func (r *Recorder) FlushSpool(ctx context.Context) error {
	unlock, err := r.cfg.Spool.TryLock(flushLock)
	if errors.Is(err, spool.ErrLocked) {
		r.log.Info("another recorder is flushing the spool; not flushing here")
		return r.Err()
	}
	if err != nil {
		r.log.Warn("spool not flushed", "err", err)
		return r.Err()
	}
	defer unlock()
	r.flushPending(ctx)
	return r.Err()
}

// flushLock is the spool lock held while flushing.
const flushLock = "flush"

// flushPending sends pending files oldest first, listing the directory
// again when it is through, until no newer file has appeared, a failure
// stops it, or ctx ends. The caller holds the flush lock.
func (r *Recorder) flushPending(ctx context.Context) {
	r.spooledRun = false
	done := "" // the newest file handled; older ones are gone
	for {
		names, err := r.cfg.Spool.Pending()
		if err != nil {
			r.log.Warn("spool not flushed", "err", err)
			return
		}
		names = names[sort.SearchStrings(names, done+"\x00"):]
		if len(names) == 0 {
			return
		}
		for _, name := range names {
			if ctx.Err() != nil || r.holding() != nil || !r.flushFile(ctx, name) {
				return
			}
			done = name
		}
	}
}

// flushFile sends one spool file in chunks, keeping the unsent remainder
// in the file after each chunk. It reports whether the flush may go on
// with the next file.
//
// A retryable failure stops the flush but does not start the backoff: the
// new input still gets its own attempt, so one spooled batch the server
// keeps failing on cannot hold back everything recorded after it.
func (r *Recorder) flushFile(ctx context.Context, name string) bool {
	lines, reqs, err := r.readSpoolFile(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true // another process took it
	case errors.Is(err, spool.ErrMalformed):
		bad, qerr := r.cfg.Spool.Quarantine(name)
		if qerr != nil {
			r.log.Error("malformed spool file not quarantined", "file", name, "err", qerr)
			return true
		}
		r.stats.Quarantined++
		r.log.Warn("quarantined malformed spool file", "file", filepath.Join(r.cfg.Spool.Path(), bad), "err", err)
		return true
	case err != nil:
		r.log.Warn("spool file not read", "file", name, "err", err)
		return true
	}
	for len(reqs) > 0 {
		n, size := 0, 0
		for n < len(reqs) && n < r.cfg.MaxBatchRecords && (n == 0 || size+len(lines[n]) <= r.cfg.MaxBatchBytes) {
			size += len(lines[n])
			n++
		}
		d := r.deliver(ctx, reqs[:n])
		r.stats.Replayed += d.sent
		if d.sent > 0 {
			r.log.Info("replayed spooled records", "file", name, "records", d.sent, "already_stored", d.duplicate)
		}
		if len(d.refused) > 0 {
			r.stats.Refused += len(d.refused)
			bad, err := r.cfg.Spool.Write(pick(lines[:n], d.refused))
			if err == nil {
				bad, err = r.cfg.Spool.Quarantine(bad)
			}
			if err != nil {
				r.stats.Lost += len(d.refused)
				r.lostErr = err
			}
			r.log.Error("server refused spooled records; quarantined them", "records", len(d.refused), "file", bad, "err", d.refuseErr)
		}
		var restLines [][]byte
		if len(d.failed) > 0 {
			restLines = append(pick(lines[:n], d.failed), lines[n:]...)
		} else {
			restLines = lines[n:]
		}
		if err := r.cfg.Spool.Rewrite(name, restLines); err != nil {
			// The old file stays; records already sent will be
			// acknowledged as duplicates when it is replayed.
			r.log.Warn("spool file not updated after a partial send", "file", name, "err", err)
			return false
		}
		if len(d.failed) > 0 {
			if d.out != retry {
				r.failed(d)
			}
			r.log.Warn("spool flush stopped; the rest waits for the next run", "file", name, "err", d.err)
			return false
		}
		lines, reqs = lines[n:], reqs[n:]
	}
	return true
}

// readSpoolFile reads a spool file and decodes its records, redacting them
// again (redaction is idempotent, and the file may come from an older
// recorder with a weaker redactor).
func (r *Recorder) readSpoolFile(name string) ([][]byte, []memory.EncodeStoreRawRequest, error) {
	lines, err := r.cfg.Spool.Read(name)
	if err != nil {
		return nil, nil, err
	}
	reqs := make([]memory.EncodeStoreRawRequest, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal(l, &reqs[i]); err != nil {
			return nil, nil, fmt.Errorf("%w: record %d: %v", spool.ErrMalformed, i+1, jsonProblem(err))
		}
		if reqs[i].RecordID == nil || reqs[i].RecordID.IsNil() {
			return nil, nil, fmt.Errorf("%w: record %d has no record_id", spool.ErrMalformed, i+1)
		}
		if len(reqs[i].Content.Blocks) == 0 {
			return nil, nil, fmt.Errorf("%w: record %d has no content", spool.ErrMalformed, i+1)
		}
		redactRequest(&reqs[i])
		b, err := json.Marshal(&reqs[i])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: record %d: %v", spool.ErrMalformed, i+1, err)
		}
		lines[i] = b
	}
	return lines, reqs, nil
}

// redactRequest applies redaction to a request read back from the spool.
func redactRequest(req *memory.EncodeStoreRawRequest) {
	req.SessionID = redact.Text(req.SessionID)
	for _, p := range []**string{&req.TurnID, &req.TopicID} {
		if *p != nil {
			s := redact.Text(**p)
			*p = &s
		}
	}
	for i := range req.Content.Blocks {
		b := &req.Content.Blocks[i]
		if b.Modality == memory.ModalityText && utf8.Valid(b.Data) {
			b.Data = memory.Bytes(redact.Text(string(b.Data)))
		}
	}
	if len(req.Metadata) > 0 {
		if red, err := redact.JSON(req.Metadata); err == nil {
			req.Metadata = memory.JSON(red)
		}
	}
	if req.Meta != nil {
		if m, _, err := redactMeta(req.Meta); err == nil {
			req.Meta = m
		}
	}
}
