package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/spool"
)

func TestIngestBatches(t *testing.T) {
	f := newFakeServer(t)
	r, _, _ := newRecorder(t, f.client(t), newSpool(t))
	var in []string
	for i := 0; i < 120; i++ {
		in = append(in, ev("s", "user_message", fmt.Sprint("message ", i)))
	}
	if err := r.Ingest(t.Context(), lines(in...)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.batches, []int{50, 50, 20}) {
		t.Fatalf("batches %v, want [50 50 20]", f.batches)
	}
	got := f.texts()
	for i, s := range got {
		if s != fmt.Sprint("message ", i) {
			t.Fatalf("record %d is %q: order lost", i, s)
		}
	}
	if s := r.Stats(); s != (Stats{Accepted: 120, Sent: 120}) {
		t.Fatalf("stats %+v", s)
	}
	if s := r.Stats().String(); s != "accepted=120 duplicate=0 rejected=0 sent=120 spooled=0 replayed=0 quarantined=0" {
		t.Fatalf("summary %q", s)
	}
}

// TestIngestBatchBytes: a batch also ends when its size estimate would
// pass the byte bound.
func TestIngestBatchBytes(t *testing.T) {
	f := newFakeServer(t)
	r, _, _ := newRecorder(t, f.client(t), newSpool(t), func(c *Config) { c.MaxBatchBytes = 20 << 10 })
	big := strings.Repeat("y", 3000) // about 12 KiB as an integer array
	if err := r.Ingest(t.Context(), lines(ev("s", "command", big), ev("s", "command", big), ev("s", "command", big), ev("s", "command", "small"))); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.batches, []int{1, 1, 2}) {
		t.Fatalf("batches %v, want [1 1 2]", f.batches)
	}
}

// TestIngestFlushInterval: an incomplete batch goes out on a tick, while
// the input stays open.
func TestIngestFlushInterval(t *testing.T) {
	f := newFakeServer(t)
	ticks := make(chan time.Time)
	r, _, _ := newRecorder(t, f.client(t), newSpool(t), func(c *Config) { c.Ticks = ticks })
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- r.Ingest(t.Context(), pr) }()
	if _, err := io.WriteString(pw, ev("s", "user_message", "first")+"\n"); err != nil {
		t.Fatal(err)
	}
	// The line is read; keep ticking until the batch holding it is sent.
	deadline := time.After(10 * time.Second)
	for sent := false; !sent; {
		select {
		case ticks <- time.Now():
		case n := <-f.got:
			sent = n == 1
		case <-deadline:
			t.Fatal("the waiting batch was never sent on a tick")
		}
	}
	if _, err := io.WriteString(pw, ev("s", "user_message", "second")+"\n"); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := f.texts(); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("stored %q", got)
	}
}

