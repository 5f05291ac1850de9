package e2e

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

var (
	uuidRE      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timestampRE = regexp.MustCompile(`"\d{4}-\d{2}-\d{2}T[0-9:.]+Z"`)
	// Times in text output, as recall prints them.
	textTimeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \S+`)
	storedRE   = regexp.MustCompile(`^Stored: ([0-9a-f-]{36}) \(store: (\w+), fidelity: 1\)\n$`)
	// An archive's checksum covers record ids and times, so it differs
	// between two directories with the same content.
	checksumRE = regexp.MustCompile(`checksum=[0-9a-f]{64}`)
	sizeRE     = regexp.MustCompile(`\(\d+ bytes`)
	exportedRE = regexp.MustCompile(`^Exported 2 records to <archive> \(<n> bytes, archive_id=<id>, checksum=<sum>\)\n$`)
)

// cliStep is one command of the scenario: its arguments, what its output
// must contain and, when set, the form the whole output must have once
// ids and paths are replaced by placeholders.
type cliStep struct {
	name string
	args []string
	want string
	form *regexp.Regexp
}

// TestCLIThroughServerURL runs the data commands the other tests do not
// cover through --server-url (forget, set-mode, decay-tick, dream-tick,
// consolidate, export, import, recall-raw) and requires each to succeed
// and print the same as the same scenario in embedded mode on a directory
// of its own, once what must differ between two directories (record ids,
// timestamps, archive checksums and paths) is set aside.
func TestCLIThroughServerURL(t *testing.T) {
	// No background decay or dream during the test: a tick between two
	// steps would change fidelity digits (and so archive sizes and average
	// fidelity) in one mode only.
	srv := startServer(t, t.TempDir(), "MEMSVC_DECAY__BACKGROUND_INTERVAL_SECS=86400", "MEMSVC_DREAM__BACKGROUND_INTERVAL_SECS=86400")
	viaServer := runScenario(t, "--server-url", srv.url(""))
	embedded := runScenario(t, "--data-dir", t.TempDir())
	for i := range viaServer {
		if viaServer[i] != embedded[i] {
			t.Errorf("step %d: through the server\n%s\nembedded\n%s", i, viaServer[i], embedded[i])
		}
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("server exit: %v\n%s", err, srv.log())
	}
}

// runScenario runs the scenario with the global flag and value that pick
// the mode, checks every step, and returns each step's output with record
// ids, timestamps and local paths replaced by placeholders, for comparison
// between modes.
func runScenario(t *testing.T, modeFlag, modeValue string) []string {
	t.Helper()
	memsvc := func(args ...string) result {
		return runBin(t, 30*time.Second, nil, "memsvc", append([]string{modeFlag, modeValue}, args...)...)
	}
	var outputs []string
	keep := func(r result, replacements ...string) {
		out := strings.NewReplacer(replacements...).Replace(r.stdout)
		out = timestampRE.ReplaceAllString(uuidRE.ReplaceAllString(out, "<id>"), `"<time>"`)
		out = textTimeRE.ReplaceAllString(out, "<time>")
		out = checksumRE.ReplaceAllString(out, "checksum=<sum>")
		out = sizeRE.ReplaceAllString(out, "(<n> bytes")
		outputs = append(outputs, out)
	}

	var episodicID string
	for _, s := range []struct{ text, store string }{
		{"the deploy key rotates every ninety days", "semantic"},
		{"the staging database is called pg-stage-2", "episodic"},
	} {
		r := memsvc("store", s.text, "--store", s.store)
		m := storedRE.FindStringSubmatch(r.stdout)
		if r.code != 0 || m == nil || m[2] != s.store {
			t.Fatalf("%s: store: %+v", modeFlag, r)
		}
		if s.store == "episodic" {
			episodicID = m[1]
		}
	}
	if r := memsvc("store-raw", "we moved the standup to ten", "--session-id", "standup-chat"); r.code != 0 {
		t.Fatalf("%s: store-raw: %+v", modeFlag, r)
	}

	// recall-raw --json prints the API's answer: the entry must come back
	// with its text.
	r := memsvc("recall-raw", "--session-id", "standup-chat", "--json")
	var raw memory.RecallRawQueryResponse
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil || r.code != 0 || len(raw.Records) != 1 {
		t.Fatalf("%s: recall-raw (%v): %+v", modeFlag, err, r)
	}
	if text, _ := raw.Records[0].Content.Text(); text != "we moved the standup to ten" {
		t.Fatalf("%s: recall-raw returned %q", modeFlag, text)
	}
	keep(r)

	archive := filepath.Join(t.TempDir(), "backup.cma")
	steps := []cliStep{
		{name: "set-mode", args: []string{"set-mode", "perfect"}, want: "Recall mode set to perfect for all stores\n"},
		{name: "decay-tick", args: []string{"decay-tick", "--duration", "60"}, want: "Decay tick completed:\n  records updated: 2\n"},
		{name: "dream-tick", args: []string{"dream-tick", "--dry-run", "--json"}, want: `"groups_processed": 1,`},
		{name: "consolidate", args: []string{"consolidate", "--dry-run"}, want: "Consolidated: processed=1, migrated=1, "},
		{name: "export", args: []string{"export", "--output", archive}, want: "Exported 2 records to " + archive, form: exportedRE},
		{name: "forget", args: []string{"forget", episodicID, "--confirm"}, want: "Deleted 1 record(s)\n"},
		{name: "import", args: []string{"import", archive}, want: "Imported 1 records from " + archive + "; skipped 1 already stored (--conflict-resolution keep_newer)\n"},
		{name: "recall", args: []string{"recall", "staging database"}, want: "Found 1 memories (total candidates: 1)"},
	}
	for _, s := range steps {
		r := memsvc(s.args...)
		if r.code != 0 || !strings.Contains(r.stdout, s.want) {
			t.Fatalf("%s: %s: want output containing %q, got %+v", modeFlag, s.name, s.want, r)
		}
		keep(r, archive, "<archive>")
		if out := outputs[len(outputs)-1]; s.form != nil && !s.form.MatchString(out) {
			t.Errorf("%s: %s printed %q", modeFlag, s.name, out)
		}
	}
	// The forgotten record is back from the archive, under its own id.
	if r := memsvc("recall", "staging database"); !strings.Contains(r.stdout, "ID: "+episodicID+"\n") || !strings.Contains(r.stdout, "pg-stage-2") {
		t.Fatalf("%s: recall after import: %+v", modeFlag, r)
	}

	r = memsvc("stats", "--json")
	var st memory.Stats
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || r.code != 0 {
		t.Fatalf("%s: stats (%v): %+v", modeFlag, err, r)
	}
	// Two differences are by design: only the server runs background
	// loops, and the evolution observations behind detected_patterns live
	// in the memory of one process (pkg/engine/evolution.go), so the
	// server has seen both recalls and each embedded command none. The
	// rest must agree.
	st.BackgroundDecayEnabled, st.BackgroundDreamEnabled = false, false
	if st.EvolutionMetrics != nil {
		st.EvolutionMetrics.DetectedPatterns = nil
	}
	want := map[memory.StoreType]uint32{memory.StoreSemantic: 1, memory.StoreEpisodic: 1}
	if st.TotalRecords != 2 || st.RawJournalRecords != 1 || st.RawJournalPendingDream != 1 || !reflect.DeepEqual(nonZero(st.RecordsByStore), want) {
		t.Fatalf("%s: stats %+v", modeFlag, st)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	keep(result{stdout: string(b)})
	return outputs
}

// nonZero is m without its zero counts.
func nonZero(m map[memory.StoreType]uint32) map[memory.StoreType]uint32 {
	out := map[memory.StoreType]uint32{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}
