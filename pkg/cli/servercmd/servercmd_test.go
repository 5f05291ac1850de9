package servercmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
)

// invocation is how a test runs memsvc: what stdin holds, the environment
// (empty unless given, so the host's MEMSVC_* variables cannot leak in) and
// whether stdin counts as a terminal, where the commands ask before
// destructive steps.
type invocation struct {
	stdin    string
	env      []string
	terminal bool
}

// run executes memsvc with args against dataDir and returns stdout, stderr
// and the exit code.
func (in invocation) run(t *testing.T, dataDir string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	r := newRoot(strings.NewReader(in.stdin), &stdout, &stderr, in.env)
	r.terminal = func(any) bool { return in.terminal }
	code := cli.Run(context.Background(), r.cmd, append([]string{"--data-dir", dataDir}, args...), &stderr)
	return stdout.String(), stderr.String(), code
}

// run executes memsvc with an empty stdin, no terminal and no environment.
func run(t *testing.T, dataDir string, args ...string) (string, string, int) {
	t.Helper()
	return invocation{}.run(t, dataDir, args...)
}

// runIn is run with stdin as the standard input.
func runIn(t *testing.T, dataDir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return invocation{stdin: stdin}.run(t, dataDir, args...)
}

// runEnv is run with the environment env.
func runEnv(t *testing.T, dataDir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return invocation{env: env}.run(t, dataDir, args...)
}

var storedRE = regexp.MustCompile(`^Stored: ([0-9a-f-]{36}) \(store: (\w+), fidelity: 1\)\n$`)

func storeText(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errOut, code := run(t, dir, append([]string{"store"}, args...)...)
	if code != 0 {
		t.Fatalf("store exit %d: %s", code, errOut)
	}
	m := storedRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("store output %q", out)
	}
	return m[1]
}

func stats(t *testing.T, dir string) memory.Stats {
	t.Helper()
	out, errOut, code := run(t, dir, "stats", "--json")
	if code != 0 {
		t.Fatalf("stats exit %d: %s", code, errOut)
	}
	var s memory.Stats
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("stats output is not JSON: %v\n%s", err, out)
	}
	return s
}

// TestStoreInspectForget is the round trip: store, inspect, stats,
// forget refused without --confirm, forget with it.
func TestStoreInspectForget(t *testing.T) {
	dir := t.TempDir()
	id := storeText(t, dir, "hello")

	out, errOut, code := run(t, dir, "inspect", id, "--json")
	if code != 0 {
		t.Fatalf("inspect exit %d: %s", code, errOut)
	}
	var rec memory.MemoryRecord
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("inspect output is not a record: %v", err)
	}
	if text, _ := rec.Content.Text(); text != "hello" || rec.ID.String() != id || rec.Store != memory.StoreEpisodic {
		t.Fatalf("inspect: %+v", rec)
	}
	if s := stats(t, dir); s.TotalRecords != 1 || s.RecordsByStore[memory.StoreEpisodic] != 1 {
		t.Fatalf("stats: %+v", s)
	}

	out, errOut, code = run(t, dir, "forget", id)
	if code != 2 || out != "" || !strings.Contains(errOut, "--confirm") || !strings.Contains(errOut, "nothing was deleted") {
		t.Fatalf("unconfirmed forget: exit %d out %q err %q", code, out, errOut)
	}
	if s := stats(t, dir); s.TotalRecords != 1 {
		t.Fatal("unconfirmed forget deleted the record")
	}
	out, _, code = run(t, dir, "forget", id, "--confirm")
	if code != 0 || out != "Deleted 1 record(s)\n" {
		t.Fatalf("forget: exit %d %q", code, out)
	}
	_, errOut, code = run(t, dir, "inspect", id)
	if code != 1 || !strings.Contains(errOut, "record not found: "+id) {
		t.Fatalf("inspect after forget: exit %d %q", code, errOut)
	}
	if s := stats(t, dir); s.TotalRecords != 0 {
		t.Fatal("record still counted")
	}
}

// TestFlagsAfterArguments: flags may follow the positional text.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	id := storeText(t, dir, "a fact", "--store", "semantic", "--meta-json", `{"intent":"teach","tags":["x"]}`)
	out, _, _ := run(t, dir, "inspect", id, "--json")
	var rec memory.MemoryRecord
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Store != memory.StoreSemantic || rec.Meta.Intent == nil || *rec.Meta.Intent != "teach" || rec.Meta.CaptureStatus != memory.CaptureProvided {
		t.Fatalf("record %+v", rec)
	}
	// Text that starts with a dash, after --.
	id = storeText(t, dir, "--", "-5 degrees outside")
	out, _, _ = run(t, dir, "inspect", id, "--json")
	if !strings.Contains(out, `"data": [`) {
		t.Fatal("no content")
	}
}