// TestIngestRejectsLinesAndContinues: an oversize line and an invalid one
// are reported with their line numbers; the lines around them go through.
func TestIngestRejectsLinesAndContinues(t *testing.T) {
	f := newFakeServer(t)
	r, _, logs := newRecorder(t, f.client(t), newSpool(t), func(c *Config) { c.MaxEventBytes = 200 })
	err := r.Ingest(t.Context(), lines(
		ev("s", "user_message", "before"),
		ev("s", "user_message", strings.Repeat("x", 300)),
		`{"session_id":"s","event_type":"nope","content":"x"}`,
		strings.Repeat(" ", 250),
		"   ",
		ev("s", "user_message", "after"),
	))
	if !errors.Is(err, ErrInvalidEvent) || !strings.Contains(err.Error(), "3 input line(s)") {
		t.Fatalf("Ingest: %v", err)
	}
	if got := f.texts(); !slices.Equal(got, []string{"before", "after"}) {
		t.Fatalf("stored %q", got)
	}
	for _, want := range []string{"line 2: event is 359 bytes, over the 200-byte limit", "line 3: invalid capture event: event_type", "line 4: event is 250 bytes"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	if s := r.Stats(); s.Rejected != 3 || s.Accepted != 2 || s.Sent != 2 {
		t.Fatalf("stats %+v", s)
	}
}

// TestIngestSendFailures: what each failure does with the batch and the
// exit status.
func TestIngestSendFailures(t *testing.T) {
	cases := []struct {
		name    string
		status  int  // injected on every call; 0 with down: server closed
		down    bool // server unreachable
		wantErr string
		auth    bool
	}{
		{name: "server unreachable", down: true},
		{name: "429", status: 429},
		{name: "500", status: 500},
		{name: "503", status: 503},
		{name: "401", status: 401, wantErr: "refused the API key (HTTP 401)", auth: true},
		{name: "404", status: 404, wantErr: "HTTP 404"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t)
			f.setFail(func(int, *memory.EncodeBatchStoreRawRequest) int { return tc.status })
			c := f.client(t)
			if tc.down {
				f.srv.Close()
			}
			dir := newSpool(t)
			r, _, logs := newRecorder(t, c, dir)
			err := r.Ingest(t.Context(), lines(ev("s", "user_message", "one"), ev("s", "user_message", "two token=abcdef123456789")))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Ingest: %v (a retryable failure must not fail the run)", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Ingest: %v, want %q", err, tc.wantErr)
			}
			var se *SendError
			if tc.auth && (!errors.As(err, &se) || !se.Unauthorized()) {
				t.Fatalf("401 is not reported as unauthorized: %v", err)
			}
			spooled := pendingRecords(t, dir)
			if len(spooled) != 2 || r.Stats().Spooled != 2 || r.Stats().Sent != 0 {
				t.Fatalf("spooled %d records, stats %+v", len(spooled), r.Stats())
			}
			if s := text(t, &spooled[1]); s != "two token=[REDACTED]" {
				t.Fatalf("spooled text %q: not redacted", s)
			}
			if !strings.Contains(logs.String(), "spooled batch") {
				t.Fatalf("no spool note in the log:\n%s", logs)
			}
		})
	}
}

