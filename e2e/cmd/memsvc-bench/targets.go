package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
)

// The targets subcommand measures the latency targets of recall at scale
// in one run, each where it is defined: as a ratio to the GET /health
// round trip of the same server (recall of every kind), as a ratio between
// two sizes (store), as a ratio to the reference MCP memory server (MCP
// search) or as an absolute bound (concurrent clients, recall during a
// consolidation, cold start). It ends with a table of verdicts.
//
// Sections (--sections):
//
//	text           one server grown from 2,000 to 20,000 to 100,000 text
//	               records: single stores at the smallest and largest
//	               size; text recall (with and without reconsolidation)
//	               and recall without a query at 20,000 and 100,000; cold
//	               starts at 100,000, first with the search indexes
//	               persisted, then with security.persist_search_indexes =
//	               false (every start builds them from the records)
//	hybrid         one server of 20,000 records per embedding size (64
//	               and 384 dimensions): recall by text and embedding
//	concurrent     48 clients recalling at once over 40,000 episodic
//	               records that share the corpus vocabulary
//	consolidation  a full consolidation of those 40,000 records while one
//	               client keeps recalling
//	stores         single synced stores over 2,000 records from one client,
//	               then from 16 clients at once
//	encrypted      two data directories of the same 20,000 text records,
//	               one plaintext and one under store encryption, built by
//	               a server that is then stopped; embedded CLI commands
//	               (stats, recall) alternate between them
//	mcp            memsvc-mcp and @modelcontextprotocol/server-memory
//	               searching 2,000 and then 10,000 notes
//
// The recall, store and hybrid sections alternate one GET /health with
// each timed operation on the same client and connection, so the two see
// the same machine. Each request is timed on its own; the ratio is the
// operation's p50 over the health p50 of the same rounds. A store's
// background linking runs after its answer, beside the next round's
// requests, as it does for any client.

// targetScale is how big each section is.
type targetScale struct {
	storeSmall  int   // records when the first single stores are timed
	textMid     int   // text recall at this size ...
	textBig     int   // ... and at this one, with stores and cold starts
	hybrid      int   // records of each hybrid corpus
	dims        []int // embedding dimensions of the hybrid corpora
	crowd       int   // records for the concurrent clients and the consolidation
	clients     int   // concurrent recall clients
	perClient   int   // recalls each of them makes
	mcpNotes    []int // note counts at which MCP search is timed
	mcpSearches int   // searches timed at each note count
	rounds      int   // health-and-operation rounds of a timed section
	stores      int   // single stores timed at each size
	// storeClients store storesPerClient records each at once, and one
	// client stores as many alone.
	storeClients, storesPerClient int
	restarts                      int // cold starts of each kind
	encrypted                     int // records of each directory of the encrypted section
	cliRuns                       int // runs of each embedded command on each of them
	// consolidateBound is how long the consolidation may take before the
	// run gives up on it (and kills that server).
	consolidateBound time.Duration
}

func fullScale() targetScale {
	return targetScale{storeSmall: 2000, textMid: 20_000, textBig: 100_000, hybrid: 20_000, dims: []int{64, 384},
		crowd: 40_000, clients: 48, perClient: 25, mcpNotes: []int{2000, 10_000}, mcpSearches: 200,
		rounds: 200, stores: 200, storeClients: 16, storesPerClient: 25, restarts: 3, encrypted: 20_000, cliRuns: 7,
		consolidateBound: 5 * time.Minute}
}

func quickScale() targetScale {
	return targetScale{storeSmall: 200, textMid: 500, textBig: 1000, hybrid: 500, dims: []int{64, 384},
		crowd: 1000, clients: 48, perClient: 2, mcpNotes: []int{100, 300}, mcpSearches: 20,
		rounds: 20, stores: 20, storeClients: 16, storesPerClient: 2, restarts: 1, encrypted: 500, cliRuns: 2,
		consolidateBound: time.Minute}
}

// Sections of the targets run, in the order they run.
const (
	secText          = "text"
	secHybrid        = "hybrid"
	secConcurrent    = "concurrent"
	secConsolidation = "consolidation"
	secStores        = "stores"
	secEncrypted     = "encrypted"
	secMCP           = "mcp"
)

