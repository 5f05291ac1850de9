package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// TestHashVector pins the bytes of two entries. The canonical strings are
// shown so that a reader can recompute each hash, for example with
//
//	printf '%s' '<canonical>' | sha256sum
//
// The first vector is the one in the storage reference (§4.3), computed
// there independently.
func TestHashVector(t *testing.T) {
	const (
		canonical1 = `{"version":1,"sequence":1,"timestamp":"2026-04-28T03:14:15.123456789Z","operation":"encode.store","record_ids":["0190f5d2-8c4e-7a1b-9c3d-2e4f6a8b0c1d"],"store_types":["episodic"],"summary":{"associations_created":0,"record_id":"0190f5d2-8c4e-7a1b-9c3d-2e4f6a8b0c1d","store":"episodic"},"prev_hash":"0000000000000000000000000000000000000000000000000000000000000000"}`
		hash1      = "4b908902a23e911ab864d933c8e56cfbedd1661f7e813d935773c77c24123699"

		// Escapes, a trimmed fraction, an empty list, nested and unsorted
		// summary keys, numbers kept as written.
		canonical2 = `{"version":1,"sequence":2,"timestamp":"2026-04-28T03:14:15.12Z","operation":"lifecycle.export","record_ids":[],"store_types":["episodic","semantic"],"summary":{"a":"<tag> & \"q\" / \u2028 é\t","m":{"b":true,"y":null},"z":[1,2.50,-0,1e3]},"prev_hash":"4b908902a23e911ab864d933c8e56cfbedd1661f7e813d935773c77c24123699"}`
		hash2      = "e1898040e38b9561ad30863b5cc9eee98320ea5526a81f810db91fbca631b664"
	)
	events := []Event{{
		Sequence:   1,
		Time:       time.Date(2026, 4, 28, 12, 14, 15, 123456789, time.FixedZone("JST", 9*3600)),
		Operation:  OpEncodeStore,
		RecordIDs:  []string{"0190f5d2-8c4e-7a1b-9c3d-2e4f6a8b0c1d"},
		StoreTypes: []string{"episodic"},
		Summary:    []byte(`{"store":"episodic","record_id":"0190f5d2-8c4e-7a1b-9c3d-2e4f6a8b0c1d","associations_created":0}`),
	}, {
		Sequence:   2,
		Time:       time.Date(2026, 4, 28, 3, 14, 15, 120000000, time.UTC),
		Operation:  OpExport,
		StoreTypes: []string{"episodic", "semantic"},
		Summary:    []byte("{\"z\": [1, 2.50, -0, 1e3], \"m\": {\"y\": null, \"b\": true}, \"a\": \"<tag> & \\\"q\\\" \\/ \u2028 \\u00e9\\t\"}"),
	}}
	for i, c := range []struct{ canonical, hash string }{{canonical1, hash1}, {canonical2, hash2}} {
		sum := sha256.Sum256([]byte(c.canonical))
		if got := hex.EncodeToString(sum[:]); got != c.hash {
			t.Fatalf("vector %d: sha256(canonical) = %s, pinned %s", i+1, got, c.hash)
		}
	}
	want := canonical1[:len(canonical1)-1] + `,"entry_hash":"` + hash1 + "\"}\n" +
		canonical2[:len(canonical2)-1] + `,"entry_hash":"` + hash2 + "\"}\n"

	got, head := render(t, GenesisHash, events...)
	if string(got) != want {
		t.Fatalf("rendered\n%s\nwant\n%s", got, want)
	}
	if head != hash2 {
		t.Fatalf("head = %s, want %s", head, hash2)
	}

	// The writer produces the same bytes.
	path := logPath(t)
	l := openT(t, path, Options{})
	appendT(t, l, events...)
	if b := readFile(t, path); string(b) != want {
		t.Fatalf("file\n%s\nwant\n%s", b, want)
	}
	rep, err := VerifyFile(path)
	if err != nil || rep.Entries != 2 || rep.HeadHash != hash2 {
		t.Fatalf("VerifyFile = %+v, %v", rep, err)
	}
}

// TestStringEscaping pins every string rule of the package comment.
func TestStringEscaping(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`plain`, `"plain"`},
		{`"`, `"\""`},
		{`\`, `"\\"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x01\x0b\x1f", `"\u0000\u0001\u000b\u001f"`},
		{"\x7f", "\"\x7f\""},
		{"/<>&", `"/<>&"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"é日本😀", `"é日本😀"`},
		{"\ufffd", "\"\ufffd\""},
		{"", `""`},
	} {
		got, err := newEncoder().appendString(nil, c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("string %q = %s, %v; want %s", c.in, got, err, c.want)
		}
		// Keys and values inside a summary follow the same rules.
		obj := `{` + c.want + `:` + c.want + `}`
		got, err = newEncoder().appendSummary(nil, []byte(obj))
		if err != nil || string(got) != obj {
			t.Errorf("summary %s = %s, %v", obj, got, err)
		}
	}
	for _, bad := range []string{"\xff", "a\xc3", "\xed\xa0\x80"} {
		if _, err := newEncoder().appendString(nil, bad); err == nil {
			t.Errorf("string %q: no error for invalid UTF-8", bad)
		}
	}
}

func TestSummaryCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", `{}`},
		{" \n\t", `{}`},
		{"null", `{}`},
		{" null ", `{}`},
		{"{}", `{}`},
		{` { "b" : 1 , "a" : [ 1 , 2 ] } `, `{"a":[1,2],"b":1}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`{"n":1.50,"e":1E3,"z":-0,"big":123456789012345678901234567890}`, `{"big":123456789012345678901234567890,"e":1E3,"n":1.50,"z":-0}`},
		{`{"o":{"y":1,"x":{"d":1,"c":[{"f":1,"e":2}]}}}`, `{"o":{"x":{"c":[{"e":2,"f":1}],"d":1},"y":1}}`},
		{`{"B":1,"a":2,"_":3,"é":4}`, `{"B":1,"_":3,"a":2,"é":4}`},
		{`{"\u0041":"\u003c\/"}`, `{"A":"</"}`},
	} {
		got, err := newEncoder().appendSummary(nil, []byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("summary %q = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `1`, `true`, `{`, `{}{}`, `{} x`, `{"a":}`, "{\"a\":\"\xff\"}", "\u00a0{}"} {
		if got, err := newEncoder().appendSummary(nil, []byte(bad)); err == nil {
			t.Errorf("summary %q = %s, want an error", bad, got)
		}
	}
}

func TestTimestamps(t *testing.T) {
	for _, c := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "2026-01-02T03:04:05Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 100, time.UTC), "2026-01-02T03:04:05.0000001Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 500000000, time.FixedZone("", -7*3600)), "2026-01-02T10:04:05.5Z"},
		{time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), "0001-01-01T00:00:00.000000001Z"},
		{time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), "9999-12-31T23:59:59.999999999Z"},
	} {
		got, err := formatTime(c.in)
		if err != nil || got != c.want {
			t.Errorf("formatTime(%v) = %q, %v; want %q", c.in, got, err, c.want)
		}
		// And the verifier accepts what the writer wrote.
		ev := testEvent(1)
		ev.Time = c.in
		b, _ := render(t, GenesisHash, ev)
		if _, err := Verify(strings.NewReader(string(b))); err != nil {
			t.Errorf("verify %s: %v", got, err)
		}
	}
	for _, bad := range []time.Time{{}, time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if got, err := formatTime(bad); err == nil {
			t.Errorf("formatTime(%v) = %q, want an error", bad, got)
		}
	}
}