// TestIngestRefusedRecord: a record the server refuses as invalid does not
// hold back the others in its batch; it is quarantined, and the run fails.
func TestIngestRefusedRecord(t *testing.T) {
	f := newFakeServer(t)
	f.setFail(failOnText("bad", 400))
	dir := newSpool(t)
	r, _, _ := newRecorder(t, f.client(t), dir)
	err := r.Ingest(t.Context(), lines(ev("s", "command", "good 1"), ev("s", "command", "bad"), ev("s", "command", "good 2")))
	if err == nil || !strings.Contains(err.Error(), "refused 1 record") {
		t.Fatalf("Ingest: %v", err)
	}
	if got := f.texts(); !slices.Equal(got, []string{"good 1", "good 2"}) {
		t.Fatalf("stored %q", got)
	}
	if p, _ := dir.Pending(); len(p) != 0 {
		t.Fatalf("a refused record is pending: %v", p)
	}
	q, _ := dir.Quarantined()
	if len(q) != 1 {
		t.Fatalf("quarantined %v", q)
	}
	if s := r.Stats(); s.Sent != 2 || s.Refused != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestSpoolReplayNoDuplicates: the server stores a batch but the answer is
// lost; the batch is spooled and replayed by the next run, and the record
// ids make the replay a no-op on the server.
func TestSpoolReplayNoDuplicates(t *testing.T) {
	f := newFakeServer(t)
	f.setFail(failCall(1, -500))
	dir := newSpool(t)
	r1, _, _ := newRecorder(t, f.client(t), dir)
	if err := r1.Ingest(t.Context(), lines(ev("s", "user_message", "a"), ev("s", "user_message", "b"))); err != nil {
		t.Fatal(err)
	}
	if r1.Stats().Spooled != 2 {
		t.Fatalf("first run: %+v", r1.Stats())
	}
	r2, _, logs := newRecorder(t, f.client(t), dir)
	if err := r2.Ingest(t.Context(), lines(ev("s", "user_message", "c"))); err != nil {
		t.Fatal(err)
	}
	if got := f.texts(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("stored %q, want each record once, spooled ones first", got)
	}
	if s := r2.Stats(); s.Replayed != 2 || s.Sent != 1 {
		t.Fatalf("second run: %+v", s)
	}
	if !strings.Contains(logs.String(), "already_stored=2") {
		t.Fatalf("replay log:\n%s", logs)
	}
	if p, _ := dir.Pending(); len(p) != 0 {
		t.Fatalf("spool not emptied: %v", p)
	}
}

// TestFlushQuarantinesMalformed: files that cannot be parsed (or are not
// raw requests with ids) are quarantined and the others go through.
func TestFlushQuarantinesMalformed(t *testing.T) {
	f := newFakeServer(t)
	dir := newSpool(t)
	spoolOffline(t, dir, "kept")
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir.Path(), name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("batch-0000000000001-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl", "this is not json\n")
	write("batch-0000000000002-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl", `{"session_id":"s","content":{"blocks":[{"modality":"text","format":"text/plain","data":[104]}]}}`+"\n")
	write("batch-0000000000003-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl", `{"record_id":"0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f","session_id":"s","source":"gossip"}`+"\n")
	write("batch-0000000000004-0190b6a47c1e7a559f1a5f2b3c4d5e6f.jsonl", `{"record_id":"0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f"`)
	r, _, logs := newRecorder(t, f.client(t), dir)
	if err := r.FlushSpool(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := f.texts(); !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("stored %q", got)
	}
	q, _ := dir.Quarantined()
	if len(q) != 4 || r.Stats().Quarantined != 4 {
		t.Fatalf("quarantined %v, stats %+v", q, r.Stats())
	}
	if p, _ := dir.Pending(); len(p) != 0 {
		t.Fatalf("still pending: %v", p)
	}
	if !strings.Contains(logs.String(), "quarantined malformed spool file") {
		t.Fatalf("log:\n%s", logs)
	}
}

// TestFlushPartialRewrite: after a partial send the file holds exactly the
// unsent remainder.
func TestFlushPartialRewrite(t *testing.T) {
	f := newFakeServer(t)
	dir := newSpool(t)
	offline, _, _ := newRecorder(t, nil, dir)
	var events []Event
	for i := 0; i < 5; i++ {
		events = append(events, TextEvent("s", UserMessage, fmt.Sprint(i)))
	}
	if err := offline.Record(t.Context(), events); err != nil {
		t.Fatal(err)
	}
	f.setFail(failCall(2, 503))
	r, _, _ := newRecorder(t, f.client(t), dir, func(c *Config) { c.MaxBatchRecords = 2 })
	if err := r.FlushSpool(t.Context()); err != nil {
		t.Fatal(err)
	}
	left := pendingRecords(t, dir)
	var rest []string
	for i := range left {
		rest = append(rest, text(t, &left[i]))
	}
	if !slices.Equal(f.texts(), []string{"0", "1"}) || !slices.Equal(rest, []string{"2", "3", "4"}) {
		t.Fatalf("stored %q, left %q", f.texts(), rest)
	}
	r2, _, _ := newRecorder(t, f.client(t), dir, func(c *Config) { c.MaxBatchRecords = 2 })
	if err := r2.FlushSpool(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.texts(), []string{"0", "1", "2", "3", "4"}) || r2.Stats().Replayed != 3 {
		t.Fatalf("after the second flush: %q %+v", f.texts(), r2.Stats())
	}
}

// TestFlushAuthFailureKeepsInput: when the spool flush meets a 401, the
// new input is not sent but spooled (not dropped), and the run fails.
func TestFlushAuthFailureKeepsInput(t *testing.T) {
	f := newFakeServer(t)
	f.setFail(func(int, *memory.EncodeBatchStoreRawRequest) int { return 401 })
	dir := newSpool(t)
	spoolOffline(t, dir, "old")
	r, _, _ := newRecorder(t, f.client(t), dir)
	err := r.Ingest(t.Context(), lines(ev("s", "user_message", "new")))
	var se *SendError
	if !errors.As(err, &se) || !se.Unauthorized() {
		t.Fatalf("Ingest: %v", err)
	}
	if f.calls != 1 {
		t.Fatalf("%d calls: after a 401 nothing more may be sent", f.calls)
	}
	if got := pendingRecords(t, dir); len(got) != 2 {
		t.Fatalf("%d records spooled, want old and new", len(got))
	}
}

func TestFlushSkipsWhenAnotherRecorderFlushes(t *testing.T) {
	f := newFakeServer(t)
	dir := newSpool(t)
	spoolOffline(t, dir, "x")
	unlock, err := dir.TryLock("flush")
	if err != nil {
		t.Fatal(err)
	}
	r, _, logs := newRecorder(t, f.client(t), dir)
	if err := r.FlushSpool(t.Context()); err != nil {
		t.Fatal(err)
	}
	if f.calls != 0 || !strings.Contains(logs.String(), "another recorder is flushing") {
		t.Fatalf("flushed under another's lock: %d calls\n%s", f.calls, logs)
	}
	unlock()
	if err := r.FlushSpool(t.Context()); err != nil || !slices.Equal(f.texts(), []string{"x"}) {
		t.Fatalf("after unlock: %v %q", err, f.texts())
	}
}

// TestBackoff: after a retryable failure batches are spooled without
// calling the server until the backoff ends; the first success after it
// sends the spooled batches too.
func TestBackoff(t *testing.T) {
	f := newFakeServer(t)
	f.setFail(failCall(1, 500))
	r, clk, _ := newRecorder(t, f.client(t), newSpool(t))
	ctx := t.Context()
	for _, s := range []string{"a", "b"} {
		if err := r.Record(ctx, []Event{TextEvent("s", UserMessage, s)}); err != nil {
			t.Fatal(err)
		}
	}
	if f.calls != 1 || r.Stats().Spooled != 2 {
		t.Fatalf("during the backoff: %d calls, %+v", f.calls, r.Stats())
	}
	clk.Advance(minBackoff)
	if err := r.Record(ctx, []Event{TextEvent("s", UserMessage, "c")}); err != nil {
		t.Fatal(err)
	}
	if got := f.texts(); !slices.Equal(got, []string{"c", "a", "b"}) {
		t.Fatalf("stored %q", got)
	}
	if s := r.Stats(); s.Sent != 1 || s.Replayed != 2 {
		t.Fatalf("stats %+v", s)
	}
}

// TestRetryAfterHonoured: a 429's Retry-After sets the pause.
func TestRetryAfterHonoured(t *testing.T) {
	f := newFakeServer(t)
	f.setFail(failCall(1, 429))
	r, clk, _ := newRecorder(t, f.client(t), newSpool(t))
	_ = r.Record(t.Context(), []Event{TextEvent("s", UserMessage, "a")})
	if want := clk.Now().Add(time.Second); !r.holdUntil.Equal(want) {
		t.Fatalf("hold until %v, want %v (Retry-After: 1)", r.holdUntil, want)
	}
}

// TestDuplicateRule is the spec's rule: only events with an explicit
// turn_id, action_id or timestamp identity and identical content are
// dropped.
func TestDuplicateRule(t *testing.T) {
	ts := "2026-11-01T12:00:00Z"
	cases := []struct {
		name   string
		events []string
		sent   int
	}{
		{"no identity: both kept", []string{ev("s", "user_message", "hi"), ev("s", "user_message", "hi")}, 2},
		{"same turn, same content", []string{ev("s", "user_message", "hi", "turn_id", "t1"), ev("s", "user_message", "hi", "turn_id", "t1")}, 1},
		{"same turn, other content", []string{ev("s", "user_message", "hi", "turn_id", "t1"), ev("s", "user_message", "ho", "turn_id", "t1")}, 2},
		{"same action", []string{ev("s", "tool_call", "ls", "action_id", "a"), ev("s", "tool_call", "ls", "action_id", "a")}, 1},
		{"same timestamp", []string{ev("s", "command", "ls", "timestamp", ts), ev("s", "command", "ls", "timestamp", "2026-11-01T13:00:00+01:00")}, 1},
		{"other timestamp", []string{ev("s", "command", "ls", "timestamp", ts), ev("s", "command", "ls", "timestamp", "2026-11-01T12:00:01Z")}, 2},
		{"other session", []string{ev("s", "user_message", "hi", "turn_id", "t1"), ev("s2", "user_message", "hi", "turn_id", "t1")}, 2},
		{"other type", []string{ev("s", "user_message", "hi", "turn_id", "t1"), ev("s", "assistant_message", "hi", "turn_id", "t1")}, 2},
		{"other source", []string{ev("s", "user_message", "hi", "turn_id", "t1"), ev("s", "user_message", "hi", "turn_id", "t1", "source", "b")}, 2},
		{"visibility is not identity", []string{ev("s", "user_message", "hi", "turn_id", "t1"), ev("s", "user_message", "hi", "turn_id", "t1", "visibility", "sealed")}, 1},
		{"one identity field suffices, others must match", []string{ev("s", "user_message", "hi", "turn_id", "t1"), ev("s", "user_message", "hi", "turn_id", "t1", "action_id", "a")}, 2},
		{"repeat after others", []string{ev("s", "user_message", "x", "turn_id", "t1"), ev("s", "user_message", "y", "turn_id", "t2"), ev("s", "user_message", "x", "turn_id", "t1")}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeServer(t)
			r, _, _ := newRecorder(t, f.client(t), newSpool(t))
			if err := r.Ingest(t.Context(), lines(tc.events...)); err != nil {
				t.Fatal(err)
			}
			if s := r.Stats(); s.Sent != tc.sent || s.Duplicate != len(tc.events)-tc.sent || s.Accepted != tc.sent {
				t.Fatalf("stats %+v, want %d sent", s, tc.sent)
			}
		})
	}
}

