package redact_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/redact"
)

// FuzzText checks that Text never panics, is idempotent and keeps valid
// UTF-8 valid.
func FuzzText(f *testing.F) {
	for _, tc := range allTextCases() {
		f.Add(tc.in)
	}
	for _, s := range keptCases() {
		f.Add(s)
	}
	data, err := os.ReadFile("testdata/false_positives.txt")
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f.Add(sc.Text())
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := redact.Text(s)
		if twice := redact.Text(once); twice != once {
			t.Fatalf("not idempotent:\n   in: %q\n once: %q\ntwice: %q", s, once, twice)
		}
		if utf8.ValidString(s) && !utf8.ValidString(once) {
			t.Fatalf("Text(%q) = %q is not valid UTF-8", s, once)
		}
	})
}

// FuzzJSON checks that valid JSON gives valid JSON, invalid JSON gives
// ErrInvalidJSON, the result is idempotent, and JSON agrees with Value on
// the decoded document.
func FuzzJSON(f *testing.F) {
	for _, tc := range jsonCases() {
		f.Add([]byte(tc.in))
	}
	for _, tc := range allTextCases() {
		b, _ := json.Marshal(map[string]any{"s": tc.in, tc.in: []any{tc.in, 1}})
		f.Add(b)
	}
	f.Add([]byte(`{"a":`))
	f.Add([]byte(`["--password","x","--token",1]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := redact.JSON(doc)
		if !json.Valid(doc) {
			if err == nil || !errors.Is(err, redact.ErrInvalidJSON) {
				t.Fatalf("JSON(%q) = %q, %v; want ErrInvalidJSON", doc, out, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("JSON(%q): %v", doc, err)
		}
		if !json.Valid(out) {
			t.Fatalf("JSON(%q) = %q is not valid JSON", doc, out)
		}
		again, err := redact.JSON(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n   in: %q\n once: %q\ntwice: %q (%v)", doc, out, again, err)
		}
		in := decode(t, doc)
		if !distinctKeys(in) {
			return // Value and JSON resolve collapsed keys differently
		}
		if got, want := decode(t, out), redact.Value(in); !reflect.DeepEqual(got, want) {
			t.Fatalf("JSON and Value disagree on %q:\n JSON: %#v\nValue: %#v", doc, got, want)
		}
	})
}

func decode(t *testing.T, doc []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", doc, err)
	}
	return v
}

// distinctKeys reports whether no two keys of any object redact to the same
// key.
func distinctKeys(v any) bool {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if !distinctKeys(e) {
				return false
			}
		}
	case map[string]any:
		seen := make(map[string]bool, len(t))
		for k, e := range t {
			rk := redact.Text(k)
			if seen[rk] || !distinctKeys(e) {
				return false
			}
			seen[rk] = true
		}
	}
	return true
}

// TestFuzzRegressions replays the inputs the fuzzers once failed on; they
// also live in testdata/fuzz, this keeps them readable.
func TestFuzzRegressions(t *testing.T) {
	for _, s := range fuzzRegressions() {
		once := redact.Text(s)
		if twice := redact.Text(once); twice != once {
			t.Errorf("not idempotent:\n   in: %q\n once: %q\ntwice: %q", s, once, twice)
		}
	}
}

func fuzzRegressions() []string {
	return []string{
		strings.Repeat("password=", 3) + "(",
		// A truncated block whose body ran into the dashes of the next one.
		"-----BEGIN 000PRIVATE KEY-----000000000000000------BEGIN PRIVATE KEY----------END PRIVATE KEY-----",
		// A short first line that becomes a header line once a token after
		// it is redacted.
		"-----BEGIN RSA PRIVATE KEY-----\nProc:ghp_" + fake(mixed, 36),
		// Found by TestTextIdempotentCombinations (exact inputs):
		// an interpolation "$(" eaten by a redaction inside the quotes;
		")the.passwordCookie = \"<password>token$(<\\\"<https://{x-api-keydXNlcjpwYXNz::",
		// a prose verdict that looked at a word redacted earlier in the pass;
		"REDACTEDREDACTEDpostgres://`;credentials-----: -----auth:secret = password" + "AKIA" + fake(upper, 16) + " password: Bearer ",
		// a URL authority that reached across a value redacted later;
		"*secret=>$\"api_keyhunter22hunter22hooks.slack.com/services/${*$@hostpassword://tokenhttps://é:===--token:=https://}:%" + "ghp_" + fake(mixed, 36) + "u:p@huser:postgres://",
		// a backslash-newline that joined a quoted value to the next line;
		".self.tokenProc-Type: 4,ENCRYPTEDBasic dXNlcjpwYXNzd29yZA==\"password\": \"Zx9Qm2Lk'bearerBasic " + "ghp_" + fake(mixed, 36) + "\\\"\\\"token\\\":\\\"0123456789Authorization: Zx9Qm2LkeyJzdWIiOiIxMjM0NTY3ODkwIn0\\\n" + "sk-" + fake(mixed, 24) + "@hosthunter22dXNlcjpwYXNz=$(",
		// a quoted key that was the redacted value of another key;
		"_token*$({<Set-Cookie: \"password\": \"os.environ${[\thunter22-----BEGIN " + "ghp_" + fake(mixed, 36) + "\\\"token\\\":\\\"\"password\": \"REDACTED--token",
		// a key whose opening quote was inside a value judged as a whole.
		":-----BEGIN RSA PRIVATE KEY-----\"password\": \" = secret${auth?=%+Ab3_Cd5-Ef7gH9iJ1kLAb3_C *,==" + "AKIA" + fake(upper, 16) + "--password\\\"password\": \"required for login/Basic 日本",
	}
}
