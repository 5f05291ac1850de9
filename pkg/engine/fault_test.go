package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Fault tests in pebble's manner. Each write operation of the engine (and
// a restart of the engine that moves its indexes) runs on a store whose
// file system is an in-memory one behind an injector:
//
//   - TestFaultInjection fails the i-th file system operation (read or
//     write) made during the operation, for i = 0, 1, 2, ... until the
//     operation completes without reaching the i-th. An error pebble
//     cannot continue from (a failed log write, any failed fsync) ends
//     the process in production; here the disk as it was then is what a
//     restart sees, and the engine that met it is abandoned.
//   - TestFaultCrash takes a crash clone of the file system (what was
//     synced, and a random share of what was not) at the k-th write, for
//     k = 0, 1, 2, ... until the operation completes first, and then once
//     after it returned.
//
// Either way the engine must report an error or complete; after a restart
// on the file system as the fault left it, nothing acknowledged is lost,
// the operation is applied wholly or not at all, and the records, the full
// text indexes, the vector index and the stats agree. The audit log is not
// part of these runs: pkg/audit writes through the operating system's
// files (it is stdlib-only), so it cannot sit on the same file system.

// faultMode says what the injector does at its target operation.
type faultMode int

const (
	failOp  faultMode = iota // fail the target-th operation, read or write
	crashAt                  // crash-clone the disk at the target-th write
)

// faultDisk is the file system under one run: a crashable in-memory file
// system behind an injector that does nothing until armed.
type faultDisk struct {
	mem  *vfs.MemFS
	fs   *errorfs.FS
	mode faultMode
	rng  *rand.Rand // chooses which unsynced data a crash keeps

	mu     sync.Mutex
	armed  bool
	seen   int // operations counted since arming
	target int
	hit    bool          // the target operation was reached
	hitOp  string        // which operation it was
	clone  *vfs.MemFS    // the disk as a crash at the fault left it
	fatal  string        // pebble's fatal error, if any
	died   chan struct{} // closed at the fatal error
}

func newFaultDisk(mode faultMode, seed uint64) *faultDisk {
	d := &faultDisk{mem: vfs.NewCrashableMem(), mode: mode, rng: rand.New(rand.NewPCG(seed, 19)), died: make(chan struct{})}
	d.fs = errorfs.Wrap(d.mem, errorfs.InjectorFunc(d.maybeError))
	return d
}

func (d *faultDisk) maybeError(op errorfs.Op) error {
	d.mu.Lock()
	if !d.armed || d.hit || (d.mode == crashAt && op.Kind.ReadOrWrite() != errorfs.OpIsWrite) {
		d.mu.Unlock()
		return nil
	}
	n := d.seen
	d.seen++
	if n != d.target {
		d.mu.Unlock()
		return nil
	}
	d.hit = true
	d.hitOp = fmt.Sprintf("%s %s", opKindName(op.Kind), op.Path)
	switch {
	case d.mode == crashAt:
		d.crashLocked()
	case isSync(op.Kind):
		// pebble treats a failed fsync as the end of the process (a
		// fatal error, or a panic when a directory sync fails): so does
		// the test.
		d.mu.Unlock()
		d.onFatal("injected fsync failure: " + d.hitOp) // does not return
	default:
		d.mu.Unlock()
		return errorfs.ErrInjected
	}
	d.mu.Unlock()
	return nil
}

func isSync(k errorfs.OpKind) bool {
	return k == errorfs.OpFileSync || k == errorfs.OpFileSyncData || k == errorfs.OpFileSyncTo
}

// crashLocked keeps the disk as a crash now would leave it: what was
// synced, and in crash mode a random share of what was not.
func (d *faultDisk) crashLocked() {
	if d.clone != nil {
		return
	}
	cfg := vfs.CrashCloneCfg{}
	if d.mode == crashAt {
		cfg = vfs.CrashCloneCfg{UnsyncedDataPercent: d.rng.IntN(101), RNG: rand.New(rand.NewPCG(d.rng.Uint64(), 1))}
	}
	d.clone = d.mem.CrashClone(cfg)
}