var targetSections = []string{secText, secHybrid, secConcurrent, secConsolidation, secStores, secEncrypted, secMCP}

// Bounds of the targets run.
const (
	crowdBound   = 10 * time.Minute      // the whole concurrent section
	probeEvery   = 20 * time.Millisecond // recalls during the consolidation
	mcpLoadBatch = 100                   // notes per batch call while loading
)

func parseTargetsFlags(args []string, stderr io.Writer) (*config, error) {
	fs := newFlagSet("memsvc-bench targets", "Usage: memsvc-bench targets [flags]\n\n"+
		"Measure recall, store, concurrency, consolidation, cold start (search indexes persisted\n"+
		"or not), embedded CLI commands with store encryption and MCP search against their\n"+
		"targets in one run, on fresh `memsvc serve` processes over temporary data directories,\n"+
		"and print the measurements and a verdict per target as Markdown.\n"+
		"Sections: "+strings.Join(targetSections, ", ")+".\n"+
		"The text section ends with cold starts at its largest size, first with the search\n"+
		"indexes persisted, then with security.persist_search_indexes = false. The encrypted\n"+
		"section builds a plaintext and an encrypted data directory of the same records and\n"+
		"times embedded `memsvc stats` and `memsvc recall` on each (no server), alternating.\n\nFlags:\n", stderr)
	var (
		cfg      = config{args: append([]string{"targets"}, args...)}
		sections = fs.String("sections", strings.Join(targetSections, ","), "comma-separated sections to run")
		seed     = fs.Uint64("seed", 42, "seed of the generated corpora, embeddings and queries")
		bound    = fs.Duration("consolidate-timeout", 0, "give up on the consolidation after this long (default 5m, 1m with --quick)")
	)
	fs.BoolVar(&cfg.quick, "quick", false, "small corpora and few operations (a smoke run, not a measurement)")
	cfg.addSharedFlags(fs)
	fs.BoolVar(&cfg.skipPeer, "skip-peer", false, "time MCP search through memsvc-mcp only, not through the npm peer")
	fs.DurationVar(&cfg.timeout, "timeout", time.Hour, "bound on the whole run")
	if help, err := parseCommandLine(fs, args); help || err != nil {
		return nil, err
	}
	cfg.seed = *seed
	sc := fullScale()
	if cfg.quick {
		sc = quickScale()
	}
	if *bound < 0 {
		return nil, &usageError{fmt.Errorf("--consolidate-timeout %v: must not be negative", *bound)}
	}
	if *bound > 0 {
		sc.consolidateBound = *bound
	}
	cfg.targets = &sc
	cfg.sections = map[string]bool{}
	for s := range strings.SplitSeq(*sections, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(targetSections, s) {
			return nil, &usageError{fmt.Errorf("--sections %s: unknown section %s; want some of %s",
				quoteShort(*sections), quoteShort(s), strings.Join(targetSections, ", "))}
		}
		cfg.sections[s] = true
	}
	cfg.skipMCP = !cfg.sections[secMCP]
	if cfg.timeout <= 0 {
		return nil, &usageError{fmt.Errorf("--timeout %v: must be positive", cfg.timeout)}
	}
	if err := cfg.resolvePaths(); err != nil {
		return nil, &usageError{err}
	}
	return &cfg, nil
}

// runTargets is the targets subcommand: parse, measure, report.
func runTargets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseTargetsFlags(args, stderr)
	if err != nil || cfg == nil {
		return err
	}
	measure := func(b *bench, ctx context.Context) error {
		b.targets = &targetsReport{runInfo: runInfo{Command: commandLine(cfg.args), Started: time.Now().UTC(), Quick: cfg.quick}}
		return b.runTargets(ctx)
	}
	return measureAndReport(ctx, cfg, stdout, stderr, measure, (*bench).reportTargets)
}

