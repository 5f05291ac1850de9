package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
)

// Bounds of single operations.
const (
	opTimeout      = 2 * time.Minute
	archiveTimeout = 30 * time.Minute // one export or import
	settleBound    = 5 * time.Minute
	settleWindow   = 250 * time.Millisecond
	idleCPU        = 0.1 // fraction of one core below which a server counts as idle
	// memoryQuiet is how long an idle server is left alone before its
	// memory is read: long enough for it to return the garbage of the work
	// before to the OS, as a server left idle does. The server releases
	// only after a whole quiet interval of its 5 s check, so up to 10 s
	// after the last request; until then its size is as stable as after,
	// so waiting for the reading to settle would stop too early. 12 s
	// covers the worst case.
	memoryQuiet = 12 * time.Second
)

// sizeReport is what one corpus size measured.
type sizeReport struct {
	Records    int        `json:"records"`     // curated memories loaded
	RawEntries int        `json:"raw_entries"` // raw journal entries loaded
	Rows       []row      `json:"rows"`
	Memory     *memReport `json:"memory,omitempty"`
	// VectorBytes is what one vector query has to scan: vectors × dims × 4.
	VectorBytes float64 `json:"vector_bytes,omitempty"`
}

// memReport is the server's resident memory (VmRSS) at three moments.
type memReport struct {
	EmptyRSS       int64   `json:"empty_rss_bytes"`   // fresh server, nothing stored
	LoadedRSS      int64   `json:"loaded_rss_bytes"`  // after loading, once idle
	LoadedRecords  int     `json:"loaded_records"`    // curated + raw at that moment
	RestartRSS     int64   `json:"restart_rss_bytes"` // after a cold start, once idle
	RestartRecords int     `json:"restart_records"`   // curated + raw at that moment
	ContentBytes   float64 `json:"content_bytes_per_record"`
}

// perRecord is the growth of RSS over the empty server per record.
func perRecord(rss, empty int64, records int) float64 {
	if records == 0 {
		return 0
	}
	return float64(rss-empty) / float64(records)
}

func (s *sizeReport) add(r row) { s.Rows = append(s.Rows, r) }

// Operation names; the test and the README refer to them.
const (
	opLoad          = "corpus load (batch of 1,000)"
	opStore         = "store (single, synced)"
	opBatch         = "batch store (100 per batch)"
	opRaw           = "raw batch ingest (1,000 per batch)"
	opRecallText    = "recall (text)"
	opRecallTextRO  = "recall (text, reconsolidate=false)"
	opRecallVector  = "recall (vector)"
	opRecallHybrid  = "recall (hybrid)"
	opRecallNoQuery = "recall (no query)"
	opAssociate     = "associate"
	opTimeline      = "timeline"
	opDecay         = "decay tick"
	opDream         = "dream tick"
	opExport        = "export (streaming)"
	opImport        = "import (streaming)"
	opColdStart     = "cold start (to /readiness 200)"
)

// sizeRun is the state of one corpus size's run.
type sizeRun struct {
	b     *bench
	s     *sizeReport
	cnt   counts
	label string
	srv   *server
	cl    *client.Client
	corp  *corpus
	ids   []memory.ID // a spread of loaded records, for associate
	dir   string      // data directory
	home  string
	// window is when the single stores ran, for the timeline.
	winStart, winEnd time.Time
}