// TestDuplicatesAcrossProcesses: hooks run one recorder per event; the
// recent-events file in the spool directory catches a repeat in a second
// process.
func TestDuplicatesAcrossProcesses(t *testing.T) {
	f := newFakeServer(t)
	dir := newSpool(t)
	withTurn := TextEvent("s", AssistantMessage, "done")
	withTurn.TurnID = "turn-9"
	plain := TextEvent("s", UserMessage, "again")
	for i := 0; i < 3; i++ {
		r, _, _ := newRecorder(t, f.client(t), dir)
		if err := r.Record(t.Context(), []Event{withTurn, plain}); err != nil {
			t.Fatal(err)
		}
		want := Stats{Accepted: 2, Sent: 2}
		if i > 0 {
			want = Stats{Accepted: 1, Sent: 1, Duplicate: 1}
		}
		if r.Stats() != want {
			t.Fatalf("process %d: %+v, want %+v", i, r.Stats(), want)
		}
	}
	data, err := dir.ReadState(recentFile)
	if err != nil || !strings.HasPrefix(string(data), recentHeader+"\n") || strings.Contains(string(data), "done") {
		t.Fatalf("recent-events file %q %v", data, err)
	}
}

func TestWindow(t *testing.T) {
	w := newWindow(2)
	k := func(b byte) dedupeKey { return dedupeKey{b} }
	w.add(k(1))
	w.add(k(2))
	w.add(k(1)) // no-op: already there
	w.add(k(3)) // evicts 1
	if w.has(k(1)) || !w.has(k(2)) || !w.has(k(3)) {
		t.Fatalf("window %v", w.keys())
	}
	if got := w.keys(); !slices.Equal(got, []dedupeKey{k(2), k(3)}) {
		t.Fatalf("order %v", got)
	}
	// The file format round-trips, and junk in it is ignored.
	back := parseRecent(formatRecent(w), 2)
	if !slices.Equal(back.keys(), w.keys()) {
		t.Fatalf("round trip %v", back.keys())
	}
	if junk := parseRecent([]byte("something else\n00\n"), 2); len(junk.keys()) != 0 {
		t.Fatal("junk file accepted")
	}
}

