package redact_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"testing"

	"memsvc.dev/memsvc/pkg/redact"
)

type jsonCase struct {
	name string
	in   string
	want string
}

func jsonCases() []jsonCase {
	ghp := "ghp_" + fake(mixed, 36)
	return []jsonCase{
		{"secret keys of every type",
			`{"password":"hunter2","token":12345,"apiKey":{"a":[1,2]},"client_secret":["x"],"github_token":"t"}`,
			`{"password":"[REDACTED]","token":"[REDACTED]","apiKey":"[REDACTED]","client_secret":"[REDACTED]","github_token":"[REDACTED]"}`},
		{"values that cannot hold a secret are kept",
			`{"password":null,"token":"","secret":true,"api_key":false,"cookies":[],"credentials":{}}`,
			`{"password":null,"token":"","secret":true,"api_key":false,"cookies":[],"credentials":{}}`},
		{"order and structure",
			`{"z":1,"a":{"password":"x","list":[{"token":"t"},"Bearer abcdef123456789",[]]},"m":[[]],"b":{}}`,
			`{"z":1,"a":{"password":"[REDACTED]","list":[{"token":"[REDACTED]"},"Bearer [REDACTED]",[]]},"m":[[]],"b":{}}`},
		{"white space is kept",
			"{\n  \"user\" : \"bob\",\n  \"password\" :  {\n    \"v\": 1\n  } ,\n  \"n\"\t: [ 1 , 2 ]\n}\n",
			"{\n  \"user\" : \"bob\",\n  \"password\" :  \"[REDACTED]\" ,\n  \"n\"\t: [ 1 , 2 ]\n}\n"},
		{"numbers verbatim",
			`{"password":1.0,"n":[1.0,1e10,-0,12345678901234567890,1E+2,0.1e-7,-12.50]}`,
			`{"password":"[REDACTED]","n":[1.0,1e10,-0,12345678901234567890,1E+2,0.1e-7,-12.50]}`},
		{"string values go through Text",
			`{"cmd":"export GITHUB_TOKEN=` + ghp + `","out":"ok"}`,
			`{"cmd":"export GITHUB_TOKEN=[REDACTED]","out":"ok"}`},
		{"escapes are re-encoded only when changed",
			`{"a":"caf\u00e9 \"q\"","b":"caf\u00e9 password=hunter22 \"q\"\n\u2028<&>"}`,
			`{"a":"caf\u00e9 \"q\"","b":"café password=[REDACTED] \"q\"\n\u2028<&>"}`},
		{"unicode kept",
			`{"名前":"日本語 ✓ 😀","note":"日本語 token=abcd1234 ✓"}`,
			`{"名前":"日本語 ✓ 😀","note":"日本語 token=[REDACTED] ✓"}`},
		{"keys go through Text",
			`{"` + ghp + `":1,"password=hunter22":2}`,
			`{"[REDACTED]":1,"password=[REDACTED]":2}`},
		{"a key that is a private key names a secret",
			`{"-----BEGIN RSA PRIVATE KEY-----\n` + fake(mixed, 64) + `":7}`,
			`{"[REDACTED PRIVATE KEY]":"[REDACTED]"}`},
		{"llm token counts are not secrets",
			`{"max_tokens":1024,"usage":{"input_tokens":3,"output_tokens":4},"eos_token":"</s>","tokens":["a","b"]}`,
			`{"max_tokens":1024,"usage":{"input_tokens":3,"output_tokens":4},"eos_token":"</s>","tokens":["a","b"]}`},
		{"headers object",
			`{"headers":{"Authorization":"Bearer abc","Cookie":"a=b","X-Api-Key":"k","Accept":"*/*"}}`,
			`{"headers":{"Authorization":"[REDACTED]","Cookie":"[REDACTED]","X-Api-Key":"[REDACTED]","Accept":"*/*"}}`},
		{"encoded json in a string",
			`{"body":"{\"password\": \"hunter2\", \"n\": 1}"}`,
			`{"body":"{\"password\": \"[REDACTED]\", \"n\": 1}"}`},
		{"argv flag values",
			`{"argv":["mysql","--password","hunter2","-u","root","--token","","--api-key","--verbose","--password=x1234567"]}`,
			`{"argv":["mysql","--password","[REDACTED]","-u","root","--token","","--api-key","--verbose","--password=[REDACTED]"]}`},
		{"duplicate keys kept", `{"a":1,"a":2,"token":"x","token":null}`, `{"a":1,"a":2,"token":"[REDACTED]","token":null}`},
		{"deep nesting", `[[[[{"k":[[{"secret":[[1]]}]]}]]]]`, `[[[[{"k":[[{"secret":"[REDACTED]"}]]}]]]]`},
		{"top-level string", `"Authorization: Bearer 0123456789abcdef"`, `"Authorization: Bearer [REDACTED]"`},
		{"top-level number", ` 12345678901234567890 `, ` 12345678901234567890 `},
		{"top-level null", `null`, `null`},
	}
}