// runSize starts a fresh server, loads s.Records memories and measures
// every section.
func (b *bench) runSize(ctx context.Context, s *sizeReport) error {
	r := &sizeRun{b: b, s: s, cnt: b.cfg.counts, label: group(s.Records) + " records"}
	var err error
	if r.dir, err = b.scratch("data"); err != nil {
		return err
	}
	if r.home, err = b.scratch("home"); err != nil {
		return err
	}
	defer func() {
		if r.srv != nil {
			r.srv.kill()
		}
		_ = os.RemoveAll(r.dir)
		_ = os.RemoveAll(r.home)
	}()
	if r.srv, err = startServer(ctx, b.kids, b.cfg.memsvcBin, r.dir, r.home); err != nil {
		return err
	}
	if r.cl, err = newClient(r.srv); err != nil {
		return err
	}
	d := 0
	if b.cfg.embeddings {
		d = dims
	}
	r.corp = newCorpus(b.cfg.seed, d)
	for _, step := range []func(context.Context) error{r.load, r.writes, r.reads, r.ticks, r.archives, r.coldStarts} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// section waits until the server is idle, so the background work of the
// previous section (similarity linking) does not count, then times n
// operations.
func (r *sizeRun) section(ctx context.Context, n int, perOp time.Duration, op func(ctx context.Context, i int) (int, error)) (*timings, error) {
	if _, err := r.b.settle(ctx, r.srv.process); err != nil {
		return nil, err
	}
	return timeOps(ctx, n, perOp, op)
}

// load stores the corpus (curated memories in batches of 1,000, each
// consecutive pair linked, then raw journal sessions) and reads the
// server's memory before and after.
func (r *sizeRun) load(ctx context.Context) error {
	n, s, cl := r.s.Records, r.s, r.cl
	mem := &memReport{}
	var err error
	if mem.EmptyRSS, err = r.srv.rss(); err != nil {
		return err
	}
	s.RawEntries = n / 10
	r.b.logf("%s: loading %s memories and %s raw entries", r.label, group(n), group(s.RawEntries))
	every := max(1, n/r.cnt.associate)
	t, err := r.section(ctx, (n+loadBatch-1)/loadBatch, opTimeout, func(ctx context.Context, i int) (int, error) {
		k := min(loadBatch, n-i*loadBatch)
		resp, err := cl.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: r.corp.records(k), InferAssociations: true})
		if err != nil {
			return 0, err
		}
		for j, res := range resp.Results {
			if (i*loadBatch+j)%every == 0 {
				r.ids = append(r.ids, res.RecordID)
			}
		}
		return k, nil
	})
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	s.add(t.row(opLoad, n, "records/s", "fresh server, empty directory"))
	for done := 0; done < s.RawEntries; done += loadBatch {
		ctx, cancel := context.WithTimeout(ctx, opTimeout)
		_, err := cl.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: r.corp.raw(min(loadBatch, s.RawEntries-done))})
		cancel()
		if err != nil {
			return fmt.Errorf("load raw journal: %w", err)
		}
	}
	settled, err := r.b.settle(ctx, r.srv.process)
	if err != nil {
		return err
	}
	r.b.logf("%s: loaded; server idle after %v", r.label, settled.Round(time.Millisecond))
	if err := r.b.quiet(ctx, r.srv); err != nil {
		return err
	}
	if mem.LoadedRSS, err = r.srv.rss(); err != nil {
		return err
	}
	mem.LoadedRecords = n + s.RawEntries
	mem.ContentBytes = r.corp.contentBytes()
	s.Memory = mem
	return nil
}

// writes times single stores, batch stores and raw batches.
func (r *sizeRun) writes(ctx context.Context) error {
	n, cl := r.s.Records, r.cl
	r.b.logf("%s: writes", r.label)
	if _, err := r.b.settle(ctx, r.srv.process); err != nil {
		return err
	}
	// Requests are generated before the clock starts.
	singles := r.corp.records(r.cnt.store)
	r.winStart = time.Now()
	t, err := timeOps(ctx, r.cnt.store, opTimeout, func(ctx context.Context, i int) (int, error) {
		_, err := cl.EncodeStore(ctx, &singles[i])
		return 1, err
	})
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	r.winEnd = time.Now()
	r.s.add(t.row(opStore, n, "records/s", ""))
	batches := make([]memory.EncodeBatchRequest, r.cnt.batch)
	for i := range batches {
		batches[i] = memory.EncodeBatchRequest{Records: r.corp.records(batchStoreLen), InferAssociations: true}
	}
	t, err = r.section(ctx, r.cnt.batch, opTimeout, func(ctx context.Context, i int) (int, error) {
		_, err := cl.EncodeBatch(ctx, &batches[i])
		return batchStoreLen, err
	})
	if err != nil {
		return fmt.Errorf("batch store: %w", err)
	}
	r.s.add(t.row(opBatch, n, "records/s", ""))
	raws := make([]memory.EncodeBatchStoreRawRequest, r.cnt.rawBatch)
	for i := range raws {
		raws[i] = memory.EncodeBatchStoreRawRequest{Records: r.corp.raw(rawBatchLen)}
	}
	t, err = r.section(ctx, r.cnt.rawBatch, opTimeout, func(ctx context.Context, i int) (int, error) {
		_, err := cl.EncodeBatchRaw(ctx, &raws[i])
		return rawBatchLen, err
	})
	if err != nil {
		return fmt.Errorf("raw batch ingest: %w", err)
	}
	r.s.add(t.row(opRaw, n, "entries/s", fmt.Sprintf("sessions of %d turns", rawSessionLen)))
	return nil
}