// onFatal is store.Options.Fatal: the moment the process would exit. The
// disk is kept as it is, and the goroutine that met the error stops for
// good, as it would with the process: pebble does not stop by itself
// when Fatal returns, and would go on from a state it cannot continue
// from. The engine and the store it ran in are abandoned.
func (d *faultDisk) onFatal(msg string) {
	d.mu.Lock()
	if d.fatal == "" {
		d.fatal = msg
		d.crashLocked()
		close(d.died)
	}
	d.mu.Unlock()
	select {}
}

func (d *faultDisk) arm(target int) {
	d.mu.Lock()
	d.armed, d.seen, d.target = true, 0, target
	d.mu.Unlock()
}

// disarm stops the injector and reports whether the target was reached.
func (d *faultDisk) disarm() (hit bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.armed = false
	return d.hit
}

// faultWord is the word only item i of a fault run carries: "zq" and two
// consonants, which no stemming rule changes, so it is one index term.
func faultWord(i int) string {
	const consonants = "bcdfghjklmnpqrtvwxz"
	return "zq" + consonants[i/len(consonants):i/len(consonants)+1] + consonants[i%len(consonants):i%len(consonants)+1]
}

// faultVector is a distinct embedding per item: a unit vector with a
// little of its neighbour, so every record is its own nearest neighbour.
func faultVector(i int) []float32 {
	v := make([]float32, 16)
	v[i%16] = 1
	v[(i+1)%16] = 0.25
	return v
}

// faultFixture is what every run shares: the engine's clock start, the
// import archive and the words the runs use.
type faultFixture struct {
	start   time.Time
	archive []byte
	words   []string
	persist bool
}

// Items of the fixture, by the index of their word.
const (
	itemBase     = 0  // 0-3: curated records present before every operation
	itemRaw      = 4  // 4-6: raw entries of one session, pending a dream
	itemStore    = 7  // stored by the store operation
	itemBatch    = 8  // 8-10: stored by the batch operation
	itemUpdate   = 11 // the new text of item 0
	itemImport   = 12 // 12-14: two records and a raw entry in the archive
	itemRawBatch = 15 // 15-17: raw entries of the raw batch operation
	itemCount    = 18
)

