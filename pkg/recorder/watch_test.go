package recorder

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/spool"
)

// watchRig is a real server (an engine behind the HTTP API), a spool
// directory and transcript directories, and a watcher that can be started
// and stopped.
type watchRig struct {
	t         *testing.T
	eng       *engine.Engine
	url       string
	spoolPath string
	claude    string
	codex     string
	rescans   chan time.Time
	logs      *testkit.SyncBuffer
	w         *TranscriptWatcher
	stopFn    func() error
}

func newWatchRig(t *testing.T) *watchRig {
	t.Helper()
	eng := testkit.Engine(t, engine.Options{SimilarLinks: -1})
	h, err := httpapi.New(eng, httpapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	home := t.TempDir()
	r := &watchRig{t: t, eng: eng, url: srv.URL, spoolPath: filepath.Join(t.TempDir(), "spool"),
		claude: filepath.Join(home, ".claude", "projects"), codex: filepath.Join(home, ".codex", "sessions"),
		rescans: make(chan time.Time), logs: &testkit.SyncBuffer{}}
	if err := os.MkdirAll(r.claude, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r.stopFn != nil {
			_ = r.stop()
		}
		if t.Failed() {
			t.Logf("recorder log:\n%s", r.logs)
		}
	})
	return r
}

// start runs a watcher on both directories.
func (r *watchRig) start(opts ...func(*WatchConfig)) {
	r.t.Helper()
	d, err := spool.Open(r.spoolPath, spool.Options{})
	if err != nil {
		r.t.Fatal(err)
	}
	c, err := NewClient(r.url, ClientOptions{Timeout: 10 * time.Second})
	if err != nil {
		r.t.Fatal(err)
	}
	rec, err := New(Config{Sender: c, Spool: d, Logger: slog.New(slog.NewTextHandler(r.logs, nil))})
	if err != nil {
		r.t.Fatal(err)
	}
	cfg := WatchConfig{Recorder: rec, Sources: []TranscriptSource{{Claude, r.claude}, {Codex, r.codex}}, Rescans: r.rescans}
	for _, o := range opts {
		o(&cfg)
	}
	if r.w, err = NewTranscriptWatcher(cfg); err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.w.Run(ctx) }()
	// The first tick is taken after the first walk: files written from now
	// on are new ones.
	select {
	case r.rescans <- time.Now():
	case err := <-done:
		r.t.Fatalf("the watcher stopped: %v", err)
	case <-time.After(30 * time.Second):
		r.t.Fatal("the watcher did not start")
	}
	r.stopFn = func() error {
		cancel()
		return testkit.Receive(r.t, done, 30*time.Second, "the watcher to stop")
	}
}

func (r *watchRig) stop() error {
	r.t.Helper()
	err := r.stopFn()
	r.stopFn = nil
	return err
}

// barrier returns once the watcher has walked the trees, after everything
// written before the call: the second tick is taken only when the walk the
// first one started is over.
func (r *watchRig) barrier() {
	r.t.Helper()
	for range 2 {
		select {
		case r.rescans <- time.Now():
		case <-time.After(30 * time.Second):
			r.t.Fatal("the watcher took no rescan tick")
		}
	}
}

// texts counts the server's entries of session by their text.
func (r *watchRig) texts(session string) map[string]int {
	r.t.Helper()
	resp, err := r.eng.RecallRaw(context.Background(), &memory.RecallRawQueryRequest{SessionID: &session, Limit: 1000,
		SecrecyLevels: []memory.SecrecyLevel{memory.SecrecyPublic, memory.SecrecySensitive, memory.SecrecySecret}})
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string]int{}
	for _, rec := range resp.Records {
		text, _ := rec.Content.Text()
		out[text]++
	}
	return out
}

// expect checks that session holds exactly these texts, each once.
func (r *watchRig) expect(session string, texts ...string) {
	r.t.Helper()
	got := r.texts(session)
	want := map[string]int{}
	for _, s := range texts {
		want[s] = 1
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		r.t.Fatalf("session %s holds\n%v\nwant\n%v", session, got, want)
	}
}

const watchSession = "4c0ffee0-1d2e-4f3a-8b4c-5d6e7f8a9b0c"