// TestOfflineSpools: without a server everything is spooled, redacted.
func TestOfflineSpools(t *testing.T) {
	dir := newSpool(t)
	r, _, _ := newRecorder(t, nil, dir)
	e := TextEvent("s", Command, "curl -H 'Authorization: Bearer abcdef0123456789XYZ' https://x")
	e.Metadata = json.RawMessage(`{"env":{"AWS_SECRET_ACCESS_KEY":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}}`)
	if err := r.Record(t.Context(), []Event{e}); err != nil {
		t.Fatal(err)
	}
	names, _ := dir.Pending()
	if len(names) != 1 {
		t.Fatalf("pending %v", names)
	}
	raw, err := os.ReadFile(filepath.Join(dir.Path(), names[0]))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "wJalrXUtnFEMI") {
		t.Fatalf("secret metadata in the spool file: %s", raw)
	}
	recs := pendingRecords(t, dir)
	if got := text(t, &recs[0]); strings.Contains(got, "abcdef0123456789XYZ") {
		t.Fatalf("secret content in the spool file: %q", got)
	}
}

// TestSpoolFailureLosesLoudly: when the spool cannot be written, the run
// fails and says how many records were lost.
func TestSpoolFailureLosesLoudly(t *testing.T) {
	if !privateDirs() {
		t.Skip("no permission bits here")
	}
	dir := newSpool(t)
	if err := os.Chmod(dir.Path(), 0o755); err != nil { // now refused at write
		t.Fatal(err)
	}
	r, _, _ := newRecorder(t, nil, dir)
	err := r.Record(t.Context(), []Event{TextEvent("s", UserMessage, "x")})
	if err == nil || !strings.Contains(err.Error(), "1 record(s) lost") || !errors.Is(err, spool.ErrNotPrivate) {
		t.Fatalf("Record: %v", err)
	}
}