func TestJSON(t *testing.T) {
	for _, tc := range jsonCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, err := redact.JSON([]byte(tc.in))
			if err != nil {
				t.Fatalf("JSON(%s): %v", tc.in, err)
			}
			if string(got) != tc.want {
				t.Fatalf("JSON(%s)\n got: %s\nwant: %s", tc.in, got, tc.want)
			}
			if !json.Valid(got) {
				t.Fatalf("output is not valid JSON: %s", got)
			}
			again, err := redact.JSON(got)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("not idempotent: JSON(%s) = %s, %v", got, again, err)
			}
		})
	}
}

func TestJSONInvalid(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `}`, `{"a":}`, `[1,]`, `{"a":1}{}`, `{"a":1} x`, `nul`, `"\x"`, `{a:1}`,
		`[1 2]`, `{"a" 1}`, `'x'`, `01`, "\"\x01\"",
	} {
		out, err := redact.JSON([]byte(in))
		if err == nil {
			t.Errorf("JSON(%q) = %q, want an error", in, out)
			continue
		}
		if !errors.Is(err, redact.ErrInvalidJSON) {
			t.Errorf("JSON(%q) error %v does not wrap ErrInvalidJSON", in, err)
		}
	}
}

// TestJSONFalsePositiveCorpus checks that documents without secrets come
// back byte for byte.
func TestJSONFalsePositiveCorpus(t *testing.T) {
	data, err := os.ReadFile("testdata/false_positives.jsons")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	n := 0
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("document %d: %v", n+1, err)
		}
		n++
		got, err := redact.JSON(raw)
		if err != nil {
			t.Fatalf("document %d: %v", n, err)
		}
		if !bytes.Equal(got, raw) {
			t.Errorf("document %d changed:\n  in: %s\n got: %s", n, raw, got)
		}
	}
	if n < 15 {
		t.Errorf("corpus has %d documents, want at least 15", n)
	}
}

func TestValue(t *testing.T) {
	in := map[string]any{
		"password": "hunter2",
		"token":    json.Number("12345"),
		"empty":    nil,
		"secret":   nil,
		"note":     "token=abcd1234",
		"list":     []any{"Bearer abcdef123456789", 1.5, true, map[string]any{"api_key": []any{"x"}}},
		"headers":  map[string]string{"Authorization": "Bearer x", "Accept": "*/*"},
		"args":     []string{"--password", "hunter22", "--password hunter22"},
		"raw":      json.RawMessage(`{"client_secret":"s","n":1.0}`),
		"bad":      json.RawMessage(`{`),
		"n":        3,
	}
	want := map[string]any{
		"password": redact.Marker,
		"token":    redact.Marker,
		"empty":    nil,
		"secret":   nil,
		"note":     "token=[REDACTED]",
		"list":     []any{"Bearer [REDACTED]", 1.5, true, map[string]any{"api_key": redact.Marker}},
		"headers":  map[string]string{"Authorization": redact.Marker, "Accept": "*/*"},
		"args":     []string{"--password", "[REDACTED]", "--password [REDACTED]"},
		"raw":      json.RawMessage(`{"client_secret":"[REDACTED]","n":1.0}`),
		"bad":      json.RawMessage(`"[REDACTED]"`),
		"n":        3,
	}
	got := redact.Value(in)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Value:\n got: %#v\nwant: %#v", got, want)
	}
	if in["password"] != "hunter2" || in["list"].([]any)[0] != "Bearer abcdef123456789" {
		t.Fatal("Value modified its argument")
	}
	if again := redact.Value(got); !reflect.DeepEqual(again, got) {
		t.Fatalf("Value is not idempotent: %#v", again)
	}
}

func TestValueKeyCollision(t *testing.T) {
	ghp := "ghp_" + fake(mixed, 36)
	gho := "gho_" + fake(mixed, 36)
	in := map[string]any{ghp: "sorts last", gho: "sorts first"}
	for range 20 {
		got := redact.Value(in).(map[string]any)
		if len(got) != 1 || got[redact.Marker] != "sorts last" {
			t.Fatalf("Value(%v) = %v, want the key that sorts last to win", in, got)
		}
	}
}
