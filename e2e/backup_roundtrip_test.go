package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestBackupRoundTrip is the backup promise of issue 20: what a backup
// holds comes back whole. A server gets curated records in every
// persistent store (with embeddings, emotion, metadata, meta-memory and a
// client-made association) and raw entries of every visibility and every
// secrecy level. Then two round trips through the built binaries:
//
//   - memsvc export --include-raw-journal, then memsvc import --strategy
//     replace --yes into a fresh data directory;
//   - memsvc-admin backup (its defaults), then memsvc-admin restore
//     --strategy replace --yes into a second, non-empty server; the same
//     records in a second namespace must come back into it;
//
// and in both every curated record (inspect --json) and every raw entry
// (recall-raw --json with all filters open) must be byte for byte what
// the first server answers.
func TestBackupRoundTrip(t *testing.T) {
	quiet := []string{"MEMSVC_DECAY__BACKGROUND_INTERVAL_SECS=86400", "MEMSVC_DREAM__BACKGROUND_INTERVAL_SECS=86400"}
	src := startServer(t, t.TempDir(), quiet...)
	c, err := client.New(src.url(""), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids := populateEverything(t, c)
	const other = "proj-b"
	inOther := []string{"MEMSVC_NAMESPACE=" + other}
	cb, err := client.New(src.url(""), client.Options{Namespace: other})
	if err != nil {
		t.Fatal(err)
	}
	idsB := populateEverything(t, cb)

	archive := filepath.Join(t.TempDir(), "all.cma")
	if r := runBin(t, time.Minute, nil, "memsvc", "--server-url", src.url(""), "export", "--output", archive, "--include-raw-journal"); r.code != 0 {
		t.Fatalf("export: %+v", r)
	}
	want := snapshot(t, nil, ids, "--server-url", src.url(""))
	wantB := snapshot(t, inOther, idsB, "--server-url", src.url(""))
	if len(want.raw) != 9 {
		t.Fatalf("the source has %d raw entries, want 9", len(want.raw))
	}

	// memsvc export / memsvc import --strategy replace, into a fresh directory.
	fresh := t.TempDir()
	if r := runBin(t, time.Minute, nil, "memsvc", "--data-dir", fresh, "import", archive, "--strategy", "replace", "--yes"); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	want.compare(t, "memsvc import", snapshot(t, nil, ids, "--data-dir", fresh))

	// memsvc-admin backup / restore --strategy replace, into a server
	// that held something else.
	dst := startServer(t, t.TempDir(), quiet...)
	if r := runBin(t, 30*time.Second, nil, "memsvc", "--server-url", dst.url(""), "store", "to be replaced"); r.code != 0 {
		t.Fatalf("store: %+v", r)
	}
	r := runBin(t, time.Minute, nil, "memsvc-admin", "--quiet", "backup", "--server-url", src.url(""), "--dir", filepath.Join(t.TempDir(), "backups"))
	var b struct{ Path string }
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil || r.code != 0 {
		t.Fatalf("backup (%v): %+v", err, r)
	}
	if r := runBin(t, time.Minute, nil, "memsvc-admin", "--quiet", "restore", "--server-url", dst.url(""), b.Path, "--strategy", "replace", "--yes"); r.code != 0 {
		t.Fatalf("restore: %+v", r)
	}
	got := snapshot(t, nil, ids, "--server-url", dst.url(""))
	want.compare(t, "memsvc-admin restore", got)
	wantB.compare(t, "memsvc-admin restore in "+other, snapshot(t, inOther, idsB, "--server-url", dst.url("")))
	if r := runBin(t, 30*time.Second, nil, "memsvc", "--server-url", dst.url(""), "recall", "replaced", "--mode", "perfect"); !strings.HasPrefix(r.stdout, "Found 0 memories") {
		t.Errorf("the replaced server still holds its own record: %+v", r)
	}
	for _, s := range []*server{src, dst} {
		if err := s.stop(syscall.SIGTERM); err != nil {
			t.Fatalf("server exit: %v\n%s", err, s.log())
		}
	}
}

// populateEverything stores a curated record in every persistent store
// and a raw entry of every visibility and secrecy level, and returns the
// curated ids.
func populateEverything(t *testing.T, c *client.Client) []memory.ID {
	t.Helper()
	ctx := t.Context()
	var ids []memory.ID
	for i, st := range memory.PersistentStores {
		content := memory.TextContent(fmt.Sprintf("note %d kept in the %s store", i, st))
		// Orthogonal embeddings: no similarity links appear behind the test's back.
		vec := make([]float32, len(memory.PersistentStores))
		vec[i] = 1
		content.Blocks[0].Embedding = vec
		intent := "check the round trip"
		req := &memory.EncodeStoreRequest{
			Content:  content,
			Store:    &st,
			Emotion:  &memory.EmotionVector{Joy: 0.5, Intensity: 0.4, Valence: 0.3},
			Metadata: memory.JSON(fmt.Sprintf(`{"n":%d}`, i)),
			Meta:     &memory.MetaMemory{Intent: &intent, Tags: []string{"backup"}},
		}
		if len(ids) > 0 {
			req.Associations = []memory.ManualAssociation{{TargetID: ids[0], AssociationType: memory.AssocUserDefined, Weight: 0.7}}
		}
		resp, err := c.EncodeStore(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.RecordID)
	}
	for v := memory.VisibilityNormal; v.Valid(); v++ {
		for s := memory.SecrecyPublic; s.Valid(); s++ {
			topic, turn := "topic-"+v.String(), "turn-"+s.String()
			if _, err := c.EncodeStoreRaw(ctx, &memory.EncodeStoreRawRequest{
				SessionID: "backup-session", TopicID: &topic, TurnID: &turn,
				Source: memory.SourceConversation, Speaker: memory.SpeakerUser, Visibility: v, SecrecyLevel: s,
				Content:  memory.TextContent(fmt.Sprintf("raw entry %s/%s", v, s)),
				Metadata: memory.JSON(`{"k":"v"}`),
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ids
}

var lastDecayTickRE = regexp.MustCompile(`"last_decay_tick": "[^"]*"`)

// state is what a data directory or server answers about every record.
type state struct {
	curated map[memory.ID]string // inspect --json
	raw     []string             // each raw entry's JSON, sorted
}

// snapshot reads every curated record of ids and every raw entry through
// the memsvc binary in the mode the flag picks, with env (the namespace).
func snapshot(t *testing.T, env []string, ids []memory.ID, modeFlag, modeValue string) state {
	t.Helper()
	s := state{curated: map[memory.ID]string{}}
	for _, id := range ids {
		r := runBin(t, 30*time.Second, env, "memsvc", modeFlag, modeValue, "inspect", id.String(), "--json")
		if r.code != 0 {
			t.Fatalf("%s inspect %s: %+v", modeFlag, id, r)
		}
		// fidelity.last_decay_tick is not record data: it is presented as
		// the later of the record's own tick and the answering engine's last
		// decay tick (pkg/engine/decay.go), and a server ticks once at start.
		s.curated[id] = lastDecayTickRE.ReplaceAllString(r.stdout, `"last_decay_tick": "<engine's>"`)
	}
	r := runBin(t, 30*time.Second, env, "memsvc", modeFlag, modeValue, "recall-raw", "--json", "--limit", "1000",
		"--include-private-scratch", "--include-sealed", "--secrecy-levels", "public,sensitive,secret")
	var resp struct{ Records []json.RawMessage }
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil || r.code != 0 {
		t.Fatalf("%s recall-raw (%v): %+v", modeFlag, err, r)
	}
	for _, e := range resp.Records {
		var buf bytes.Buffer
		if err := json.Compact(&buf, e); err != nil {
			t.Fatal(err)
		}
		s.raw = append(s.raw, buf.String())
	}
	slices.Sort(s.raw)
	return s
}

func (want state) compare(t *testing.T, how string, got state) {
	t.Helper()
	for id, w := range want.curated {
		if got.curated[id] != w {
			t.Errorf("%s: record %s differs\nwant %s\ngot  %s", how, id, w, got.curated[id])
		}
	}
	if !slices.Equal(want.raw, got.raw) {
		t.Errorf("%s: raw entries differ\nwant %d: %s\ngot  %d: %s", how, len(want.raw), strings.Join(want.raw, "\n"), len(got.raw), strings.Join(got.raw, "\n"))
	}
}