// TestBadInput: each mistake is a clear error and nothing is written.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", memory.MaxTextBlockBytes+1)
	tests := []struct {
		name     string
		args     []string
		code     int
		mentions []string
	}{
		{"malformed meta", []string{"store", "x", "--meta-json", "{not json"}, 2, []string{"--meta-json", "not a valid meta-memory JSON"}},
		{"misspelt meta field", []string{"store", "x", "--meta-json", `{"intnet":"x"}`}, 2, []string{"--meta-json", `unknown field "intnet"`}},
		{"meta out of range", []string{"store", "x", "--meta-json", `{"confidence":3}`}, 2, []string{"--meta-json.confidence", "between 0 and 1"}},
		{"unknown store", []string{"store", "x", "--store", "attic"}, 2, []string{"--store", `"attic"`, "episodic, semantic, procedural, emotional, working"}},
		{"over-size text", []string{"store", big}, 1, []string{"content.blocks[0].data", "1048577 bytes exceeds the 1048576-byte limit"}},
		{"invalid utf-8", []string{"store", "caf\xe9"}, 1, []string{"not valid UTF-8"}},
		{"non-finite embedding", []string{"store", "x", "--embedding", "0.1,NaN,0.3"}, 2, []string{"--embedding", "item 2", "not a finite number"}},
		{"infinite embedding", []string{"store", "x", "--embedding", "1e99"}, 2, []string{"--embedding", "not a finite number"}},
		{"missing text", []string{"store"}, 2, []string{"missing TEXT"}},
		{"two texts", []string{"store", "a", "b"}, 2, []string{"expected one TEXT", "quote"}},
		{"unknown flag", []string{"store", "x", "--stor", "semantic"}, 2, []string{"stor"}},
		{"raw without session", []string{"store-raw", "x"}, 2, []string{"--session-id is required"}},
		{"raw bad visibility", []string{"store-raw", "x", "--session-id", "s", "--visibility", "public"}, 2, []string{"--visibility", "normal, private_scratch, sealed"}},
		{"raw blank session", []string{"store-raw", "x", "--session-id", "   "}, 2, []string{"--session-id is required"}},
		{"bad id", []string{"inspect", "not-a-uuid"}, 2, []string{"invalid UUID", "not-a-uuid"}},
		{"bad secrecy list", []string{"recall-raw", "--secrecy-levels", "public,top"}, 2, []string{"--secrecy-levels", `"top"`}},
		{"bad export format", []string{"export", "--format", "xml"}, 2, []string{"--format", `"xml"`, "want cma"}},
		{"blank text", []string{"store", "  "}, 2, []string{"TEXT is empty"}},
		{"negative limit", []string{"recall", "--limit", "-1"}, 2, []string{`--limit must be a whole number of 0 or more, not "-1"`}},
		{"meta type error", []string{"store", "x", "--meta-json", `{"tags":"adr"}`}, 2, []string{"--meta-json.tags: want a list of strings, got a string"}},
		{"empty secrecy list", []string{"dream-tick", "--secrecy-levels", " , "}, 2, []string{"--secrecy-levels", "at least one of public, sensitive, secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, dir, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout not empty on error: %q", out)
			}
			for _, m := range tt.mentions {
				if !strings.Contains(errOut, m) {
					t.Errorf("stderr %q does not mention %q", errOut, m)
				}
			}
		})
	}
	if s := stats(t, dir); s.TotalRecords != 0 || s.RawJournalRecords != 0 {
		t.Fatalf("bad input wrote records: %+v", s)
	}
}

