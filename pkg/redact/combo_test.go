package redact_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/redact"
)

// fragments are the pieces the rules look at. Gluing them at random finds
// inputs where one rule's marker changes what another rule sees, which a
// byte-level fuzzer reaches only slowly.
func fragments() []string {
	return []string{
		"password", "token", "api_key", "Authorization", "Cookie", "auth", "credentials", "secret", "x-api-key",
		"PWD", "max_tokens", "--password", "--token", "<password>", "</password>",
		"=", ":", ": ", " = ", ":=", "=>", "?=", "==", "::", "&", ";", ",", " ", "\n", "\t", "\r\n",
		`"`, "'", "`", `\"`, `\`, "\\n", "(", ")", "[", "]", "{", "}", "<", ">", "$", "${", "$(", "%", "*", "!", "@", "#", "/", ".", "-", "_", "~", "+",
		"Bearer ", "bearer", "Basic ", "dXNlcjpwYXNz", "abc123def456", "hunter22", "Zx9Qm2Lk", "word", "the", "x",
		"ghp_" + fake(mixed, 36), "AKIA" + fake(upper, 16), "sk-" + fake(mixed, 24), "xoxb-1234567890-abc",
		"eyJhbGciOiJIUzI1NiJ9", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", "hooks.slack.com/services/", fake(b64url, 24),
		"https://", "postgres://", "u:p@h", "user:", "@host", "://",
		"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "-----BEGIN ", "-----", "Proc-Type: 4,ENCRYPTED",
		fake(mixed+"+/", 64), "[REDACTED]", "[REDACTED PRIVATE KEY]", "REDACTED", "é", "日本",
		`"password": "`, `\"token\":\"`, `"token": 12345678`, "Authorization: ", "Cookie: a=b; c=d", "Set-Cookie: ",
		"--api-key ", "Basic dXNlcjpwYXNzd29yZA==", "Authorization: Bearer abc123def456", "password=hunter2 ",
		"{{ x }}", "%s", "$TOKEN", "$HOME/.x/y", "os.environ", "self.token", "accessToken", "null", "true",
		"required for login", "access token: expired", "PWD=/home/x", "0123456789", "::1",
	}
}

// TestTextIdempotentCombinations glues fragments together at random (with
// fixed seeds) and checks that Text is idempotent and keeps UTF-8 valid on
// every result. The inputs it once failed on are in fuzzRegressions.
func TestTextIdempotentCombinations(t *testing.T) {
	frags := fragments()
	perRun := 50000
	if testing.Short() {
		perRun = 5000
	}
	var b strings.Builder
	failures := 0
	for run, maxFrag := range []int{6, 12, 24, 40} {
		rng := rand.New(rand.NewPCG(uint64(run+1), 2))
		for range perRun {
			b.Reset()
			for range 2 + rng.IntN(maxFrag) {
				b.WriteString(frags[rng.IntN(len(frags))])
			}
			s := b.String()
			once := redact.Text(s)
			if twice := redact.Text(once); twice != once {
				t.Errorf("not idempotent:\n   in: %q\n once: %q\ntwice: %q", s, once, twice)
				if failures++; failures == 10 {
					t.FailNow()
				}
			}
			if !utf8.ValidString(once) {
				t.Fatalf("Text(%q) = %q is not valid UTF-8", s, once)
			}
		}
	}
}

// TestJSONCombinations builds random documents whose keys and strings are
// glued fragments and checks that JSON keeps them valid, is idempotent and
// agrees with Value.
func TestJSONCombinations(t *testing.T) {
	frags := fragments()
	rng := rand.New(rand.NewPCG(7, 8))
	glue := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(frags[rng.IntN(len(frags))])
		}
		return b.String()
	}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := rng.IntN(8); {
		case depth > 3 || n < 3:
			return glue()
		case n == 3:
			return json.Number("12345678901234567890")
		case n == 4:
			return nil
		case n == 5:
			a := make([]any, rng.IntN(4))
			for i := range a {
				a[i] = gen(depth + 1)
			}
			return a
		default:
			m := make(map[string]any)
			for range rng.IntN(4) {
				m[glue()] = gen(depth + 1)
			}
			return m
		}
	}
	runs := 20000
	if testing.Short() {
		runs = 2000
	}
	for range runs {
		doc, err := json.Marshal(gen(0))
		if err != nil {
			t.Fatal(err)
		}
		out, err := redact.JSON(doc)
		if err != nil || !json.Valid(out) {
			t.Fatalf("JSON(%s) = %s, %v", doc, out, err)
		}
		if again, err := redact.JSON(out); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n   in: %s\n once: %s\ntwice: %s", doc, out, again)
		}
		in := decode(t, doc)
		if !distinctKeys(in) {
			continue
		}
		if got, want := decode(t, out), redact.Value(in); !reflect.DeepEqual(got, want) {
			t.Fatalf("JSON and Value disagree on %s:\n JSON: %#v\nValue: %#v", doc, got, want)
		}
	}
}
