package admincmd

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/memory"
)

// sessionMarker is record data that no command may print.
const sessionMarker = "session-zanzibar"

const fixturePass = "correct horse battery staple"

func at(h int) time.Time { return t0.Add(-time.Duration(h) * time.Hour) }

func curatedFixture(i int, st memory.StoreType, created time.Time) *memory.MemoryRecord {
	return &memory.MemoryRecord{
		ID:             memory.MustParseID(fmt.Sprintf("0190f5d2-8c4e-7a1b-9c3d-%012x", i)),
		Store:          st,
		CreatedAt:      created,
		UpdatedAt:      created,
		LastAccessedAt: created,
		Content:        memory.TextContent(fmt.Sprintf("private memory %d", i)),
		Fidelity:       memory.FidelityState{Score: 1, DecayRate: 0.5, EmotionalAnchor: 1, Stability: 1, LastDecayTick: created},
		Metadata:       memory.JSON(`{"marker":"` + sessionMarker + `"}`),
		Version:        1,
		Meta:           memory.LegacyMeta(),
	}
}

func rawFixture(i int, v memory.Visibility, s memory.SecrecyLevel, created time.Time) *memory.RawJournalRecord {
	return &memory.RawJournalRecord{
		ID:           memory.MustParseID(fmt.Sprintf("0190f5d2-8c4e-7a1b-9c3d-%012x", 100+i)),
		SessionID:    sessionMarker,
		Source:       memory.SourceConversation,
		Speaker:      memory.SpeakerUser,
		Visibility:   v,
		SecrecyLevel: s,
		CreatedAt:    created,
		UpdatedAt:    created,
		Content:      memory.TextContent(fmt.Sprintf("raw words %d", i)),
		Metadata:     memory.JSON(`{}`),
		Meta:         memory.LegacyMeta(),
	}
}