func newFaultFixture(t *testing.T, persist bool) *faultFixture {
	t.Helper()
	fx := &faultFixture{start: time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC), persist: persist}
	for i := range itemCount {
		fx.words = append(fx.words, faultWord(i))
	}
	// The archive comes from another engine, so its ids are fixed.
	srcClock := testkit.NewClock(fx.start.Add(-24 * time.Hour))
	src := testkit.Engine(t, engine.Options{Now: srcClock.Now, SimilarLinks: -1})
	ctx := context.Background()
	for i := itemImport; i < itemImport+2; i++ {
		// Two stores, a minute apart: not one batch.
		srcClock.Advance(time.Minute)
		st := memory.StoreSemantic
		req := &memory.EncodeStoreRequest{Content: fx.content(i, true), Store: &st}
		if _, err := src.EncodeStore(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	raw := memory.DefaultEncodeStoreRawRequest()
	raw.SessionID, raw.Content = "imported", fx.content(itemImport+2, false)
	if _, err := src.EncodeStoreRaw(ctx, &raw); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	exp := memory.DefaultExportRequest()
	exp.IncludeRawJournal = true
	if _, err := src.Export(ctx, &exp, &buf); err != nil {
		t.Fatal(err)
	}
	fx.archive = buf.Bytes()
	return fx
}

// content is the text of item i, with its embedding when vec is set.
func (fx *faultFixture) content(i int, vec bool) memory.MemoryContent {
	c := memory.TextContent(fmt.Sprintf("Fault note %s is item %d of the run.", fx.words[i], i))
	if vec {
		c.Blocks[0].Embedding = faultVector(i)
	}
	return c
}

// rawID is the client id of raw item i, so raw entries match across runs.
func rawID(i int) *memory.ID {
	var id memory.ID
	id[0], id[1], id[6], id[8], id[15] = 0x01, 0x97, 0x70, 0x80, byte(i)
	return &id
}

func (fx *faultFixture) rawReq(i int, session string) memory.EncodeStoreRawRequest {
	r := memory.DefaultEncodeStoreRawRequest()
	r.RecordID, r.SessionID, r.Content = rawID(i), session, fx.content(i, false)
	r.TopicID = ptr("faults")
	r.SecrecyLevel = memory.SecrecyPublic
	return r
}

func ptr[T any](v T) *T { return &v }

// faultEngine is an engine on a store in a file system.
type faultEngine struct {
	clock *testkit.Clock
	db    *store.DB
	e     *engine.Engine // nil after a failed restart
}

// open opens an engine on the data directory in fs, with the full-text
// indexes in it when persist is set.
func (fx *faultFixture) open(fs vfs.FS, fatal func(string), clock *testkit.Clock, persist bool) (*faultEngine, error) {
	db, err := store.Open("data", store.Options{FS: fs, Fatal: fatal, CacheBytes: 1 << 20})
	if err != nil {
		return nil, err
	}
	f := &faultEngine{clock: clock, db: db}
	if err := f.start(persist); err != nil {
		_ = db.Close()
		return nil, err
	}
	return f, nil
}

// start opens the engine on the store.
func (f *faultEngine) start(persist bool) error {
	e, err := engine.Open(context.Background(), f.db, engine.Options{Now: f.clock.Now, SimilarLinks: -1, PersistIndexes: persist})
	f.e = e
	return err
}

func (f *faultEngine) close() error {
	var err error
	if f.e != nil {
		err = f.e.Close()
	}
	if cerr := f.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// prepare writes what every operation starts from, then restarts the
// engine so the data sits in pebble's tables and is read back from them.
// The indexes are kept as persist says.
func (fx *faultFixture) prepare(t *testing.T, d *faultDisk, persist bool) *faultEngine {
	t.Helper()
	clock := testkit.NewClock(fx.start)
	f, err := fx.open(d.fs, d.onFatal, clock, persist)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stores := []memory.StoreType{memory.StoreEpisodic, memory.StoreSemantic, memory.StoreProcedural, memory.StoreEmotional}
	for i := itemBase; i < itemBase+4; i++ {
		req := &memory.EncodeStoreRequest{Content: fx.content(i, i < 2), Store: &stores[i]}
		if i == 3 {
			req.Emotion = &memory.EmotionVector{Joy: 0.8, Intensity: 0.8, Valence: 0.6}
		}
		clock.Advance(time.Minute)
		if _, err := f.e.EncodeStore(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	for i := itemRaw; i < itemRaw+3; i++ {
		clock.Advance(time.Minute)
		r := fx.rawReq(i, "dreamt")
		if _, err := f.e.EncodeStoreRaw(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}
	// Late enough for the session to be settled and dreamt of.
	clock.Advance(3 * time.Hour)
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	if f, err = fx.open(d.fs, d.onFatal, clock, persist); err != nil {
		t.Fatal(err)
	}
	return f
}

// faultOp is one engine operation under test; ids are those of the four
// base records, in item order. Each operation is one atomic change of the
// engine (the dream tick finds exactly one group).
type faultOp struct {
	name string
	run  func(ctx context.Context, fx *faultFixture, f *faultEngine, ids []memory.ID) error
	// flip prepares the data with the indexes kept the other way (in
	// memory for a run that persists them, and the reverse).
	flip bool
	// derived is set when the operation changes derived data only.
	derived bool
}

var faultOps = []faultOp{
	{name: "store", run: func(ctx context.Context, fx *faultFixture, f *faultEngine, _ []memory.ID) error {
		st := memory.StoreProcedural
		_, err := f.e.EncodeStore(ctx, &memory.EncodeStoreRequest{Content: fx.content(itemStore, true), Store: &st})
		return err
	}},
	{name: "batch", run: func(ctx context.Context, fx *faultFixture, f *faultEngine, _ []memory.ID) error {
		req := &memory.EncodeBatchRequest{InferAssociations: true}
		for i := itemBatch; i < itemBatch+3; i++ {
			req.Records = append(req.Records, memory.EncodeStoreRequest{Content: fx.content(i, i != itemBatch+1)})
		}
		_, err := f.e.EncodeBatch(ctx, req)
		return err
	}},
	{name: "update", run: func(ctx context.Context, fx *faultFixture, f *faultEngine, ids []memory.ID) error {
		c := fx.content(itemUpdate, true)
		return f.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: ids[0], Content: &c,
			Emotion: &memory.EmotionVector{Fear: 0.5, Intensity: 0.5, Valence: -0.4}})
	}},
	{name: "forget", run: func(ctx context.Context, _ *faultFixture, f *faultEngine, ids []memory.ID) error {
		_, err := f.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{ids[1], ids[3]}, Confirm: ptr(true)})
		return err
	}},
	{name: "import", run: func(ctx context.Context, fx *faultFixture, f *faultEngine, _ []memory.ID) error {
		req := memory.DefaultImportRequest()
		_, err := f.e.Import(ctx, &req, bytes.NewReader(fx.archive))
		return err
	}},
	{name: "raw-batch", run: func(ctx context.Context, fx *faultFixture, f *faultEngine, _ []memory.ID) error {
		req := &memory.EncodeBatchStoreRawRequest{}
		for i := itemRawBatch; i < itemRawBatch+3; i++ {
			req.Records = append(req.Records, fx.rawReq(i, "batched"))
		}
		_, err := f.e.EncodeBatchRaw(ctx, req)
		return err
	}},
	{name: "dream", run: func(ctx context.Context, _ *faultFixture, f *faultEngine, _ []memory.ID) error {
		req := memory.DefaultDreamTickRequest()
		resp, err := f.e.DreamTick(ctx, &req)
		if err == nil && resp.GroupsProcessed != 1 {
			return fmt.Errorf("dream tick processed %d groups, want 1", resp.GroupsProcessed)
		}
		return err
	}},
	// A restart of the engine that moves the full-text indexes into the
	// data directory (rebuilding them there) or out of it (deleting them
	// from it). The store stays open: pebble's own start is pebble's to
	// test.
	{name: "restart", flip: true, derived: true, run: func(_ context.Context, fx *faultFixture, f *faultEngine, _ []memory.ID) error {
		err := f.e.Close()
		f.e = nil
		if err != nil {
			return err
		}
		return f.start(fx.persist)
	}},
}

// baseIDs returns the ids of the base items, in item order.
func (fx *faultFixture) baseIDs(t *testing.T, e *engine.Engine) []memory.ID {
	t.Helper()
	ids := make([]memory.ID, 4)
	for i := range ids {
		resp, err := e.RecallQuery(context.Background(), fx.textRecall(fx.words[itemBase+i]))
		if err != nil || len(resp.Memories) != 1 {
			t.Fatalf("base item %d: %v, %d hits", i, err, len(resp.Memories))
		}
		ids[i] = resp.Memories[0].Record.ID
	}
	return ids
}

func (fx *faultFixture) textRecall(word string) *memory.RecallQueryRequest {
	req := &memory.RecallQueryRequest{Cue: memory.RecallCue{Text: &word}, Stores: memory.PersistentStores(),
		Limit: 50, IncludeDecayed: true, RecallMode: ptr(memory.ModePerfect)}
	return req
}

// faultRun is the result of one run of an operation with a fault.
type faultRun struct {
	err    error
	hit    bool   // the fault was reached during the operation
	hitOp  string // the file system operation at the fault
	fatal  string // pebble's fatal error
	live   string // state of the engine that ran it, if it did not crash
	after  string // state after a restart on the disk the fault left
	issues []string
}

// runFault prepares a fresh disk, runs op with the injector at target
// and restarts on the disk as the fault left it.
func (fx *faultFixture) runFault(t *testing.T, op faultOp, mode faultMode, target int) (before string, r faultRun) {
	t.Helper()
	d := newFaultDisk(mode, uint64(target))
	f := fx.prepare(t, d, fx.persist != op.flip)
	ids := fx.baseIDs(t, f.e)
	before, issues := fx.observe(f.e)
	if len(issues) > 0 {
		t.Fatalf("before %s: %s", op.name, strings.Join(issues, "; "))
	}
	clock := f.clock.Now() // operations do not move the clock

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d.arm(target)
	done := make(chan error, 1)
	go func() { done <- op.run(ctx, fx, f, ids) }()
	select {
	case r.err = <-done:
	case <-d.died:
		// The process is gone; so is the engine the operation ran in,
		// which its goroutines may still be using.
		f = nil
	}
	if mode == crashAt {
		// The operation has returned: a crash now must keep it.
		d.mu.Lock()
		d.crashLocked()
		d.mu.Unlock()
	}
	r.hit = d.disarm()
	d.mu.Lock()
	r.fatal, r.hitOp = d.fatal, d.hitOp
	view := d.clone
	d.mu.Unlock()

	var cerr error
	if f != nil {
		if r.fatal == "" && f.e != nil {
			r.live, r.issues = fx.observe(f.e)
		}
		cerr = f.close()
	}
	if view == nil {
		if cerr != nil && r.err == nil {
			t.Fatalf("close after a successful %s: %v", op.name, cerr)
		}
		view = d.mem
	}
	g, err := fx.open(view, nil, testkit.NewClock(clock), fx.persist)
	if err != nil {
		t.Fatalf("restart after %s (fault at %d, fatal %q, err %v): %v", op.name, target, r.fatal, r.err, err)
	}
	var more []string
	r.after, more = fx.observe(g.e)
	r.issues = append(r.issues, more...)
	if err := g.close(); err != nil {
		t.Fatalf("close after restart: %v", err)
	}
	return before, r
}

// reference runs op without a fault and returns the states before and
// after it.
func (fx *faultFixture) reference(t *testing.T, op faultOp) (before, after string) {
	t.Helper()
	before, r := fx.runFault(t, op, failOp, 1<<30)
	if r.err != nil || r.hit || len(r.issues) > 0 {
		t.Fatalf("%s without faults: err %v, issues %q", op.name, r.err, r.issues)
	}
	if r.live != r.after {
		t.Fatalf("%s without faults: state differs after a restart:\n%s", op.name, lineDiff(r.live, r.after))
	}
	if before == r.after && !op.derived {
		t.Fatalf("%s changed nothing", op.name)
	}
	return before, r.after
}

// maxFaultOps bounds the loops: no operation here makes that many file
// system operations.
const maxFaultOps = 400

// TestFaultInjection fails each file system operation of each engine
// operation in turn, with the full-text indexes in the data directory and
// in memory.
func TestFaultInjection(t *testing.T) {
	for _, persist := range []bool{true, false} {
		fx := newFaultFixture(t, persist)
		for _, op := range faultOps {
			t.Run(fmt.Sprintf("%s/persist=%v", op.name, persist), func(t *testing.T) { fx.loop(t, op, failOp) })
		}
	}
}

// TestFaultCrash crashes each engine operation at each of its writes and
// right after it returned.
func TestFaultCrash(t *testing.T) {
	fx := newFaultFixture(t, true)
	for _, op := range faultOps {
		t.Run(op.name, func(t *testing.T) { fx.loop(t, op, crashAt) })
	}
}

// loop runs op with the fault at every target until op completes without
// reaching it.
func (fx *faultFixture) loop(t *testing.T, op faultOp, mode faultMode) {
	before, after := fx.reference(t, op)
	outcomes := map[string]int{}
	for target := 0; ; target++ {
		if target == maxFaultOps {
			t.Fatalf("%s still reaches its %d-th file system operation", op.name, target)
		}
		runBefore, r := fx.runFault(t, op, mode, target)
		if runBefore != before {
			t.Fatalf("the state before %s differs between runs:\n%s", op.name, lineDiff(before, runBefore))
		}
		for _, is := range r.issues {
			t.Errorf("fault at %d: %s", target, is)
		}
		switch {
		case r.fatal != "":
			outcomes["fatal"]++
		case mode == crashAt && r.hit:
			outcomes["crash"]++
		case r.err != nil:
			outcomes["error"]++
		default:
			outcomes["ok"]++
		}
		if r.err != nil && r.fatal == "" && !errors.Is(r.err, errorfs.ErrInjected) && !strings.Contains(r.err.Error(), "injected error") {
			t.Errorf("fault at %d: %s failed with an error that is not the injected one: %v", target, op.name, r.err)
		}
		t.Logf("fault at %d (%s): err %v, fatal %q", target, r.hitOp, r.err, r.fatal)
		fx.judge(t, op, mode, target, r, before, after)
		if !r.hit {
			if r.err != nil {
				t.Fatalf("%s failed without reaching its fault: %v", op.name, r.err)
			}
			t.Logf("%s: %d fault points, outcomes %v", op.name, target, outcomes)
			return
		}
	}
}

// judge checks one run against the states before and after the operation.
func (fx *faultFixture) judge(t *testing.T, op faultOp, mode faultMode, target int, r faultRun, before, after string) {
	t.Helper()
	where := fmt.Sprintf("%s with the fault at %d (err %v, fatal %q)", op.name, target, r.err, r.fatal)
	crashed := r.fatal != "" || (mode == crashAt && r.hit)
	switch {
	case crashed:
		// The process died during the operation: it may or may not have
		// happened, but not in part.
		if r.after != before && r.after != after {
			t.Errorf("%s: half applied after the crash:\n%s", where, lineDiff(before, r.after))
		}
		if mode == crashAt && r.live != after {
			t.Errorf("%s: the engine that ran on holds:\n%s", where, lineDiff(after, r.live))
		}
	case r.err == nil:
		// Acknowledged: it is there, in memory and after a restart.
		if r.live != after {
			t.Errorf("%s: acknowledged, but the engine holds:\n%s", where, lineDiff(after, r.live))
		}
		if r.after != after {
			t.Errorf("%s: acknowledged, but lost in a restart:\n%s", where, lineDiff(after, r.after))
		}
	default:
		// Reported: whatever is durable, the engine shows that.
		if r.after != before && r.after != after {
			t.Errorf("%s: half applied after a restart:\n%s", where, lineDiff(before, r.after))
		}
		if r.live != "" && r.live != r.after {
			t.Errorf("%s: the engine's view differs from the disk's:\n%s", where, lineDiff(r.after, r.live))
		}
	}
}

// lineDiff shows the lines only one of two states has.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// observe returns the engine's state as text without generated ids (so
// runs compare), and every disagreement between the records on disk (as
// an export reads them) and what the engine answers from its indexes.
func (fx *faultFixture) observe(e *engine.Engine) (string, []string) {
	ctx := context.Background()
	var issues []string
	fail := func(format string, args ...any) { issues = append(issues, fmt.Sprintf(format, args...)) }

	recs, raws, err := exportAll(ctx, e)
	if err != nil {
		return "", []string{err.Error()}
	}

	var lines []string
	curated := map[memory.ID]*memory.MemoryRecord{}
	withVec, summaries, semantic := 0, 0, 0
	byStore := map[memory.StoreType]uint32{}
	for _, rec := range recs {
		curated[rec.ID] = rec
		byStore[rec.Store]++
		text, _ := rec.Content.Text()
		vec := rec.Content.Embedding()
		if vec != nil {
			withVec++
		}
		switch dreamKind(rec.Metadata) {
		case "episodic_summary":
			summaries++
		case "semantic_summary":
			semantic++
		}
		lines = append(lines, fmt.Sprintf("record %s %q vec=%v emotion=%.2f version=%d links=%d metadata=%s",
			rec.Store, text, vec != nil, rec.Emotion.Intensity, rec.Version, len(rec.Associations),
			uuidRE.ReplaceAllString(string(rec.Metadata), "<id>")))
	}
	pending := uint32(0)
	for _, raw := range raws {
		text, _ := raw.Content.Text()
		processed := store.IsDreamProcessed(raw)
		if !processed && !raw.Suppressed && raw.Visibility == memory.VisibilityNormal && raw.SecrecyLevel != memory.SecrecySecret {
			pending++
		}
		for _, id := range raw.DerivedMemoryIDs {
			if curated[id] == nil {
				fail("raw entry %q derives record %s, which does not exist", text, id)
			}
		}
		lines = append(lines, fmt.Sprintf("raw %s %s %q processed=%v derived=%d", raw.ID, raw.SessionID, text, processed, len(raw.DerivedMemoryIDs)))
	}
	slices.Sort(lines)

	// The stats come from the engine's memory.
	st, err := e.Stats(ctx)
	if err != nil {
		return "", []string{"stats: " + err.Error()}
	}
	if int(st.TotalRecords) != len(recs) {
		fail("stats count %d records, the store holds %d", st.TotalRecords, len(recs))
	}
	for _, s := range memory.PersistentStores() {
		if st.RecordsByStore[s] != byStore[s] {
			fail("stats count %d %s records, the store holds %d", st.RecordsByStore[s], s, byStore[s])
		}
	}
	if int(st.VectorIndexRecords) != withVec {
		fail("the vector index holds %d records, the store %d with embeddings", st.VectorIndexRecords, withVec)
	}
	if int(st.RawJournalRecords) != len(raws) || st.RawJournalPendingDream != pending {
		fail("stats count %d raw entries (%d pending), the store holds %d (%d pending)", st.RawJournalRecords, st.RawJournalPendingDream, len(raws), pending)
	}
	if int(st.DreamEpisodicSummaries) != summaries || int(st.DreamSemanticNodes) != semantic {
		fail("stats count %d dream summaries and %d semantic nodes, the store holds %d and %d", st.DreamEpisodicSummaries, st.DreamSemanticNodes, summaries, semantic)
	}

	// Every record reads back as stored and is its own nearest vector.
	for _, rec := range recs {
		got, err := e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: rec.ID})
		if err != nil {
			fail("record %s is stored but cannot be read: %v", rec.ID, err)
			continue
		}
		if a, b := textOf(got.Content), textOf(rec.Content); a != b {
			fail("record %s reads %q, the store holds %q", rec.ID, a, b)
		}
		if vec := rec.Content.Embedding(); vec != nil {
			req := &memory.RecallQueryRequest{Cue: memory.RecallCue{Embedding: vec}, Stores: memory.PersistentStores(),
				Limit: 50, IncludeDecayed: true, RecallMode: ptr(memory.ModePerfect)}
			resp, err := e.RecallQuery(ctx, req)
			switch {
			case err != nil:
				fail("vector recall of %s: %v", rec.ID, err)
			case len(resp.Memories) == 0 || resp.Memories[0].Record.ID != rec.ID:
				fail("vector recall of %s does not find it first", rec.ID)
			}
			for _, m := range resp.Memories {
				if curated[m.Record.ID] == nil {
					fail("vector recall returns %s, which is not stored", m.Record.ID)
				}
			}
		}
	}

	// Every word is found exactly where the records on disk have it, and
	// next to it: recall lends a record's evidence to the records just
	// before and after it in its batch (textrank.go), so those come back
	// too, after it (an equal score falls to the lower id, which the
	// earlier record of a batch has). Nothing else does.
	neighbours := batchNeighbours(recs)
	for _, w := range fx.words {
		var holders, want, got []memory.ID
		for _, rec := range recs {
			if strings.Contains(textOf(rec.Content), w) {
				holders = append(holders, rec.ID)
			}
		}
		want = slices.Clone(holders)
		for _, id := range holders {
			for _, n := range neighbours[id] {
				if !slices.Contains(want, n) {
					want = append(want, n)
				}
			}
		}
		resp, err := e.RecallQuery(ctx, fx.textRecall(w))
		if err != nil {
			fail("recall %s: %v", w, err)
			continue
		}
		for _, m := range resp.Memories {
			got = append(got, m.Record.ID)
		}
		if !sameIDs(want, got) {
			fail("recall %s finds %v, the store has it in %v and their neighbours %v", w, got, holders, want[len(holders):])
		}
		if len(got) > 0 && !slices.Contains(holders, got[0]) {
			fail("recall %s finds %v first, not a record that has it (%v)", w, got[0], holders)
		}

		want, got = nil, nil
		for _, raw := range raws {
			if strings.Contains(textOf(raw.Content), w) {
				want = append(want, raw.ID)
			}
		}
		rreq := memory.DefaultRecallRawQueryRequest()
		rreq.Query, rreq.Limit, rreq.IncludePrivateScratch, rreq.IncludeSealed = &w, 50, true, true
		rreq.SecrecyLevels = []memory.SecrecyLevel{memory.SecrecyPublic, memory.SecrecySensitive, memory.SecrecySecret}
		rresp, err := e.RecallRaw(ctx, &rreq)
		if err != nil {
			fail("raw recall %s: %v", w, err)
			continue
		}
		for _, raw := range rresp.Records {
			got = append(got, raw.ID)
		}
		if !sameIDs(want, got) {
			fail("raw recall %s finds %v, the journal has it in %v", w, got, want)
		}
	}
	return strings.Join(lines, "\n"), issues
}