func privateDirs() bool {
	d := filepath.Join(os.TempDir(), fmt.Sprintf("memsvc-perm-probe-%d", os.Getpid()))
	defer os.Remove(d)
	if err := os.Mkdir(d, 0o700); err != nil {
		return false
	}
	fi, err := os.Stat(d)
	return err == nil && fi.Mode().Perm() == 0o700 && os.Getuid() >= 0
}

func TestClassify(t *testing.T) {
	cases := []struct {
		err    error
		status int
		want   outcome
	}{
		{errors.New("x"), 500, retry},
		{errors.New("x"), 503, retry},
		{errors.New("x"), 429, retry},
		{errors.New("x"), 408, retry},
		{errors.New("x"), 401, auth},
		{errors.New("x"), 403, auth},
		{errors.New("x"), 400, rejected},
		{errors.New("x"), 413, rejected},
		{errors.New("x"), 404, fatal},
		{errors.New("x"), 302, fatal},
		{errors.New("x"), 200, fatal},
		{context.DeadlineExceeded, 0, retry},
		{memory.ErrRateLimited, 0, retry},
		{memory.ErrUnauthorized, 0, auth},
		{memory.ErrValidation, 0, rejected},
		{memory.ErrInternal, 0, retry},
		{memory.ErrNotFound, 0, fatal},
	}
	for _, tc := range cases {
		if got := classify(tc.err, tc.status); got != tc.want {
			t.Errorf("classify(%v, %d) = %v, want %v", tc.err, tc.status, got, tc.want)
		}
	}
}

func TestNewClientRefusesKeyOverPlainHTTP(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8420", true},
		{"http://localhost:8420", true},
		{"http://[::1]:8420", true},
		{"https://memsvc.example.com", true},
		{"http://memsvc.example.com", false},
		{"http://10.0.0.5:8420", false},
	} {
		_, err := NewClient(tc.url, ClientOptions{APIKey: "k"})
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.url, err)
		}
		if err != nil && !strings.Contains(err.Error(), "refusing to send MEMSVC_SERVER_API_KEY over plain http") {
			t.Errorf("%s: unclear message %q", tc.url, err)
		}
		if _, err := NewClient(tc.url, ClientOptions{}); err != nil {
			t.Errorf("%s without a key: %v", tc.url, err)
		}
	}
}

// TestPoisonedSpoolDoesNotBlockNewInput: a spooled batch the server keeps
// failing on (5xx) stays spooled, and new input is still sent.
func TestPoisonedSpoolDoesNotBlockNewInput(t *testing.T) {
	f := newFakeServer(t)
	f.setFail(failOnText("poison", 500))
	dir := newSpool(t)
	spoolOffline(t, dir, "poison")
	for run := 0; run < 2; run++ {
		r, _, logs := newRecorder(t, f.client(t), dir)
		if err := r.Ingest(t.Context(), lines(ev("s", "user_message", fmt.Sprint("fresh ", run)))); err != nil {
			t.Fatal(err)
		}
		if s := r.Stats(); s.Sent != 1 || s.Spooled != 0 {
			t.Fatalf("run %d: %+v\n%s", run, s, logs)
		}
	}
	if got := f.texts(); !slices.Equal(got, []string{"fresh 0", "fresh 1"}) {
		t.Fatalf("stored %q", got)
	}
	if p := pendingRecords(t, dir); len(p) != 1 || text(t, &p[0]) != "poison" {
		t.Fatalf("pending %d", len(p))
	}
}
