package recorder

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/spool"
)

// byteReader reads as an endless run of one byte.
type byteReader byte

func (b byteReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestQueuedHookEventsKeepTheirOrder: hook events queued one after the
// other by separate processes (one recorder and one spool handle each, all
// in the same millisecond, each later one with smaller random bits), then
// sent by flushers that run concurrently, reach the server in the order
// they were queued.
func TestQueuedHookEventsKeepTheirOrder(t *testing.T) {
	srv := newFakeServer(t)
	path := filepath.Join(t.TempDir(), "spool")
	ms := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	const n = 24
	var want []string
	for i := range n {
		d, err := spool.Open(path, spool.Options{Now: func() time.Time { return ms }, Rand: byteReader(0xff - 10*i)})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := New(Config{Spool: d, Now: func() time.Time { return ms }})
		if err != nil {
			t.Fatal(err)
		}
		text := fmt.Sprintf("prompt %02d", i)
		want = append(want, text)
		evs := HookEvents(HookInput{Agent: Claude, Payload: fmt.Appendf(nil, `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":%q}`, text), Now: ms})
		if err := rec.Record(t.Context(), evs); err != nil {
			t.Fatal(err)
		}
		if st := rec.Stats(); st.Spooled != 1 || st.Sent != 0 {
			t.Fatalf("queueing sent something: %s", st)
		}
	}
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			d, err := spool.Open(path, spool.Options{})
			if err != nil {
				errs <- err
				return
			}
			rec, err := New(Config{Sender: srv.client(t), Spool: d, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				errs <- err
				return
			}
			errs <- rec.FlushSpoolWait(t.Context(), 30*time.Second)
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.texts(); !slices.Equal(got, want) {
		t.Fatalf("server got\n%q\nwant\n%q", got, want)
	}
}

// TestFlushSpoolWaitPicksUpLateFiles: a file queued while the flush holds
// the lock is sent by that flush, and a flusher that cannot get the lock in
// time leaves the spool alone.
func TestFlushSpoolWaitPicksUpLateFiles(t *testing.T) {
	srv := newFakeServer(t)
	d := newSpool(t)
	queue, _, _ := newRecorder(t, nil, d)
	if err := queue.Record(t.Context(), []Event{TextEvent("s", UserMessage, "first")}); err != nil {
		t.Fatal(err)
	}
	// The second file appears after the flush listed the directory: while
	// the first one is being sent.
	srv.setFail(func(call int, _ *memory.EncodeBatchStoreRawRequest) int {
		if call == 1 {
			if err := queue.Record(t.Context(), []Event{TextEvent("s", UserMessage, "second")}); err != nil {
				t.Error(err)
			}
		}
		return 0
	})
	unlock, err := d.TryLock(flushLock)
	if err != nil {
		t.Fatal(err)
	}
	blocked, _, logs := newRecorder(t, srv.client(t), d)
	if err := blocked.FlushSpoolWait(t.Context(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got := srv.texts(); len(got) != 0 || !strings.Contains(logs.String(), "another recorder kept flushing") {
		t.Fatalf("sent %q while another recorder held the lock\n%s", got, logs)
	}
	unlock()
	flusher, _, _ := newRecorder(t, srv.client(t), d)
	if err := flusher.FlushSpoolWait(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	if got := srv.texts(); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("server got %q", got)
	}
	if pending, _ := d.Pending(); len(pending) != 0 {
		t.Fatalf("left pending: %v", pending)
	}
}
