package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Environment of the child process of TestRawIndexSurvivesCrash.
const (
	rawCrashDirEnv     = "MEMSVC_RAW_CRASH_CHILD"
	rawCrashPersistEnv = "MEMSVC_RAW_CRASH_PERSIST"
	rawCrashSeedEnv    = "MEMSVC_RAW_CRASH_SEED"
	// rawCrashCommon is a word every entry of the child carries.
	rawCrashCommon = "rawcrash"
)

// rawCrashSessions are the sessions the child spreads its entries over, so
// the session hash kept with each posting is checked after the crash too.
var rawCrashSessions = []string{"crash-a", "crash-b", "crash-c"}

// rawCrashWord is the word only entry i carries: "kw" and four consonants.
// Without vowels, "s" or "y" no stemming rule applies to it, so it is its
// own single index term (the parent checks that).
func rawCrashWord(i int) string {
	const alphabet = "bcdfghjklmnpqrtvwxz"
	var b [6]byte
	b[0], b[1] = 'k', 'w'
	for k := 5; k >= 2; k-- {
		b[k] = alphabet[i%len(alphabet)]
		i /= len(alphabet)
	}
	return string(b[:])
}

// TestRawIndexSurvivesCrash is TestIndexSurvivesCrash for the raw journal:
// a child process (this test binary re-executed) appends raw entries, one
// at a time and in batches, and is killed with SIGKILL after a random
// number of acknowledgements, while it keeps writing. After a restart,
// every acknowledged entry is found by a raw full-text search for its own
// word, and searches return exactly the entries on disk: none that are
// missing, none that do not exist. Both index placements are covered: in
// the data directory (the postings must have been written with the
// entries) and in memory (rebuilt from the entries at start).
func TestRawIndexSurvivesCrash(t *testing.T) {
	if dir := os.Getenv(rawCrashDirEnv); dir != "" {
		seed, _ := strconv.ParseUint(os.Getenv(rawCrashSeedEnv), 10, 64)
		rawCrashChild(dir, os.Getenv(rawCrashPersistEnv) == "true", seed)
		return
	}
	for _, persist := range []bool{true, false} {
		t.Run(fmt.Sprintf("persist=%v", persist), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 1))
			killAfter := 1 + rng.IntN(300)
			dir := t.TempDir()
			acked := runRawCrashChild(t, dir, persist, seed, killAfter)
			checkRawIndexAfterCrash(t, dir, persist, acked)
		})
	}
}

// rawAck is an entry the child reported as durably stored.
type rawAck struct {
	id      memory.ID
	word    string
	session string
}

// runRawCrashChild starts the child, kills it after killAfter
// acknowledged entries and returns every entry it acknowledged, including
// those it reported between the kill decision and its death.
func runRawCrashChild(t *testing.T, dir string, persist bool, seed uint64, killAfter int) []rawAck {
	t.Helper()
	cmd, sc := startChild(t, 60*time.Second, "TestRawIndexSurvivesCrash",
		rawCrashDirEnv+"="+dir,
		rawCrashPersistEnv+"="+strconv.FormatBool(persist),
		rawCrashSeedEnv+"="+strconv.FormatUint(seed, 10))
	var acks []rawAck
	parse := func(line string) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "ack" {
			return // test framework output
		}
		if len(f) != 4 {
			t.Fatalf("child line %q", line)
		}
		id, err := memory.ParseID(f[1])
		if err != nil {
			t.Fatalf("child line %q: %v", line, err)
		}
		acks = append(acks, rawAck{id: id, word: f[2], session: f[3]})
	}
	for len(acks) < killAfter && sc.Scan() {
		parse(sc.Text())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// What the child printed before it died was acknowledged as well.
	for sc.Scan() {
		parse(sc.Text())
	}
	_ = cmd.Wait()
	if len(acks) < killAfter {
		t.Fatalf("child acknowledged only %d of %d entries", len(acks), killAfter)
	}
	return acks
}