// exportAll returns every curated record and raw entry of e, as an export
// reads them from the store.
func exportAll(ctx context.Context, e *engine.Engine) ([]*memory.MemoryRecord, []*memory.RawJournalRecord, error) {
	var buf bytes.Buffer
	req := memory.DefaultExportRequest()
	req.IncludeRawJournal, req.IncludeSealed, req.IncludeSecret = true, true, true
	if _, err := e.Export(ctx, &req, &buf); err != nil {
		return nil, nil, fmt.Errorf("export: %w", err)
	}
	r, err := archive.NewReader(&buf, archive.ReaderOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("read export: %w", err)
	}
	var recs []*memory.MemoryRecord
	var raws []*memory.RawJournalRecord
	for {
		ent, err := r.Next()
		switch {
		case errors.Is(err, io.EOF):
			return recs, raws, nil
		case err != nil:
			return nil, nil, fmt.Errorf("read export: %w", err)
		case ent.Record != nil:
			recs = append(recs, ent.Record)
		default:
			raws = append(raws, ent.Raw)
		}
	}
}

// textOf is a record's text and summary, the parts recall searches.
func textOf(c memory.MemoryContent) string {
	text, _ := c.Text()
	if c.Summary != nil {
		text += "\n" + *c.Summary
	}
	return text
}