// fixtureArchive returns a version 2.0 archive of three curated records
// (two episodic, one semantic) and two raw ones (normal/public and
// sealed/secret). Its lines: 1 header, 2-4 curated, 5-6 raw, 7 footer.
// With pass it is encrypted in 1 KiB chunks with a cheap KDF.
func fixtureArchive(t *testing.T, pass string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var wo archive.WriterOptions
	if pass != "" {
		wo.Encryption = &archive.EncryptOptions{Passphrase: []byte(pass), KDF: archive.KDFParams{MemoryKiB: 64, Iterations: 1, Parallelism: 1}, ChunkSize: 1024}
	}
	w, err := archive.NewWriter(&buf, archive.Header{Version: archive.Version2, Timestamp: t0, Curated: 3, Raw: 2}, wo)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range []*memory.MemoryRecord{
		curatedFixture(1, memory.StoreEpisodic, at(30)),
		curatedFixture(2, memory.StoreEpisodic, at(20)),
		curatedFixture(3, memory.StoreSemantic, at(40)),
	} {
		if err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	for _, rec := range []*memory.RawJournalRecord{
		rawFixture(1, memory.VisibilityNormal, memory.SecrecyPublic, at(5)),
		rawFixture(2, memory.VisibilitySealed, memory.SecrecySecret, at(3)),
	} {
		if err := w.WriteRaw(rec); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lineEnd returns the offset just past line n (1-based).
func lineEnd(t *testing.T, data []byte, n int) int {
	t.Helper()
	off := 0
	for range n {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			t.Fatalf("fewer than %d lines", n)
		}
		off += i + 1
	}
	return off
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

var checksumRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestArchiveVerifyGood(t *testing.T) {
	dir := t.TempDir()
	plain := fixtureArchive(t, "")
	enc := fixtureArchive(t, fixturePass)
	for _, tc := range []struct {
		name   string
		data   []byte
		stdin  string
		args   []string
		format string
	}{
		{"plaintext", plain, "", nil, "plaintext"},
		{"plaintext, key given anyway", plain, "", []string{"--decryption-key", "unused"}, "plaintext"},
		{"encrypted, key on stdin", enc, fixturePass + "\n", []string{"--decryption-key-stdin"}, "encrypted"},
		{"encrypted, key as flag", enc, "", []string{"--decryption-key", fixturePass}, "encrypted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".cma", tc.data)
			r := invocation{stdin: tc.stdin}.run(t, append([]string{"archive", "verify", path}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
			}
			m := decode(t, r)
			if m["path"] != path || m["format"] != tc.format || m["version"] != "2.0" || m["timestamp"] != "2026-11-01T02:00:00Z" || m["ok"] != true {
				t.Errorf("report %v", m)
			}
			if num(t, m, "records") != 5 || num(t, m, "curated_records") != 3 || num(t, m, "raw_records") != 2 || num(t, m, "size_bytes") != len(tc.data) {
				t.Errorf("counts %v", m)
			}
			byStore, _ := m["curated_by_store"].(map[string]any)
			if fmt.Sprint(byStore) != "map[emotional:0 episodic:2 procedural:0 semantic:1 working:0]" {
				t.Errorf("curated_by_store %v", byStore)
			}
			if s, _ := m["checksum"].(string); !checksumRE.MatchString(s) {
				t.Errorf("checksum %v", m["checksum"])
			}
			if strings.Contains(r.stdout+r.stderr, sessionMarker) {
				t.Error("record data printed")
			}
		})
	}
}

// TestArchiveBroken: every kind of damage is reported with its kind, the
// line it is on and a message that says what is wrong, and exit code 1,
// by verify and by inspect alike.
func TestArchiveBroken(t *testing.T) {
	dir := t.TempDir()
	plain := fixtureArchive(t, "")
	enc := fixtureArchive(t, fixturePass)
	edit := func(data []byte, f func([]byte) []byte) []byte { return f(bytes.Clone(data)) }
	for _, tc := range []struct {
		name    string
		data    []byte
		key     string
		problem string
		line    int
		msg     string
	}{
		{"truncated at a line end", plain[:lineEnd(t, plain, 4)], "", "truncated", 5, "input ends after 3 of 5 entries"},
		{"truncated inside a line", plain[:lineEnd(t, plain, 2)+40], "", "truncated", 3, "entry line is not terminated"},
		{"footer missing", plain[:lineEnd(t, plain, 6)], "", "truncated", 7, "missing footer"},
		{"flipped byte in a value", edit(plain, func(b []byte) []byte {
			i := bytes.Index(b, []byte(sessionMarker))
			b[i] ^= 0x01
			return b
		}), "", "checksum", 7, "checksum mismatch"},
		{"flipped byte in the syntax", edit(plain, func(b []byte) []byte {
			b[lineEnd(t, b, 2)] = '['
			return b
		}), "", "corrupt", 3, "invalid entry"},
		{"wrong checksum", edit(plain, func(b []byte) []byte {
			return regexp.MustCompile(`"checksum":"[0-9a-f]{64}"`).ReplaceAll(b, []byte(`"checksum":"`+strings.Repeat("ab", 32)+`"`))
		}), "", "checksum", 7, "footer says abab"},
		{"header count too high", edit(plain, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"record_count":5,"curated_record_count":3`), []byte(`"record_count":6,"curated_record_count":4`), 1)
		}), "", "count_mismatch", 7, "declares 6 entries"},
		{"unknown version", edit(plain, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"version":"2.0"`), []byte(`"version":"9.0"`), 1)
		}), "", "unsupported", 1, `archive version "9.0"`},
		{"not an archive", []byte("hello, world\nthis is a text file\n"), "", "not_archive", 0, "not a CMA archive"},
		{"empty file", nil, "", "not_archive", 0, "empty input"},
		{"encrypted, wrong passphrase", enc, "wrong horse", "wrong_key", 0, "wrong passphrase"},
		{"encrypted, flipped byte", edit(enc, func(b []byte) []byte {
			b[71+1040+5] ^= 0x80 // inside chunk 1
			return b
		}), fixturePass, "corrupt", 0, "chunk 1 (offset 1111): authentication failed"},
		{"encrypted, cut at a chunk boundary", enc[:71+1040], fixturePass, "truncated", 0, "input ends after chunk 0"},
		{"encrypted, damaged magic", edit(enc, func(b []byte) []byte {
			b[3] = 'X'
			return b
		}), fixturePass, "corrupt", 0, "damaged envelope magic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".cma", tc.data)
			for _, cmd := range []string{"verify", "inspect"} {
				args := []string{"archive", cmd, path}
				if tc.key != "" {
					args = append(args, "--decryption-key-stdin")
				}
				r := invocation{stdin: tc.key + "\n"}.run(t, args...)
				if r.code != 1 {
					t.Fatalf("%s: exit %d, want 1:\n%s%s", cmd, r.code, r.stdout, r.stderr)
				}
				m := decode(t, r)
				line := 0
				if m["line"] != nil {
					line = num(t, m, "line")
				}
				if m["ok"] != false || m["path"] != path || m["problem"] != tc.problem || line != tc.line {
					t.Errorf("%s: report %v, want problem %s on line %d", cmd, m, tc.problem, tc.line)
				}
				wantLine := ""
				if tc.line > 0 {
					wantLine = fmt.Sprintf("line %d: ", tc.line)
				}
				if !strings.Contains(r.stderr, "Error: archive "+path+": "+wantLine) || !strings.Contains(r.stderr, tc.msg) {
					t.Errorf("%s: stderr %q, want %q and %q", cmd, r.stderr, wantLine, tc.msg)
				}
				if e, _ := m["error"].(string); !strings.Contains(e, tc.msg) {
					t.Errorf("%s: error field %q, want %q", cmd, e, tc.msg)
				}
			}
		})
	}
}