// runTargets measures the selected sections. What was measured before an
// error stays in b.targets.
func (b *bench) runTargets(ctx context.Context) error {
	r := b.targets
	r.Machine = readMachine()
	r.LoadBefore = loadAvg()
	defer func() { r.LoadAfter = loadAvg() }()
	if err := b.binaries(ctx); err != nil {
		return err
	}
	sec := b.cfg.sections
	steps := []struct {
		on  bool
		run func(context.Context) error
	}{
		{sec[secText], b.targetText},
		{sec[secHybrid], b.targetHybrid},
		{sec[secConcurrent] || sec[secConsolidation], b.targetCrowd},
		{sec[secStores], b.targetStores},
		{sec[secEncrypted], b.targetEncrypted},
		{sec[secMCP], b.targetMCP},
	}
	for _, s := range steps {
		if !s.on {
			continue
		}
		if err := s.run(ctx); err != nil {
			return err
		}
	}
	return nil
}

// targetServer is a fresh memsvc server of one section and its client.
type targetServer struct {
	b       *bench
	srv     *server
	cl      *client.Client
	dir     string
	home    string
	records int // curated records stored so far
}

// newTargetServer starts a server over a new data directory; conns is the
// number of idle connections its client keeps; env adds NAME=value
// settings to the server's environment.
func (b *bench) newTargetServer(ctx context.Context, conns int, env ...string) (*targetServer, error) {
	t := &targetServer{b: b}
	var err error
	if t.dir, err = b.scratch("data"); err != nil {
		return nil, err
	}
	if t.home, err = b.scratch("home"); err != nil {
		return nil, err
	}
	if t.srv, err = startServer(ctx, b.kids, b.cfg.memsvcBin, t.dir, t.home, env...); err != nil {
		t.close()
		return nil, err
	}
	if t.cl, err = newPooledClient(t.srv, conns); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// close kills the server and removes its directories.
func (t *targetServer) close() {
	if t.srv != nil {
		t.srv.kill()
		t.srv = nil
	}
	_ = os.RemoveAll(t.dir)
	_ = os.RemoveAll(t.home)
}

// load stores records until the server holds n, in batches of 1,000 with
// consecutive records linked; store, when set, puts them all in one store.
func (t *targetServer) load(ctx context.Context, corp *corpus, n int, store *memory.StoreType) error {
	if n > t.records {
		t.b.logf("loading %s records (%s stored)", group(n-t.records), group(t.records))
	}
	for t.records < n {
		k := min(loadBatch, n-t.records)
		recs := corp.records(k)
		if store != nil {
			for i := range recs {
				recs[i].Store = store
			}
		}
		lctx, cancel := context.WithTimeout(ctx, opTimeout)
		_, err := t.cl.EncodeBatch(lctx, &memory.EncodeBatchRequest{Records: recs, InferAssociations: true})
		cancel()
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		t.records += k
	}
	return nil
}

// newPooledClient is newClient keeping up to conns idle connections, so
// that concurrent clients do not open a connection per request.
func newPooledClient(srv *server, conns int) (*client.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // loopback only, whatever the environment says
	tr.MaxIdleConns = max(conns, 4)
	tr.MaxIdleConnsPerHost = max(conns, 4)
	return client.New(srv.url(), client.Options{HTTPClient: &http.Client{Transport: tr}, UserAgent: "memsvc-bench"})
}

// paired waits until the server is idle, then runs n rounds of one GET
// /health followed by op, timing each request on its own, and adds op's
// row to the report with the health p50 of the same rounds and the ratio
// of the two p50s.
// note, when set, describes the answers once the rounds are done.
func (t *targetServer) paired(ctx context.Context, name string, n int, note func() string, op func(ctx context.Context, i int) error) error {
	if _, err := t.b.settle(ctx, t.srv.process); err != nil {
		return err
	}
	health := timings{d: make([]time.Duration, 0, n)}
	ops := timings{d: make([]time.Duration, 0, n)}
	records := t.records
	_, err := timeOps(ctx, n, opTimeout, func(ctx context.Context, i int) (int, error) {
		s := time.Now()
		if err := t.cl.Health(ctx); err != nil {
			return 0, fmt.Errorf("GET /health: %w", err)
		}
		health.d = append(health.d, time.Since(s))
		s = time.Now()
		err := op(ctx, i)
		ops.d = append(ops.d, time.Since(s))
		return 1, err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	h := health.row("GET /health", records, "", "")
	p := pairedRow{row: ops.row(name, records, "", ""), HealthP50ms: h.P50ms}
	if note != nil {
		p.Note = note()
	}
	// The operations' own time, not the rounds' wall time, which includes
	// the health requests.
	var own time.Duration
	for _, d := range ops.d {
		own += d
	}
	if own > 0 {
		p.Throughput, p.Unit = float64(len(ops.d))/own.Seconds(), "ops/s"
	}
	if h.P50ms > 0 {
		p.Ratio = p.P50ms / h.P50ms
	}
	t.b.targets.Rows = append(t.b.targets.Rows, p)
	t.b.logf("%s at %s records: p50 %s ms, %.1f× GET /health (%s ms)", name, group(records), msf(p.P50ms), p.Ratio, msf(h.P50ms))
	return nil
}

// recallOp returns a paired operation that recalls with queries qs (nil:
// no query) and embeddings vs (nil: none), counting the hits into hits.
func (t *targetServer) recallOp(qs []string, vs [][]float32, reconsolidate bool, hits *int) func(ctx context.Context, i int) error {
	return func(ctx context.Context, i int) error {
		req := memory.DefaultRecallQueryRequest()
		req.Reconsolidate = reconsolidate
		if qs != nil {
			req.Cue.Text = &qs[i%len(qs)]
		}
		if vs != nil {
			req.Cue.Embedding = vs[i%len(vs)]
		}
		resp, err := t.cl.RecallQuery(ctx, &req)
		if err == nil {
			*hits += len(resp.Memories)
		}
		return err
	}
}

// storeOp returns a paired operation that stores the next of recs.
func (t *targetServer) storeOp(recs []memory.EncodeStoreRequest) func(ctx context.Context, i int) error {
	return func(ctx context.Context, i int) error {
		_, err := t.cl.EncodeStore(ctx, &recs[i])
		if err == nil {
			t.records++
		}
		return err
	}
}

// hitsNote describes the answers of n recalls that found hits memories.
func hitsNote(hits, n int) string {
	return fmt.Sprintf("limit 10, %.1f hits per query", float64(hits)/float64(max(n, 1)))
}

// targetText grows one text-only server through the three sizes.
func (b *bench) targetText(ctx context.Context) error {
	sc := b.cfg.targets
	t, err := b.newTargetServer(ctx, 4)
	if err != nil {
		return err
	}
	defer t.close()
	corp := newCorpus(b.cfg.seed, 0)
	qs := queries(b.cfg.seed+1, sc.rounds)
	if err := t.load(ctx, corp, sc.storeSmall, nil); err != nil {
		return err
	}
	if err := t.paired(ctx, opStore, sc.stores, nil, t.storeOp(corp.records(sc.stores))); err != nil {
		return err
	}
	for _, n := range []int{sc.textMid, sc.textBig} {
		if err := t.load(ctx, corp, n, nil); err != nil {
			return err
		}
		for _, k := range []struct {
			op                  string
			text, reconsolidate bool
		}{
			{opRecallText, true, true},
			{opRecallTextRO, true, false},
			{opRecallNoQuery, false, true},
		} {
			var q []string
			if k.text {
				q = qs
			}
			hits := 0
			note := func() string { return hitsNote(hits, sc.rounds) }
			if err := t.paired(ctx, k.op, sc.rounds, note, t.recallOp(q, nil, k.reconsolidate, &hits)); err != nil {
				return err
			}
		}
	}
	if err := t.paired(ctx, opStore, sc.stores, nil, t.storeOp(corp.records(sc.stores))); err != nil {
		return err
	}
	return b.targetColdStarts(ctx, t)
}

// envNoIndexSnapshots keeps every search index off the disk: each start
// builds them from the records (and the first one deletes the snapshot
// an earlier start left).
const envNoIndexSnapshots = "MEMSVC_SECURITY__PERSIST_SEARCH_INDEXES=false"

// targetColdStarts stops t's server and starts it again on the same
// directory, timing exec to the first /readiness 200: first as
// configured by default (search indexes persisted), then with
// envNoIndexSnapshots. The server left running has the latter.
func (b *bench) targetColdStarts(ctx context.Context, t *targetServer) error {
	b.logf("cold starts at %s records, search indexes persisted", group(t.records))
	starts, cpu, err := b.coldStarts(ctx, t)
	if err != nil {
		return err
	}
	r := starts.row(opColdStart, t.records, "", "exec to the first /readiness 200")
	b.targets.ColdStart, b.targets.ColdStartCPUms = &r, cpu
	b.logf("cold start: p50 %s ms (CPU %s ms)", msf(r.P50ms), msf(cpu))

	b.logf("cold starts at %s records, search indexes not persisted", group(t.records))
	if starts, cpu, err = b.coldStarts(ctx, t, envNoIndexSnapshots); err != nil {
		return fmt.Errorf("search indexes not persisted: %w", err)
	}
	rb := starts.row(opColdStart, t.records, "", "exec to the first /readiness 200, security.persist_search_indexes = false")
	b.targets.ColdStartRebuilt, b.targets.ColdStartRebuiltCPUms = &rb, cpu
	b.logf("cold start, search indexes not persisted: p50 %s ms (CPU %s ms)", msf(rb.P50ms), msf(cpu))
	return nil
}

// coldStarts restarts t's server sc.restarts times with env added to its
// environment and returns the times from exec to readiness, and the p50
// of the CPU time the server had used by then (which a busy machine
// inflates less than the wall time).
func (b *bench) coldStarts(ctx context.Context, t *targetServer, env ...string) (*timings, float64, error) {
	var starts, cpu timings
	for range b.cfg.targets.restarts {
		if _, err := b.settle(ctx, t.srv.process); err != nil {
			return nil, 0, err
		}
		if err := t.srv.stop(); err != nil {
			return nil, 0, fmt.Errorf("stop for a cold start: %w", err)
		}
		t.srv = nil
		srv, err := startServer(ctx, b.kids, b.cfg.memsvcBin, t.dir, t.home, env...)
		if err != nil {
			return nil, 0, fmt.Errorf("cold start: %w", err)
		}
		t.srv = srv
		used, err := srv.cpuTime()
		if err != nil {
			return nil, 0, err
		}
		starts.d = append(starts.d, srv.ready)
		cpu.d = append(cpu.d, used)
	}
	return &starts, cpu.row("", 0, "", "").P50ms, nil
}

// targetHybrid recalls by text and embedding over one corpus per
// embedding size.
func (b *bench) targetHybrid(ctx context.Context) error {
	for _, d := range b.cfg.targets.dims {
		if err := b.targetHybridDims(ctx, d); err != nil {
			return fmt.Errorf("%d dimensions: %w", d, err)
		}
	}
	return nil
}

func (b *bench) targetHybridDims(ctx context.Context, dims int) error {
	sc := b.cfg.targets
	t, err := b.newTargetServer(ctx, 4)
	if err != nil {
		return err
	}
	defer t.close()
	corp := newCorpus(b.cfg.seed+uint64(dims), dims)
	if err := t.load(ctx, corp, sc.hybrid, nil); err != nil {
		return err
	}
	qs := queries(b.cfg.seed+1, sc.rounds)
	vs := make([][]float32, sc.rounds)
	for i := range vs {
		vs[i] = corp.vector()
	}
	hits := 0
	note := func() string { return hitsNote(hits, sc.rounds) }
	return t.paired(ctx, hybridOp(dims), sc.rounds, note, t.recallOp(qs, vs, true, &hits))
}

// hybridOp names the hybrid recall row of an embedding size.
func hybridOp(dims int) string { return fmt.Sprintf("recall (hybrid, %d dims)", dims) }

// targetCrowd loads one corpus of episodic records for the concurrent
// clients and the consolidation.
func (b *bench) targetCrowd(ctx context.Context) error {
	sc := b.cfg.targets
	t, err := b.newTargetServer(ctx, sc.clients+4)
	if err != nil {
		return err
	}
	defer t.close()
	corp := newCorpus(b.cfg.seed+5, 0)
	episodic := memory.StoreEpisodic
	if err := t.load(ctx, corp, sc.crowd, &episodic); err != nil {
		return err
	}
	if b.cfg.sections[secConcurrent] {
		if err := b.targetConcurrent(ctx, t); err != nil {
			return fmt.Errorf("concurrent clients: %w", err)
		}
	}
	if b.cfg.sections[secConsolidation] {
		if err := b.targetConsolidation(ctx, t); err != nil {
			return fmt.Errorf("consolidation: %w", err)
		}
	}
	return nil
}

// targetConcurrent starts sc.clients goroutines at once, each making
// sc.perClient text recalls in a row through the shared client.
func (b *bench) targetConcurrent(ctx context.Context, t *targetServer) error {
	sc := b.cfg.targets
	if _, err := b.settle(ctx, t.srv.process); err != nil {
		return err
	}
	b.logf("%d concurrent clients, %d recalls each, over %s records", sc.clients, sc.perClient, group(t.records))
	qs := queries(b.cfg.seed+6, sc.clients*sc.perClient)
	all, err := crowd(ctx, sc.clients, sc.perClient, func(ctx context.Context, c, i int) error {
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = &qs[c*sc.perClient+i]
		_, err := t.cl.RecallQuery(ctx, &req)
		return err
	})
	res := &crowdResult{Clients: sc.clients, Asked: sc.clients * sc.perClient}
	if err != nil {
		if !errors.Is(err, errCrowdBound) {
			return err
		}
		res.Unfinished = fmt.Sprintf("%d of %d recalls had not answered when the section's bound of %v ran out",
			res.Asked-len(all.d), res.Asked, crowdBound)
	}
	res.Recalls = all.row("recall (text), concurrent", t.records, "queries/s", "")
	if len(all.d) > 0 {
		res.MaxMs = ms(slices.Max(all.d))
	}
	b.targets.Concurrent = res
	b.logf("concurrent recall: p50 %s ms, p99 %s ms", msf(res.Recalls.P50ms), msf(res.Recalls.P99ms))
	return nil
}

// errCrowdBound is crowd's error when crowdBound ran out first.
var errCrowdBound = errors.New("the section's time bound ran out")

// crowd starts clients goroutines at once, each calling op perClient
// times in a row (c is the goroutine, i the call), and returns every
// latency with the wall time from the start to the last answer. It stops
// at the first error, errCrowdBound when crowdBound ran out.
func crowd(ctx context.Context, clients, perClient int, op func(ctx context.Context, c, i int) error) (*timings, error) {
	bctx, cancel := context.WithTimeout(ctx, crowdBound)
	defer cancel()
	lat := make([][]time.Duration, clients)
	errs := make([]error, clients)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			<-start
			for i := range perClient {
				s := time.Now()
				if err := op(bctx, c, i); err != nil {
					errs[c] = err
					return
				}
				lat[c] = append(lat[c], time.Since(s))
			}
		})
	}
	begin := time.Now()
	close(start)
	wg.Wait()
	all := &timings{wall: time.Since(begin)}
	for _, l := range lat {
		all.d = append(all.d, l...)
	}
	all.items = len(all.d)
	if err := errors.Join(errs...); err != nil {
		if bctx.Err() != nil && ctx.Err() == nil {
			return all, errCrowdBound
		}
		return all, err
	}
	return all, nil
}