// batchNeighbours maps each record to the records just before and after
// it in its batch: the records created at the same instant, in id order.
// No record of the fixture names a session, and records stored one by
// one are created at different instants.
func batchNeighbours(recs []*memory.MemoryRecord) map[memory.ID][]memory.ID {
	batches := map[int64][]memory.ID{}
	for _, rec := range recs {
		t := rec.CreatedAt.UnixNano()
		batches[t] = append(batches[t], rec.ID)
	}
	out := map[memory.ID][]memory.ID{}
	for _, ids := range batches {
		slices.SortFunc(ids, func(x, y memory.ID) int { return bytes.Compare(x[:], y[:]) })
		for i, id := range ids {
			if i > 0 {
				out[id] = append(out[id], ids[i-1])
			}
			if i+1 < len(ids) {
				out[id] = append(out[id], ids[i+1])
			}
		}
	}
	return out
}

func sameIDs(a, b []memory.ID) bool {
	cmp := func(x, y memory.ID) int { return bytes.Compare(x[:], y[:]) }
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	return slices.Equal(a, b)
}

// dreamKind reads metadata._dream.kind.
func dreamKind(md memory.JSON) string {
	var v struct {
		Dream struct {
			Kind string `json:"kind"`
		} `json:"_dream"`
	}
	if len(md) == 0 || json.Unmarshal(md, &v) != nil {
		return ""
	}
	return v.Dream.Kind
}

