package recorder

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/redact/redacttest"
)

// corpusLines joins corpus events into JSONL input.
func corpusLines(events []redacttest.Event) *bytes.Reader {
	var b bytes.Buffer
	for _, e := range events {
		b.Write(e.Line)
		b.WriteByte('\n')
	}
	return bytes.NewReader(b.Bytes())
}

// leaked returns the secrets of events a part of which is in out.
func leaked(out string, events []redacttest.Event) []string {
	var secrets []string
	for _, e := range events {
		secrets = append(secrets, e.Texts...)
	}
	return redacttest.Leaked(out, secrets)
}

// recordTexts returns every text a request carries: ids, content text
// (which travels as a byte array), metadata and meta-memory.
func recordTexts(t *testing.T, recs []memory.EncodeStoreRawRequest) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		text, _ := r.Content.Text()
		meta, err := json.Marshal(r.Meta)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(r.SessionID + "\n" + text + "\n" + string(r.Metadata) + "\n" + string(meta) + "\n")
	}
	return b.String()
}

// spoolBytes returns the content of every file in the spool directory.
func spoolBytes(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// ingestCorpus ingests events through a recorder that reaches a working
// server, and returns what the server stored and what the recorder logged.
func ingestCorpus(t *testing.T, events []redacttest.Event) ([]memory.EncodeStoreRawRequest, *testkit.SyncBuffer) {
	t.Helper()
	f := newFakeServer(t)
	r, _, logs := newRecorder(t, f.client(t), newSpool(t))
	if err := r.Ingest(t.Context(), corpusLines(events)); err != nil {
		t.Fatalf("Ingest: %v", err)
	}
	return f.records(), logs
}

// TestCorpusSecretsNeverSent ingests every secret of the corpus, in user
// messages, tool payloads, metadata and meta-memories, and checks that no
// part of any of them reaches the server or the log.
func TestCorpusSecretsNeverSent(t *testing.T) {
	events := redacttest.SecretEvents()
	recs, logs := ingestCorpus(t, events)
	if len(recs) != len(events) {
		t.Fatalf("%d records stored, want %d", len(recs), len(events))
	}
	if bad := leaked(recordTexts(t, recs), events); len(bad) > 0 {
		t.Errorf("%d of %d secrets reached the server, first: %q", len(bad), len(events), bad[0])
	}
	if bad := leaked(logs.String(), events); len(bad) > 0 {
		t.Errorf("%d secrets reached the log, first: %q", len(bad), bad[0])
	}
}

// TestCorpusSecretsNeverSpooled sends the corpus to a server that is down,
// as capture events and as Claude Code hook payloads, and checks that no
// part of any secret reaches the spool directory.
func TestCorpusSecretsNeverSpooled(t *testing.T) {
	events := redacttest.SecretEvents()
	f := newFakeServer(t)
	f.setFail(func(int, *memory.EncodeBatchStoreRawRequest) int { return 503 })
	dir := newSpool(t)
	r, _, logs := newRecorder(t, f.client(t), dir)
	if err := r.Ingest(t.Context(), corpusLines(events)); err != nil {
		t.Fatalf("Ingest: %v", err)
	}
	if got := r.Stats().Spooled; got != len(events) {
		t.Fatalf("%d records spooled, want %d", got, len(events))
	}
	secrets := redacttest.Secrets()
	var hooks []Event
	for i, s := range secrets {
		hooks = append(hooks, HookEvents(HookInput{Agent: Claude, Payload: redacttest.HookPayload(i, s.Line), Now: time.Unix(1700000000, 0)})...)
	}
	hookDir := newSpool(t)
	hr, _, hookLogs := newRecorder(t, nil, hookDir)
	if err := hr.Record(t.Context(), hooks); err != nil {
		t.Fatalf("Record: %v", err)
	}
	if hr.Stats().Spooled == 0 {
		t.Fatal("no hook event spooled")
	}
	spooled := spoolBytes(t, dir.Path()) + spoolBytes(t, hookDir.Path()) +
		recordTexts(t, pendingRecords(t, dir)) + recordTexts(t, pendingRecords(t, hookDir))
	if bad := leaked(spooled, events); len(bad) > 0 {
		t.Errorf("%d of %d secrets reached the spool, first: %q", len(bad), len(events), bad[0])
	}
	if bad := leaked(logs.String()+hookLogs.String(), events); len(bad) > 0 {
		t.Errorf("%d secrets reached the log, first: %q", len(bad), bad[0])
	}
}

// TestCorpusLookAlikesRecordedAsIs ingests every look-alike of the corpus
// and checks that the server receives it byte for byte: as the text of a
// message, inside a tool payload, in the metadata and in the meta-memory.
func TestCorpusLookAlikesRecordedAsIs(t *testing.T) {
	events := redacttest.LookAlikeEvents()
	recs, _ := ingestCorpus(t, events)
	byTurn := map[string]memory.EncodeStoreRawRequest{}
	for _, rec := range recs {
		byTurn[*rec.TurnID] = rec
	}
	damaged := 0
	for _, e := range events {
		var in struct {
			TurnID   string             `json:"turn_id"`
			Content  json.RawMessage    `json:"content"`
			Metadata json.RawMessage    `json:"metadata"`
			Meta     *memory.MetaMemory `json:"meta"`
		}
		if err := json.Unmarshal(e.Line, &in); err != nil {
			t.Fatal(err)
		}
		rec, ok := byTurn[in.TurnID]
		if !ok {
			t.Fatalf("event %s not stored", in.TurnID)
		}
		text, _ := rec.Content.Text()
		want, _ := contentText(in.Content)
		var md entryMetadata
		if err := json.Unmarshal(rec.Metadata, &md); err != nil {
			t.Fatal(err)
		}
		switch {
		case text != want:
			t.Errorf("content damaged:\n  in: %s\n got: %s", want, text)
		case in.Metadata != nil && !bytes.Equal(md.CaptureMetadata, in.Metadata):
			t.Errorf("metadata damaged:\n  in: %s\n got: %s", in.Metadata, md.CaptureMetadata)
		case in.Meta != nil && (rec.Meta == nil || *rec.Meta.Intent != *in.Meta.Intent || rec.Meta.Goals[0] != in.Meta.Goals[0]):
			t.Errorf("meta-memory damaged: %q", *in.Meta.Intent)
		default:
			continue
		}
		damaged++
	}
	if damaged > 0 {
		t.Errorf("%d of %d look-alikes damaged", damaged, len(events))
	}
}

// TestRejectedLinesLogRedacted feeds lines that are invalid because a
// field holds a secret instead of a valid value, and checks that the log
// and the error quote the value only redacted and cut short.
func TestRejectedLinesLogRedacted(t *testing.T) {
	secrets := redacttest.Secrets()
	var in strings.Builder
	var used []redacttest.Event
	fields := []string{"event_type", "speaker", "visibility", "secrecy_level", "timestamp"}
	for i := 0; i < 60; i++ {
		s := secrets[i*len(secrets)/60]
		field := fields[i%len(fields)]
		var line []byte
		var err error
		switch {
		case i%7 == 6:
			line, err = json.Marshal(map[string]any{"session_id": "s", "event_type": "user_message", "content": "x",
				"meta": map[string]any{"schema_version": 1, "capture_status": s.Value}})
		default:
			ev := map[string]any{"session_id": "s", "event_type": "user_message", "content": "x"}
			ev[field] = s.Value
			line, err = json.Marshal(ev)
		}
		if err != nil {
			t.Fatal(err)
		}
		in.Write(line)
		in.WriteByte('\n')
		used = append(used, redacttest.Event{Texts: []string{s.Value}})
	}
	r, _, logs := newRecorder(t, nil, newSpool(t))
	err := r.Ingest(t.Context(), strings.NewReader(in.String()))
	if err == nil {
		t.Fatal("Ingest accepted invalid lines")
	}
	if got := r.Stats().Rejected; got != 60 {
		t.Fatalf("%d lines rejected, want 60\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), "input line rejected") {
		t.Fatalf("no rejection logged:\n%s", logs.String())
	}
	if bad := leaked(logs.String()+err.Error(), used); len(bad) > 0 {
		t.Errorf("%d of 60 rejected values reached the log, first: %q\n%s", len(bad), bad[0], logs.String())
	}
}