// targetStores times single synced stores from one client, then from
// sc.storeClients clients at once, over a server of sc.storeSmall
// records, and compares the rates.
func (b *bench) targetStores(ctx context.Context) error {
	sc := b.cfg.targets
	t, err := b.newTargetServer(ctx, sc.storeClients+4)
	if err != nil {
		return err
	}
	defer t.close()
	corp := newCorpus(b.cfg.seed+8, 0)
	if err := t.load(ctx, corp, sc.storeSmall, nil); err != nil {
		return err
	}
	res := &storesResult{Clients: sc.storeClients}
	for _, k := range []struct {
		clients, each int
		out           *row
	}{
		{1, sc.storeClients * sc.storesPerClient, &res.Single},
		{sc.storeClients, sc.storesPerClient, &res.Concurrent},
	} {
		if _, err := b.settle(ctx, t.srv.process); err != nil {
			return err
		}
		b.logf("%d client(s) storing %d records each over %s records", k.clients, k.each, group(t.records))
		recs := corp.records(k.clients * k.each)
		all, err := crowd(ctx, k.clients, k.each, func(ctx context.Context, c, i int) error {
			_, err := t.cl.EncodeStore(ctx, &recs[c*k.each+i])
			return err
		})
		if err != nil {
			return fmt.Errorf("%d client(s) storing: %w", k.clients, err)
		}
		t.records += len(recs)
		*k.out = all.row(fmt.Sprintf("store (single, synced), %d client(s)", k.clients), t.records, "records/s", "")
	}
	if res.Single.Throughput > 0 {
		res.Ratio = res.Concurrent.Throughput / res.Single.Throughput
	}
	b.targets.Stores = res
	b.logf("stores: %s/s from one client, %s/s from %d (%.1f×)", group(int(res.Single.Throughput)),
		group(int(res.Concurrent.Throughput)), sc.storeClients, res.Ratio)
	return nil
}

