package redact_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/redact"
	"memsvc.dev/memsvc/pkg/redact/redacttest"
)

// TestCorpusSizes keeps the corpus as large as the redaction claims need.
func TestCorpusSizes(t *testing.T) {
	if n := len(redacttest.Secrets()); n < 300 {
		t.Errorf("%d secrets in the corpus, want at least 300", n)
	}
	if n := len(redacttest.LookAlikes()); n < 150 {
		t.Errorf("%d look-alikes in the corpus, want at least 150", n)
	}
}

// TestCorpusSecretsDoNotLeak redacts every generated secret in its line
// (Text), in its capture event (JSON) and as a decoded event (Value), and
// fails for every secret a part of which survives.
func TestCorpusSecretsDoNotLeak(t *testing.T) {
	secrets := redacttest.Secrets()
	events := redacttest.SecretEvents()
	leaked := map[string]int{}
	total := 0
	for i, s := range secrets {
		var where []string
		if out := redact.Text(s.Line); redacttest.Leaks(out, s.Value) {
			where = append(where, "Text: "+out)
		}
		out, err := redact.JSON(events[i].Line)
		if err != nil {
			t.Fatalf("JSON(%s): %v", events[i].Line, err)
		}
		if redacttest.Leaks(string(out), s.Value) {
			where = append(where, "JSON: "+string(out))
		}
		var decoded any
		if err := json.Unmarshal(events[i].Line, &decoded); err != nil {
			t.Fatal(err)
		}
		vb, err := json.Marshal(redact.Value(decoded))
		if err != nil {
			t.Fatal(err)
		}
		if redacttest.Leaks(string(vb), s.Value) {
			where = append(where, "Value: "+string(vb))
		}
		if len(where) > 0 {
			leaked[s.Family]++
			total++
			t.Errorf("%s secret %q leaked from %q:\n  %s", s.Family, s.Value, s.Line, strings.Join(where, "\n  "))
		}
	}
	if total > 0 {
		t.Errorf("%d of %d secrets leaked; by family: %s", total, len(secrets), counts(leaked))
	}
}

// TestCorpusLookAlikesUndamaged checks that every look-alike comes out of
// Text, and its capture event out of JSON, byte for byte.
func TestCorpusLookAlikesUndamaged(t *testing.T) {
	looks := redacttest.LookAlikes()
	events := redacttest.LookAlikeEvents()
	damaged := 0
	for i, s := range looks {
		bad := false
		if out := redact.Text(s); out != s {
			bad = true
			t.Errorf("Text damaged a look-alike:\n  in: %q\n got: %q", s, out)
		}
		out, err := redact.JSON(events[i].Line)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, events[i].Line) {
			bad = true
			t.Errorf("JSON damaged a look-alike event:\n  in: %s\n got: %s", events[i].Line, out)
		}
		if bad {
			damaged++
		}
	}
	if damaged > 0 {
		t.Errorf("%d of %d look-alikes damaged", damaged, len(looks))
	}
}

// TestCorpusIdempotent runs Text twice over every corpus line.
func TestCorpusIdempotent(t *testing.T) {
	var lines []string
	for _, s := range redacttest.Secrets() {
		lines = append(lines, s.Line)
	}
	lines = append(lines, redacttest.LookAlikes()...)
	for _, l := range lines {
		once := redact.Text(l)
		if twice := redact.Text(once); twice != once {
			t.Errorf("not idempotent:\n   in: %q\n once: %q\ntwice: %q", l, once, twice)
		}
	}
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, m[k])
	}
	return b.String()
}