func TestArchiveEncryptedWithoutKey(t *testing.T) {
	enc := fixtureArchive(t, fixturePass)
	path := writeFile(t, t.TempDir(), "secret.cma", enc)

	r := run(t, "archive", "verify", path)
	if r.code != 1 || !strings.Contains(r.stderr, "passphrase required") || !strings.Contains(r.stderr, "--decryption-key-stdin") {
		t.Fatalf("verify without key: exit %d\n%s", r.code, r.stderr)
	}
	if m := decode(t, r); m["problem"] != "need_key" || m["format"] != "encrypted" {
		t.Errorf("verify without key: %v", m)
	}

	r = run(t, "archive", "inspect", path)
	if r.code != 0 {
		t.Fatalf("inspect without key: exit %d\n%s", r.code, r.stderr)
	}
	m := decode(t, r)
	if m["format"] != "encrypted" || m["encrypted"] != true || m["verified"] != false || num(t, m, "size_bytes") != len(enc) ||
		m["header"] != nil || !strings.Contains(fmt.Sprint(m["note"]), "--decryption-key-stdin") {
		t.Errorf("inspect without key: %v", m)
	}
}

func TestArchiveInspect(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		pass      string
		format    string
		encrypted bool
	}{
		{"plaintext", "", "plaintext", false},
		{"encrypted", fixturePass, "encrypted", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := fixtureArchive(t, tc.pass)
			path := writeFile(t, dir, tc.name+".cma", data)
			args := []string{"archive", "inspect", path}
			if tc.pass != "" {
				args = append(args, "--decryption-key-stdin")
			}
			r := invocation{stdin: tc.pass + "\n"}.run(t, args...)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s", r.code, r.stderr)
			}
			m := decode(t, r)
			if m["format"] != tc.format || m["encrypted"] != tc.encrypted || m["verified"] != true || num(t, m, "size_bytes") != len(data) {
				t.Errorf("report %v", m)
			}
			want := map[string]string{
				"header":  "map[curated_record_count:3 raw_record_count:2 record_count:5 timestamp:2026-11-01T02:00:00Z version:2.0]",
				"curated": "map[by_store:map[emotional:0 episodic:2 procedural:0 semantic:1 working:0] count:3 newest_created_at:2026-10-31T06:00:00Z oldest_created_at:2026-10-30T10:00:00Z]",
				"raw":     "map[by_secrecy:map[public:1 secret:1 sensitive:0] by_visibility:map[normal:1 private_scratch:0 sealed:1] count:2 newest_created_at:2026-10-31T23:00:00Z oldest_created_at:2026-10-31T21:00:00Z]",
			}
			for k, v := range want {
				if got := fmt.Sprint(m[k]); got != v {
					t.Errorf("%s:\n got %s\nwant %s", k, got, v)
				}
			}
			if strings.Contains(r.stdout+r.stderr, sessionMarker) || strings.Contains(r.stdout, "private memory") {
				t.Error("record data printed")
			}
		})
	}
}

func TestArchiveMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.cma")
	r := run(t, "archive", "verify", path)
	if r.code != 1 || !strings.Contains(r.stderr, "no such file") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if m := decode(t, r); m["problem"] != "io" {
		t.Errorf("report %v", m)
	}
	r = run(t, "archive", "verify", filepath.Dir(path))
	if r.code != 1 || !strings.Contains(r.stderr, "not a regular file") {
		t.Fatalf("directory: exit %d\n%s", r.code, r.stderr)
	}
}

// TestArchiveProgress: reading an archive on a terminal draws a bar with
// the share of the file read, on stderr, never on stdout; without a
// terminal or with --quiet nothing is drawn.
func TestArchiveProgress(t *testing.T) {
	path := writeFile(t, t.TempDir(), "a.cma", fixtureArchive(t, ""))
	c := &clock{t: t0, step: time.Hour}
	r := invocation{clock: c, terminal: true}.run(t, "archive", "verify", path)
	if r.code != 0 || !regexp.MustCompile(`\rverify \[=+\] 100% [0-9.]+ (B|KiB)/[0-9.]+ (B|KiB) `).MatchString(r.stderr) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	decode(t, r)
	for _, in := range []invocation{{clock: c}, {clock: c, terminal: true}} {
		args := []string{"archive", "verify", path}
		if in.terminal {
			args = append([]string{"--quiet"}, args...)
		}
		if r := in.run(t, args...); r.code != 0 || r.stderr != "" {
			t.Fatalf("terminal=%v %q: exit %d, stderr %q", in.terminal, args, r.code, r.stderr)
		}
	}
}

// TestPassphraseFromStdin: only the line ending is removed, and an empty
// passphrase is refused.
func TestPassphraseFromStdin(t *testing.T) {
	path := writeFile(t, t.TempDir(), "secret.cma", fixtureArchive(t, fixturePass))
	for _, tc := range []struct {
		stdin string
		code  int
		msg   string
	}{
		{fixturePass + "\r\n", 0, ""},
		{fixturePass, 0, ""},
		{fixturePass + " \n", 1, "wrong passphrase"},
		{"\n", 1, "passphrase read from stdin is empty"},
		{"", 1, "passphrase read from stdin is empty"},
	} {
		r := invocation{stdin: tc.stdin}.run(t, "archive", "verify", path, "--decryption-key-stdin")
		if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("stdin %q: exit %d, stderr %q; want %d and %q", tc.stdin, r.code, r.stderr, tc.code, tc.msg)
		}
	}
}