// targetConsolidation runs a full consolidation and, while it runs, one
// text recall every probeEvery (or as soon as the previous one answers,
// when it took longer).
func (b *bench) targetConsolidation(ctx context.Context, t *targetServer) error {
	sc := b.cfg.targets
	if _, err := b.settle(ctx, t.srv.process); err != nil {
		return err
	}
	b.logf("full consolidation of %s episodic records, recalling meanwhile (bound %v)", group(t.records), sc.consolidateBound)
	res := &consolidationResult{Records: t.records, BoundMs: ms(sc.consolidateBound)}
	b.targets.Consolidation = res
	cctx, cancel := context.WithTimeout(ctx, sc.consolidateBound)
	defer cancel()
	type outcome struct {
		took time.Duration
		resp *memory.ConsolidateResponse
		err  error
	}
	done := make(chan outcome, 1)
	begin := time.Now()
	go func() {
		req := memory.ConsolidateRequest{Strategy: memory.ConsolidateFull}
		resp, err := t.cl.Consolidate(cctx, &req)
		done <- outcome{time.Since(begin), resp, err}
	}()
	qs := queries(b.cfg.seed+7, 1000)
	var probe timings
	var out *outcome
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for i := 0; out == nil; i++ {
		req := memory.DefaultRecallQueryRequest()
		req.Cue.Text = &qs[i%len(qs)]
		s := time.Now()
		_, err := t.cl.RecallQuery(cctx, &req)
		d := time.Since(s)
		if err != nil {
			if cctx.Err() == nil {
				return err
			}
			res.UnansweredMs = ms(d)
		} else {
			probe.d = append(probe.d, d)
		}
		select {
		case o := <-done:
			out = &o
		case <-tick.C:
		case <-cctx.Done():
			o := <-done
			out = &o
		}
	}
	probe.items = len(probe.d)
	res.Recalls = probe.row("recall (text) during consolidation", t.records, "", "")
	if len(probe.d) > 0 {
		res.MaxMs = ms(slices.Max(probe.d))
	}
	switch {
	case out.err == nil:
		res.TookMs = ms(out.took)
		res.Processed = int(out.resp.RecordsProcessed)
		res.Note = fmt.Sprintf("%s records processed, %s migrated, %s semantic nodes created",
			group(int(out.resp.RecordsProcessed)), group(int(out.resp.RecordsMigrated)), group(int(out.resp.SemanticNodesCreated)))
	case cctx.Err() != nil && ctx.Err() == nil:
		res.Unfinished = true
		// The server is still busy with it: end it rather than wait.
		t.srv.kill()
		t.srv = nil
	default:
		return out.err
	}
	b.logf("consolidation: %s; recalls during it: %d, p99 %s ms", res.took(), len(probe.d), msf(res.Recalls.P99ms))
	return nil
}