// reads times recall of every kind, associate and timeline.
func (r *sizeRun) reads(ctx context.Context) error {
	n, cl, cnt := r.s.Records, r.cl, r.cnt
	r.b.logf("%s: reads", r.label)
	qs := queries(r.b.cfg.seed+1, cnt.recall)
	var qv [][]float32
	if r.corp.dims > 0 {
		for range cnt.recall {
			qv = append(qv, r.corp.vector())
		}
		st, err := cl.Stats(ctx)
		if err != nil {
			return err
		}
		r.s.VectorBytes = float64(st.VectorIndexRecords) * float64(r.corp.dims) * 4
	}
	recall := func(op string, text, vec, reconsolidate bool) error {
		hits := 0
		t, err := r.section(ctx, cnt.recall, opTimeout, func(ctx context.Context, i int) (int, error) {
			req := memory.DefaultRecallQueryRequest()
			req.Reconsolidate = reconsolidate
			if text {
				req.Cue.Text = &qs[i]
			}
			if vec {
				req.Cue.Embedding = qv[i]
			}
			resp, err := cl.RecallQuery(ctx, &req)
			if err == nil {
				hits += len(resp.Memories)
			}
			return 1, err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		r.s.add(t.row(op, n, "queries/s", fmt.Sprintf("limit 10, %.1f hits per query", float64(hits)/float64(cnt.recall))))
		return nil
	}
	kinds := []struct {
		op                       string
		text, vec, reconsolidate bool
	}{
		{opRecallText, true, false, true},
		{opRecallTextRO, true, false, false},
		{opRecallVector, false, true, true},
		{opRecallHybrid, true, true, true},
		{opRecallNoQuery, false, false, true},
	}
	for _, k := range kinds {
		if k.vec && qv == nil {
			continue
		}
		if err := recall(k.op, k.text, k.vec, k.reconsolidate); err != nil {
			return err
		}
	}
	found := 0
	t, err := r.section(ctx, cnt.associate, opTimeout, func(ctx context.Context, i int) (int, error) {
		req := memory.DefaultRecallAssociateRequest()
		req.RecordID = r.ids[i%len(r.ids)]
		resp, err := cl.RecallAssociate(ctx, &req)
		if err == nil {
			found += len(resp.Memories)
		}
		return 1, err
	})
	if err != nil {
		return fmt.Errorf("associate: %w", err)
	}
	r.s.add(t.row(opAssociate, n, "queries/s", fmt.Sprintf("depth 2, limit 10, %.1f memories per query", float64(found)/float64(cnt.associate))))
	found = 0
	t, err = r.section(ctx, cnt.timeline, opTimeout, func(ctx context.Context, i int) (int, error) {
		req := memory.DefaultRecallTimelineRequest()
		req.Granularity = memory.GranularityMinute
		req.Range = memory.TemporalRange{Start: r.winStart.Add(-time.Millisecond), End: r.winEnd.Add(time.Millisecond)}
		resp, err := cl.RecallTimeline(ctx, &req)
		if err == nil {
			for _, bk := range resp.Buckets {
				found += int(bk.Count)
			}
		}
		return 1, err
	})
	if err != nil {
		return fmt.Errorf("timeline: %w", err)
	}
	r.s.add(t.row(opTimeline, n, "queries/s", fmt.Sprintf("window of the single stores, %.0f memories per answer", float64(found)/float64(cnt.timeline))))
	return nil
}

// ticks times decay and dream ticks.
func (r *sizeRun) ticks(ctx context.Context) error {
	n, cl, cnt := r.s.Records, r.cl, r.cnt
	r.b.logf("%s: decay and dream ticks", r.label)
	updated := 0
	t, err := r.section(ctx, cnt.decay, opTimeout, func(ctx context.Context, _ int) (int, error) {
		hour := uint32(3600)
		resp, err := cl.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: &hour})
		if err == nil {
			updated += int(resp.RecordsUpdated)
		}
		return 1, err
	})
	if err != nil {
		return fmt.Errorf("decay tick: %w", err)
	}
	r.s.add(t.row(opDecay, n, "ticks/s", fmt.Sprintf("one hour each, %s records updated per tick", group(updated/cnt.decay))))
	dreamt := 0
	t, err = r.section(ctx, cnt.dream, opTimeout, func(ctx context.Context, _ int) (int, error) {
		req := memory.DefaultDreamTickRequest()
		resp, err := cl.DreamTick(ctx, &req)
		if err == nil {
			dreamt += int(resp.RawRecordsProcessed)
		}
		return 1, err
	})
	if err != nil {
		return fmt.Errorf("dream tick: %w", err)
	}
	st, err := cl.Stats(ctx)
	if err != nil {
		return err
	}
	r.s.add(t.row(opDream, n, "ticks/s", fmt.Sprintf("up to 10 sessions, %s raw entries per tick, %s still pending",
		group(dreamt/cnt.dream), group(int(st.RawJournalPendingDream)))))
	return nil
}