// checkRawIndexAfterCrash reopens dir and compares the raw journal, its
// full-text index and raw searches.
func checkRawIndexAfterCrash(t *testing.T, dir string, persist bool, acked []rawAck) {
	t.Helper()
	terms := map[string]bool{}
	for _, a := range acked {
		got := textindex.Tokenize(a.word)
		if len(got) != 1 || terms[got[0]] {
			t.Fatalf("word %q gives terms %v; the test needs one unique term per entry", a.word, got)
		}
		terms[got[0]] = true
	}

	// The entries on disk, read without the engine.
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[memory.ID]string{} // id → session
	if err := db.ScanRaw(store.DefaultNS, func(rec *memory.RawJournalRecord) error {
		onDisk[rec.ID] = rec.SessionID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, a := range acked {
		if _, ok := onDisk[a.id]; !ok {
			t.Fatalf("acknowledged entry %s (%s) lost", a.id, a.word)
		}
	}
	t.Logf("%d entries acknowledged, %d on disk", len(acked), len(onDisk))
	// No postings are kept with the entries: the index is built from
	// them at start.
	if derived := countKeys(t, db, store.DerivedPrefix(store.DefaultNS)); derived != 0 {
		t.Fatalf("%d index keys in the database after the crash", derived)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	h := &harness{t: t, dir: dir, opts: Options{PersistIndexes: persist}}
	h.open()
	t.Cleanup(h.close)
	ctx := context.Background()
	search := func(query string, session *string) *memory.RecallRawQueryResponse {
		t.Helper()
		req := memory.RecallRawQueryRequest{
			Query: &query, SessionID: session, Limit: uint32(len(onDisk) + 1),
			IncludePrivateScratch: true, IncludeSealed: true,
			SecrecyLevels: []memory.SecrecyLevel{memory.SecrecyPublic, memory.SecrecySensitive, memory.SecrecySecret},
		}
		resp, err := h.e.RecallRaw(ctx, &req)
		if err != nil {
			t.Fatalf("raw query %q: %v", query, err)
		}
		return resp
	}
	for _, a := range acked {
		resp := search(a.word, nil)
		if len(resp.Records) != 1 || resp.Records[0].ID != a.id || resp.TotalCandidates != 1 {
			t.Fatalf("raw query %q: %d records (total %d), want only %s", a.word, len(resp.Records), resp.TotalCandidates, a.id)
		}
	}
	// The common word finds every entry on disk and nothing else, in
	// every session.
	resp := search(rawCrashCommon, nil)
	if int(resp.TotalCandidates) != len(onDisk) || len(resp.Records) != len(onDisk) {
		t.Fatalf("raw query %q: %d records (total %d), want the %d entries", rawCrashCommon, len(resp.Records), resp.TotalCandidates, len(onDisk))
	}
	seen := map[memory.ID]bool{}
	for _, r := range resp.Records {
		if _, ok := onDisk[r.ID]; !ok || seen[r.ID] {
			t.Fatalf("raw query returned %s: unknown or repeated", r.ID)
		}
		seen[r.ID] = true
	}
	for _, s := range rawCrashSessions {
		want := 0
		for _, sess := range onDisk {
			if sess == s {
				want++
			}
		}
		resp := search(rawCrashCommon, &s)
		if int(resp.TotalCandidates) != want || len(resp.Records) != want {
			t.Fatalf("raw query in session %s: %d records (total %d), want %d", s, len(resp.Records), resp.TotalCandidates, want)
		}
		for _, r := range resp.Records {
			if r.SessionID != s {
				t.Fatalf("session %s query returned an entry of %s", s, r.SessionID)
			}
		}
	}
}

// rawCrashChild appends raw entries until it is killed: single entries and
// batches of random size, over several sessions, visibilities and secrecy
// levels. After each durable write it prints one "ack <id> <word> <session>"
// line per entry, in a single write so a kill never splits a line.
func rawCrashChild(dir string, persist bool, seed uint64) {
	e := childEngine(dir, Options{PersistIndexes: persist})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := 0; ; {
		n := 1 + rng.IntN(25)
		reqs := make([]memory.EncodeStoreRawRequest, n)
		for j := range reqs {
			k := i + j
			r := memory.DefaultEncodeStoreRawRequest()
			r.SessionID = rawCrashSessions[k%len(rawCrashSessions)]
			r.Content = memory.TextContent(rawCrashCommon + " entry " + rawCrashWord(k) + " " + strings.Repeat("padding ", k%7))
			switch k % 5 {
			case 1:
				r.Visibility = memory.VisibilityPrivateScratch
			case 2:
				r.Visibility = memory.VisibilitySealed
			}
			if k%7 == 3 {
				r.SecrecyLevel = memory.SecrecySecret
			}
			reqs[j] = r
		}
		var results []memory.EncodeStoreRawResponse
		if n == 1 {
			resp, err := e.EncodeStoreRaw(ctx, &reqs[0])
			if err != nil {
				childFail(err)
			}
			results = []memory.EncodeStoreRawResponse{*resp}
		} else {
			resp, err := e.EncodeBatchRaw(ctx, &memory.EncodeBatchStoreRawRequest{Records: reqs})
			if err != nil {
				childFail(err)
			}
			results = resp.Results
		}
		var b strings.Builder
		for j, res := range results {
			fmt.Fprintf(&b, "ack %s %s %s\n", res.RecordID, rawCrashWord(i+j), reqs[j].SessionID)
		}
		if _, err := os.Stdout.WriteString(b.String()); err != nil {
			childFail(err)
		}
		i += n
	}
}