// targetMCP times MCP search through memsvc-mcp and through the peer at
// each note count.
func (b *bench) targetMCP(ctx context.Context) error {
	sc := b.cfg.targets
	last := sc.mcpNotes[len(sc.mcpNotes)-1]
	docs := newCorpus(b.cfg.seed+2, 0).docs
	notes := make([]string, last)
	for i := range notes {
		notes[i] = docs.Document()
	}
	words := newCorpus(b.cfg.seed+3, 0).docs
	searches := make([]string, sc.mcpSearches)
	for i := range searches {
		searches[i] = words.Query(1)
	}

	dir, err := b.scratch("mcp")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := startServer(ctx, b.kids, b.cfg.memsvcBin, filepath.Join(dir, "data"), dir)
	if err != nil {
		return err
	}
	defer srv.kill()
	cmd := exec.Command(b.cfg.mcpBin, "--server-url", srv.url())
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	ours, err := b.mcpSearchAtSizes(ctx, cmd, srv.process, memsvcTarget(), notes, searches)
	if err != nil {
		return fmt.Errorf("memsvc-mcp: %w", err)
	}
	for i, n := range sc.mcpNotes {
		b.targets.MCP = append(b.targets.MCP, mcpPoint{Notes: n, Ours: ours[i]})
	}
	if b.cfg.skipPeer {
		b.targets.MCPPeerSkipped = "skipped with --skip-peer"
		return nil
	}
	start := b.peer
	if start == nil {
		start = b.npmPeer
	}
	pdir, err := b.scratch("peer")
	if err != nil {
		return err
	}
	defer os.RemoveAll(pdir)
	ps, err := start(ctx, pdir)
	if err != nil {
		var skip *skipError
		if errors.As(err, &skip) {
			b.targets.MCPPeerSkipped = skip.Error()
			b.logf("MCP: %s", skip)
			return nil
		}
		return fmt.Errorf("%s: %w", b.cfg.peerPackage, err)
	}
	peer, err := b.mcpSearchAtSizes(ctx, ps.cmd, nil, ps.target, notes, searches)
	if err != nil {
		return fmt.Errorf("%s: %w", ps.target.name, err)
	}
	b.targets.MCPPeer = ps.target.name + " " + ps.version
	for i := range b.targets.MCP {
		p := &b.targets.MCP[i]
		p.Peer = peer[i]
		if p.Ours.Search.P50ms > 0 {
			p.Ratio = p.Peer.Search.P50ms / p.Ours.Search.P50ms
		}
	}
	return nil
}