// coldStarts stops the server and starts it again on the same directory,
// timing exec to the first /readiness 200, and reads its memory once it is
// idle after the first restart.
func (r *sizeRun) coldStarts(ctx context.Context) error {
	r.b.logf("%s: cold starts", r.label)
	st, err := r.cl.Stats(ctx)
	if err != nil {
		return err
	}
	mem := r.s.Memory
	mem.RestartRecords = int(st.TotalRecords) + int(st.RawJournalRecords)
	var starts timings
	for i := range r.cnt.restarts {
		if _, err := r.b.settle(ctx, r.srv.process); err != nil {
			return err
		}
		if err := r.srv.stop(); err != nil {
			return fmt.Errorf("stop for a cold start: %w", err)
		}
		r.srv = nil
		srv, err := startServer(ctx, r.b.kids, r.b.cfg.memsvcBin, r.dir, r.home)
		if err != nil {
			return fmt.Errorf("cold start: %w", err)
		}
		r.srv = srv
		starts.d = append(starts.d, srv.ready)
		if i == 0 {
			// Like the memory after loading, once idle: right at
			// readiness the server may still be returning the garbage
			// of its start-up to the OS.
			if _, err := r.b.settle(ctx, r.srv.process); err != nil {
				return err
			}
			if err := r.b.quiet(ctx, r.srv); err != nil {
				return err
			}
			if mem.RestartRSS, err = srv.rss(); err != nil {
				return err
			}
		}
	}
	r.s.add(starts.row(opColdStart, r.s.Records, "", fmt.Sprintf("%s records and raw entries on disk", group(mem.RestartRecords))))
	return r.srv.stop()
}