// opKindName names a file system operation for the log.
func opKindName(k errorfs.OpKind) string {
	names := map[errorfs.OpKind]string{
		errorfs.OpCreate: "create", errorfs.OpLink: "link", errorfs.OpOpen: "open", errorfs.OpOpenDir: "opendir",
		errorfs.OpRemove: "remove", errorfs.OpRemoveAll: "removeall", errorfs.OpRename: "rename",
		errorfs.OpReuseForWrite: "reuse", errorfs.OpMkdirAll: "mkdir", errorfs.OpLock: "lock", errorfs.OpList: "list",
		errorfs.OpFilePreallocate: "preallocate", errorfs.OpStat: "stat", errorfs.OpGetDiskUsage: "diskusage",
		errorfs.OpFileClose: "close", errorfs.OpFileRead: "read", errorfs.OpFileReadAt: "readat",
		errorfs.OpFileWrite: "write", errorfs.OpFileWriteAt: "writeat", errorfs.OpFileStat: "fstat",
		errorfs.OpFileSync: "sync", errorfs.OpFileSyncData: "syncdata", errorfs.OpFileSyncTo: "syncto",
		errorfs.OpFileFlush: "flush",
	}
	if n, ok := names[k]; ok {
		return n
	}
	return fmt.Sprintf("op%d", k)
}