// mcpSearchAtSizes starts cmd as an MCP stdio server, stores the notes in
// batch calls up to each note count and, once the server and backend (the
// memsvc server behind it, or nil) are idle, times the searches there.
func (b *bench) mcpSearchAtSizes(ctx context.Context, cmd *exec.Cmd, backend *process, tg mcpTarget, notes, searches []string) ([]*mcpResult, error) {
	conn, err := startRPC(b.kids, cmd)
	if err != nil {
		return nil, err
	}
	defer conn.close()
	name, version, err := conn.initialize(ctx)
	if err != nil {
		return nil, err
	}
	if err := conn.requireTools(ctx, tg.batchTool, tg.searchTool); err != nil {
		return nil, err
	}
	var out []*mcpResult
	stored := 0
	for _, n := range b.cfg.targets.mcpNotes {
		b.logf("MCP: %s, %s notes", tg.name, group(n))
		for stored < n {
			k := min(mcpLoadBatch, n-stored)
			lctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
			_, err := conn.tool(lctx, tg.batchTool, tg.batchArgs(stored, notes[stored:stored+k]))
			cancel()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", tg.batchTool, err)
			}
			stored += k
		}
		for _, p := range []*process{backend, conn.p} {
			if p == nil {
				continue
			}
			if _, err := b.settle(ctx, p); err != nil {
				return nil, err
			}
		}
		res := &mcpResult{Name: tg.name, Server: name, Version: version}
		if err := res.search(ctx, conn, tg, searches, n); err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}