// claudeLine is a Claude Code transcript line: an assistant text, or a
// user prompt when text starts with "user:".
func claudeLine(n int, text string) string {
	ts := time.Date(2026, 11, 3, 9, 0, n, 0, time.UTC).Format(time.RFC3339Nano)
	uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	if prompt, ok := strings.CutPrefix(text, "user:"); ok {
		b, _ := json.Marshal(map[string]any{"type": "user", "uuid": uuid, "sessionId": watchSession, "timestamp": ts, "message": map[string]any{"role": "user", "content": prompt}})
		return string(b) + "\n"
	}
	b, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": uuid, "sessionId": watchSession, "timestamp": ts,
		"message": map[string]any{"id": fmt.Sprintf("msg_%d", n), "role": "assistant", "model": "claude-sonnet-4-5", "content": []any{map[string]any{"type": "text", "text": text}}}})
	return string(b) + "\n"
}

// TestWatchClaudeExactlyOnce writes a transcript in pieces, with a partial
// last line, across restarts, a replayed crash, a rotation while stopped, a
// rotation while running, a truncation and a removal, and finds every
// assistant message on the server exactly once.
func TestWatchClaudeExactlyOnce(t *testing.T) {
	r := newWatchRig(t)
	r.start()
	path := filepath.Join(r.claude, "-home-dev-shop", watchSession+".jsonl")

	// Notifications alone (no rescan): a new project directory and file.
	testkit.AppendFile(t, path, claudeLine(1, "user:why is the test flaky?")+claudeLine(2, "A: the cart expires too soon"))
	testkit.WaitFor(t, 30*time.Second, "the first assistant message", func() bool { return r.texts(watchSession)["A: the cart expires too soon"] == 1 }, nil)

	// A partial last line waits for its newline.
	b := claudeLine(3, "B: the clock must be injectable")
	testkit.AppendFile(t, path, b[:40])
	r.barrier()
	r.expect(watchSession, "A: the cart expires too soon")
	testkit.AppendFile(t, path, b[40:])
	r.barrier()
	r.expect(watchSession, "A: the cart expires too soon", "B: the clock must be injectable")
	if s := r.w.Stats(); s.Files != 1 || s.Lines != 3 || s.Events != 2 {
		t.Fatalf("stats %+v", s)
	}

	// Stopped: lines written meanwhile (the last one partial) are read
	// after the restart.
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	offsetsAfterB, err := os.ReadFile(filepath.Join(r.spoolPath, watchStateFile))
	if err != nil {
		t.Fatal(err)
	}
	d := claudeLine(5, "D: done, 200 runs pass")
	testkit.AppendFile(t, path, claudeLine(4, "C: patched cart.go")+d[:25])
	r.start()
	r.barrier()
	r.expect(watchSession, "A: the cart expires too soon", "B: the clock must be injectable", "C: patched cart.go")
	testkit.AppendFile(t, path, d[25:])
	r.barrier()
	all := []string{"A: the cart expires too soon", "B: the clock must be injectable", "C: patched cart.go", "D: done, 200 runs pass"}
	r.expect(watchSession, all...)

	// A crash after sending and before saving the offsets: the lines are
	// read again and nothing is stored twice.
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.spoolPath, watchStateFile), offsetsAfterB, 0o600); err != nil {
		t.Fatal(err)
	}
	r.start()
	r.barrier()
	r.expect(watchSession, all...)
	if s := r.w.Stats(); s.Lines != 2 || s.Events != 2 {
		t.Fatalf("the replay read %+v, want the 2 lines after B again", s)
	}

	// Rotated while stopped: a new file at the path (new inode, new head)
	// is read from its start.
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	testkit.AppendFile(t, path, claudeLine(6, "E: new file after rotation, and some more text to make it longer than nothing"))
	r.start()
	r.barrier()
	all = append(all, "E: new file after rotation, and some more text to make it longer than nothing")
	r.expect(watchSession, all...)
	if s := r.w.Stats(); s.Restarts != 1 {
		t.Fatalf("stats %+v: the rotation was not seen", s)
	}

	// Rotated while running.
	if err := os.Rename(path, path+".2"); err != nil {
		t.Fatal(err)
	}
	testkit.AppendFile(t, path, claudeLine(7, "F: rotated while watched"))
	r.barrier()
	all = append(all, "F: rotated while watched")
	r.expect(watchSession, all...)

	// Truncated and rewritten shorter: read from the start.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	testkit.AppendFile(t, path, claudeLine(8, "G: short"))
	r.barrier()
	all = append(all, "G: short")
	r.expect(watchSession, all...)

	// Rewritten in place to the very same size while stopped (no
	// notification shows it empty): its first bytes differ.
	h := claudeLine(9, "H: same!")
	if len(h) != len(claudeLine(8, "G: short")) {
		t.Fatal("the rewrite must keep the size")
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(h), 0o600); err != nil {
		t.Fatal(err)
	}
	r.start()
	r.barrier()
	all = append(all, "H: same!")
	r.expect(watchSession, all...)

	// Removed: forgotten.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	r.barrier()
	if s := r.w.Stats(); s.Files != 0 {
		t.Fatalf("removed file still followed: %+v", s)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(r.spoolPath, watchStateFile)); strings.Contains(string(data), path) {
		t.Fatalf("offsets still name the removed file: %s", data)
	}
	r.expect(watchSession, all...)
}

