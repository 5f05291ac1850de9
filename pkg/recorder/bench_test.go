package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/recorder"
	"memsvc.dev/memsvc/pkg/spool"
	"memsvc.dev/memsvc/pkg/store"
)

// BenchmarkIngest measures events per second through Ingest — line
// reading, validation, redaction, batching and HTTP — into an engine
// served by httpapi over loopback: in memory, and on disk with every batch
// synced. Events are about 400 bytes of agent-like text; one in four holds
// a secret. "ids" gives every event a turn id, so duplicate dropping and
// the recent-events file are exercised too.
func BenchmarkIngest(b *testing.B) {
	const events = 2000
	for _, storeKind := range []string{"memory", "disk"} {
		for _, ids := range []bool{false, true} {
			name := storeKind
			if ids {
				name += "/ids"
			}
			b.Run(name, func(b *testing.B) {
				url := benchServer(b, storeKind)
				c, err := recorder.NewClient(url, recorder.ClientOptions{})
				if err != nil {
					b.Fatal(err)
				}
				input := benchInput(events, ids)
				b.SetBytes(int64(len(input)))
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					dir, err := spool.Open(filepath.Join(b.TempDir(), "spool"), spool.Options{})
					if err != nil {
						b.Fatal(err)
					}
					// Each round stores new events: vary the session.
					in := strings.ReplaceAll(input, `"session_id":"bench"`, fmt.Sprintf(`"session_id":"bench-%d"`, i))
					r, err := recorder.New(recorder.Config{Sender: c, Spool: dir})
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if err := r.Ingest(context.Background(), strings.NewReader(in)); err != nil {
						b.Fatal(err)
					}
					if s := r.Stats(); s.Sent != events {
						b.Fatalf("stats %+v", s)
					}
				}
				b.ReportMetric(float64(events*b.N)/time.Since(start).Seconds(), "events/s")
			})
		}
	}
}

func benchServer(b *testing.B, kind string) string {
	b.Helper()
	var db *store.DB
	var err error
	if kind == "disk" {
		db, err = store.Open(b.TempDir(), store.Options{})
	} else {
		db, err = store.OpenInMemory()
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	eng, err := engine.Open(context.Background(), db, engine.Options{SimilarLinks: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = eng.Close() })
	h, err := httpapi.New(eng, httpapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return srv.URL
}

func benchInput(n int, ids bool) string {
	var sb strings.Builder
	types := []string{"user_message", "assistant_message", "tool_call", "tool_result"}
	for i := 0; i < n; i++ {
		content := fmt.Sprintf("Step %d: ran go test ./pkg/... and looked at the failing case in recorder_test.go; "+
			"the batch was split because the byte bound was reached, which is what the design says should happen "+
			"when large tool output arrives. Next I will check the spool directory permissions and the doctor report.", i)
		if i%4 == 0 {
			content += " export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789"
		}
		fmt.Fprintf(&sb, `{"session_id":"bench","event_type":%q,"content":%q`, types[i%len(types)], content)
		if ids {
			fmt.Fprintf(&sb, `,"turn_id":"turn-%d"`, i)
		}
		sb.WriteString("}\n")
	}
	return sb.String()
}

// BenchmarkHook measures what `memsvc-recorder hook claude` does in process
// for one typical PostToolUse payload (the 4 KiB event of pkg/redact's
// benchmarks): mapping the payload, redaction, the duplicate check and the
// HTTP call into an in-memory server. Process start-up is not included;
// the whole invocation is measured through the built binary (see the
// README's Recorder section).
func BenchmarkHook(b *testing.B) {
	payload, err := os.ReadFile("../redact/testdata/event.json")
	if err != nil {
		b.Fatal(err)
	}
	url := benchServer(b, "memory")
	c, err := recorder.NewClient(url, recorder.ClientOptions{})
	if err != nil {
		b.Fatal(err)
	}
	dir, err := spool.Open(filepath.Join(b.TempDir(), "spool"), spool.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(payload)))
	i := 0
	for b.Loop() {
		i++
		p := bytes.Replace(payload, []byte("3fa85f64-5717-4562-b3fc-2c963f66afa6"), fmt.Appendf(nil, "bench-%d", i), 1)
		events := recorder.HookEvents(recorder.HookInput{Agent: recorder.Claude, Payload: p, Now: time.Now()})
		r, err := recorder.New(recorder.Config{Sender: c, Spool: dir})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Record(context.Background(), events); err != nil {
			b.Fatal(err)
		}
		if s := r.Stats(); s.Sent != len(events) || s.Sent == 0 {
			b.Fatalf("stats %+v", s)
		}
	}
}