func TestStoreRawAndRecallRaw(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := run(t, dir, "store-raw", "user asked about rate limits", "--session-id", "chat-1", "--topic-id", "limits", "--json")
	if code != 0 {
		t.Fatalf("store-raw exit %d: %s", code, errOut)
	}
	var resp memory.EncodeStoreRawResponse
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("store-raw output %q: %v", out, err)
	}
	if resp.SessionID != "chat-1" || resp.Visibility != memory.VisibilityNormal || resp.SecrecyLevel != memory.SecrecyPublic {
		t.Fatalf("response %+v", resp)
	}
	run(t, dir, "store-raw", "secret plan", "--session-id", "chat-1", "--secrecy-level", "secret")
	run(t, dir, "store-raw", "other session", "--session-id", "chat-2")

	// The CLI's default is every secrecy level (the spec's "all"), so the
	// secret entry is listed, newest first.
	out, _, code = run(t, dir, "recall-raw", "--session-id", "chat-1", "--json")
	var rr memory.RecallRawQueryResponse
	if err := json.Unmarshal([]byte(out), &rr); err != nil || code != 0 {
		t.Fatalf("recall-raw %q: %v", out, err)
	}
	if len(rr.Records) != 2 || rr.TotalCandidates != 2 || rr.Records[0].SecrecyLevel != memory.SecrecySecret ||
		rr.Records[1].ID != resp.RecordID || *rr.Records[1].TopicID != "limits" {
		t.Fatalf("default recall-raw does not show every level: %+v", rr)
	}
	if text, _ := rr.Records[0].Content.Text(); text != "secret plan" {
		t.Fatalf("secret entry text %q", text)
	}
	out, _, _ = run(t, dir, "recall-raw", "--session-id", "chat-1", "--secrecy-levels", "public,sensitive", "--json")
	if err := json.Unmarshal([]byte(out), &rr); err != nil || len(rr.Records) != 1 || rr.Records[0].ID != resp.RecordID {
		t.Fatalf("recall-raw without secret: %q", out)
	}
	out, _, _ = run(t, dir, "recall-raw", "--secrecy-levels", "secret", "--json")
	if err := json.Unmarshal([]byte(out), &rr); err != nil || len(rr.Records) != 1 {
		t.Fatalf("secret recall: %q", out)
	}
	out, _, _ = run(t, dir, "recall-raw", "rate LIMITS", "--json")
	if err := json.Unmarshal([]byte(out), &rr); err != nil || len(rr.Records) != 1 {
		t.Fatalf("query recall: %q", out)
	}
	out, _, _ = run(t, dir, "recall-raw", "--limit", "0", "--json")
	if err := json.Unmarshal([]byte(out), &rr); err != nil || len(rr.Records) != 0 || rr.TotalCandidates != 3 || !strings.Contains(out, `"records": []`) {
		t.Fatalf("limit 0: %q", out)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	missing := filepath.Join(dir, "missing.toml")
	code := Run(context.Background(), []string{"--config", missing, "stats"}, strings.NewReader(""), &stdout, &stderr, nil)
	if code != 1 || !strings.Contains(stderr.String(), missing) {
		t.Fatalf("missing config: exit %d %q", code, stderr.String())
	}
	stderr.Reset()
	code = Run(context.Background(), []string{"--data-dir", dir, "stats"}, strings.NewReader(""), &stdout, &stderr, []string{"MEMSVC_LOG__LEVEL=loud"})
	if code != 1 || !strings.Contains(stderr.String(), "log.level") || !strings.Contains(stderr.String(), "MEMSVC_LOG__LEVEL") {
		t.Fatalf("bad env: exit %d %q", code, stderr.String())
	}
	// The config file's data_dir is used, and --data-dir beats it.
	cfg := filepath.Join(dir, "memsvc.toml")
	fromFile := filepath.Join(dir, "from-file")
	if err := os.WriteFile(cfg, []byte("data_dir = \""+fromFile+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := Run(context.Background(), []string{"--config", cfg, "store", "x"}, strings.NewReader(""), &stdout, &stderr, nil); code != 0 {
		t.Fatalf("store with config: %d %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(fromFile, "LOCK")); err != nil {
		t.Fatalf("config data_dir not used: %v", err)
	}
	fromFlag := filepath.Join(dir, "from-flag")
	if code := Run(context.Background(), []string{"--config", cfg, "--data-dir", fromFlag, "store", "x"}, strings.NewReader(""), &stdout, &stderr, nil); code != 0 {
		t.Fatalf("store with config and flag: %d %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(fromFlag, "LOCK")); err != nil {
		t.Fatalf("--data-dir did not beat the config file: %v", err)
	}
}

func TestHelpAndVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"--version"}, nil, &stdout, &stderr, nil); code != 0 || stdout.String() != "memsvc "+cli.Version+"\n" {
		t.Fatalf("version: %d %q", code, stdout.String())
	}
	stdout.Reset()
	if code := Run(context.Background(), []string{"store", "--help"}, nil, &stdout, &stderr, nil); code != 0 || !strings.Contains(stderr.String(), "Examples:") {
		t.Fatalf("help: %d %q", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("help wrote to stdout: %q", stdout.String())
	}
}

// TestCountFlagsFit32Bits: a count flag beyond the API's 32 bits is a
// usage error naming the flag and the value, before anything is opened.
func TestCountFlagsFit32Bits(t *testing.T) {
	for _, args := range [][]string{
		{"recall", "--limit", "4294967296"},
		{"recall-raw", "--limit", "4294967296"},
		{"dream-tick", "--max-groups", "4294967296"},
	} {
		dir := filepath.Join(t.TempDir(), "never-created")
		_, errOut, code := run(t, dir, args...)
		want := args[1] + " 4294967296 is too large"
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", args, code, errOut, want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%q: the data directory was created", args)
		}
	}
}