// archives times streaming exports of the loaded server and imports of
// the archive into fresh, empty servers.
func (r *sizeRun) archives(ctx context.Context) error {
	b, s, cl, n, cnt := r.b, r.s, r.cl, r.s.Records, r.cnt
	b.logf("%s: export and import", r.label)
	dir, err := b.scratch("archive")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "export.cma")
	var size int64
	t, err := r.section(ctx, cnt.export, archiveTimeout, func(ctx context.Context, _ int) (int, error) {
		f, err := os.Create(path)
		if err != nil {
			return 0, err
		}
		req := memory.DefaultExportRequest()
		req.IncludeRawJournal = true
		resp, err := cl.Export(ctx, &req, f)
		if err := errors.Join(err, f.Close()); err != nil {
			return 0, err
		}
		size = int64(resp.SizeBytes)
		return int(resp.RecordCount), nil
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	s.add(t.row(opExport, n, "records/s", fmt.Sprintf("with raw journal, %s archive, %.0f MB/s", mib(size), float64(size)*float64(len(t.d))/t.wall.Seconds()/1e6)))

	// Each import goes to a fresh server; its start is not timed. A
	// server that refuses the archive (a size limit) is a finding to
	// report, not a reason to drop the rest of the run.
	var imp timings
	for range cnt.imports {
		d, err := b.importOnce(ctx, path)
		var refused *memory.Error
		if errors.As(err, &refused) {
			b.logf("%s: import refused: %v", r.label, err)
			s.add(row{Operation: opImport, Records: n, Note: fmt.Sprintf("**refused** (%s archive): %v", mib(size), err)})
			return nil
		}
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		imp.d = append(imp.d, d.took)
		imp.items += d.records
		imp.wall += d.took
	}
	s.add(imp.row(opImport, n, "records/s", fmt.Sprintf("into an empty server, %.0f MB/s", float64(size)*float64(len(imp.d))/imp.wall.Seconds()/1e6)))
	return nil
}

type importResult struct {
	took    time.Duration
	records int
}

func (b *bench) importOnce(ctx context.Context, archive string) (importResult, error) {
	dir, err := b.scratch("import")
	if err != nil {
		return importResult{}, err
	}
	defer os.RemoveAll(dir)
	srv, err := startServer(ctx, b.kids, b.cfg.memsvcBin, filepath.Join(dir, "data"), dir)
	if err != nil {
		return importResult{}, err
	}
	defer srv.kill()
	cl, err := newClient(srv)
	if err != nil {
		return importResult{}, err
	}
	f, err := os.Open(archive)
	if err != nil {
		return importResult{}, err
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(ctx, archiveTimeout)
	defer cancel()
	start := time.Now()
	req := memory.DefaultImportRequest()
	resp, err := cl.Import(ctx, &req, f)
	took := time.Since(start)
	if err != nil {
		return importResult{}, err
	}
	return importResult{took: took, records: int(resp.RecordsImported)}, srv.stop()
}

// quiet leaves an idle server alone for --memory-quiet (memoryQuiet
// unless told otherwise, with --quick too: a shorter wait reads the memory
// before the server has had its quiet interval, so the reading says
// nothing about an idle server).
func (b *bench) quiet(ctx context.Context, srv *server) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-srv.exited:
		return fmt.Errorf("memsvc exited (%v):\n%s", srv.err, srv.tail)
	case <-time.After(b.cfg.memoryQuiet):
		return nil
	}
}

// settle waits until a child is idle (for a server: background
// similarity linking of what was just written is done): under idleCPU of
// one core over two consecutive windows, at most settleBound. It returns
// the time waited.
func (b *bench) settle(ctx context.Context, srv *process) (time.Duration, error) {
	start := time.Now()
	prev, err := srv.cpuTime()
	if err != nil {
		return 0, err
	}
	quiet := 0
	for time.Since(start) < settleBound {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-srv.exited:
			return 0, fmt.Errorf("%s exited (%v):\n%s", filepath.Base(srv.cmd.Path), srv.err, srv.tail)
		case <-time.After(settleWindow):
		}
		cur, err := srv.cpuTime()
		if err != nil {
			return 0, err
		}
		if float64(cur-prev) < idleCPU*float64(settleWindow) {
			quiet++
		} else {
			quiet = 0
		}
		prev = cur
		if quiet == 2 {
			return time.Since(start), nil
		}
	}
	b.logf("%s still busy after %v; measuring anyway", filepath.Base(srv.cmd.Path), settleBound)
	return time.Since(start), nil
}

// newClient returns a pkg/client for srv with its own connection pool.
func newClient(srv *server) (*client.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // loopback only, whatever the environment says
	tr.MaxIdleConnsPerHost = 4
	return client.New(srv.url(), client.Options{HTTPClient: &http.Client{Transport: tr}, UserAgent: "memsvc-bench"})
}