// TestWatchCodexNewDirectories: the sessions directory appears after the
// watcher started, then a day directory; their rollouts are read whole,
// found by notifications alone (the test sends no rescan tick).
func TestWatchCodexNewDirectories(t *testing.T) {
	r := newWatchRig(t)
	r.start()
	data, err := os.ReadFile(filepath.Join("testdata", "transcripts", "codex-rollout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const session = "0199f2a4-6b1c-7d3e-8f50-a1b2c3d4e5f6"
	path := filepath.Join(r.codex, "2026", "11", "03", "rollout-2026-11-03T10-02-11-"+session+".jsonl")
	testkit.AppendFile(t, path, string(data))
	testkit.WaitFor(t, 30*time.Second, "the rollout's events", func() bool { return len(r.texts(session)) == 3 }, nil)
	// The next day's directory, found by notification alone.
	next := filepath.Join(r.codex, "2026", "11", "04", "rollout-2026-11-04T08-00-00-"+session+".jsonl")
	testkit.AppendFile(t, next, `{"timestamp":"2026-11-04T08:00:01.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"next day"}]}}`+"\n")
	testkit.WaitFor(t, 30*time.Second, "the next day's message", func() bool { return r.texts(session)["next day"] == 1 }, nil)
}

// TestWatchFirstStartSkipsOldContent: what transcripts held before the
// first start is left out, unless Backfill asks for it.
func TestWatchFirstStartSkipsOldContent(t *testing.T) {
	r := newWatchRig(t)
	path := filepath.Join(r.claude, "p", watchSession+".jsonl")
	testkit.AppendFile(t, path, claudeLine(1, "old one")+claudeLine(2, "old two")+`{"type":"assistant","partial`)
	r.start()
	r.barrier()
	r.expect(watchSession)
	testkit.AppendFile(t, path, ` line"}`+"\n"+claudeLine(3, "new"))
	r.barrier()
	r.expect(watchSession, "new")
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	// Another spool (no offsets), with Backfill: everything.
	r.spoolPath = filepath.Join(t.TempDir(), "spool")
	r.start(func(c *WatchConfig) { c.Backfill = true })
	r.barrier()
	r.expect(watchSession, "old one", "old two", "new")
}

// TestWatchLongLinesAndQuiet: a line over the limit is skipped and the
// next one read; notifications about other files read nothing.
func TestWatchLongLinesAndQuiet(t *testing.T) {
	r := newWatchRig(t)
	r.start(func(c *WatchConfig) { c.MaxLineBytes = 1024 })
	path := filepath.Join(r.claude, "p", watchSession+".jsonl")
	testkit.AppendFile(t, path, claudeLine(1, strings.Repeat("long ", 400))+claudeLine(2, "short"))
	r.barrier()
	r.expect(watchSession, "short")
	s := r.w.Stats()
	if s.Skipped != 1 || s.Lines != 2 {
		t.Fatalf("stats %+v", s)
	}
	// Quiet: other files change, no transcript is read.
	other := filepath.Join(r.claude, "p", "notes.txt")
	testkit.AppendFile(t, other, "x")
	testkit.WaitFor(t, 30*time.Second, "the notification about notes.txt", func() bool { return r.w.Stats().Notifications > s.Notifications }, nil)
	testkit.AppendFile(t, other, "y")
	testkit.WaitFor(t, 30*time.Second, "the second notification", func() bool { return r.w.Stats().Notifications > s.Notifications+1 }, nil)
	if now := r.w.Stats(); now.Reads != s.Reads || now.Lines != s.Lines {
		t.Fatalf("reads without a transcript change: %#v, before %#v", now, s)
	}
}

// watchFake makes a watcher of one Claude projects directory (root,
// empty) whose recorder sends to srv, spools to d and logs to logs; the
// test sends its rescans ticks and runs it.
func watchFake(t *testing.T, srv *fakeServer, logs io.Writer) (d *spool.Dir, rec *Recorder, root string, rescans chan time.Time, w *TranscriptWatcher) {
	t.Helper()
	dir := t.TempDir()
	d, err := spool.Open(filepath.Join(dir, "spool"), spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err = New(Config{Sender: srv.client(t), Spool: d, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(dir, "projects")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	rescans = make(chan time.Time)
	w, err = NewTranscriptWatcher(WatchConfig{Recorder: rec, Sources: []TranscriptSource{{Claude, root}}, Rescans: rescans})
	if err != nil {
		t.Fatal(err)
	}
	return d, rec, root, rescans, w
}

// TestWatchSpoolsWhileTheServerFails: events go to the spool (and the
// offsets move on) while the server fails; a rescan sends them, in order
// with what comes after.
func TestWatchSpoolsWhileTheServerFails(t *testing.T) {
	srv := newFakeServer(t)
	srv.setFail(func(int, *memory.EncodeBatchStoreRawRequest) int { return 503 })
	logs := &testkit.SyncBuffer{}
	d, _, root, rescans, w := watchFake(t, srv, logs)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	tick := func() {
		for range 2 {
			select {
			case rescans <- time.Now():
			case <-time.After(30 * time.Second):
				t.Fatal("no rescan")
			}
		}
	}
	tick() // started
	path := filepath.Join(root, "p", watchSession+".jsonl")
	testkit.AppendFile(t, path, claudeLine(1, "one"))
	tick()
	testkit.AppendFile(t, path, claudeLine(2, "two"))
	tick()
	if pending, _ := d.Pending(); len(pending) == 0 || len(srv.texts()) != 0 {
		t.Fatalf("pending %v, stored %q\n%s", pending, srv.texts(), logs)
	}
	srv.setFail(nil)
	testkit.AppendFile(t, path, claudeLine(3, "three"))
	testkit.WaitFor(t, 30*time.Second, "everything stored", func() bool { return len(srv.texts()) == 3 }, nil)
	tick()
	if got := strings.Join(srv.texts(), ","); got != "one,two,three" {
		t.Fatalf("stored %s\n%s", got, logs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestWatchStopsWhenTheKeyIsRefused: a refused key ends Run with an error;
// what was read is spooled, and the offsets saved.
func TestWatchStopsWhenTheKeyIsRefused(t *testing.T) {
	srv := newFakeServer(t)
	srv.setFail(func(int, *memory.EncodeBatchStoreRawRequest) int { return 401 })
	d, rec, root, rescans, w := watchFake(t, srv, io.Discard)
	done := make(chan error, 1)
	go func() { done <- w.Run(t.Context()) }()
	select {
	case rescans <- time.Now(): // started
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not start")
	}
	path := filepath.Join(root, "p", watchSession+".jsonl")
	testkit.AppendFile(t, path, claudeLine(1, "one"))
	if err := testkit.Receive(t, done, 30*time.Second, "Run to end after the key was refused"); err == nil || !strings.Contains(err.Error(), "spooled") {
		t.Fatalf("Run: %v", err)
	}
	if pending, _ := d.Pending(); len(pending) != 1 {
		t.Fatalf("pending %v", pending)
	}
	data, _ := os.ReadFile(filepath.Join(d.Path(), watchStateFile))
	if !strings.Contains(string(data), fmt.Sprintf(`"offset":%d`, len(claudeLine(1, "one")))) {
		t.Fatalf("offsets %s", data)
	}
	// A second watcher on the same spool is refused while one runs.
	other, _ := NewTranscriptWatcher(WatchConfig{Recorder: rec, Sources: []TranscriptSource{{Claude, root}}})
	unlock, err := d.TryLock(watchLock)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := other.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "another memsvc-recorder watch") {
		t.Fatalf("second watcher: %v", err)
	}
}
