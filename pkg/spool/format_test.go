package spool

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string // nil: malformed
		line int      // line of the problem, when malformed
	}{
		{"one record", "{\"a\":1}\n", []string{`{"a":1}`}, 0},
		{"two records", "{\"a\":1}\n{\"b\":[1,2]}\n", []string{`{"a":1}`, `{"b":[1,2]}`}, 0},
		{"blank lines and padding", "\n  {\"a\":1}  \n\t\n{}\r\n", []string{`{"a":1}`, `{}`}, 0},
		{"empty", "", nil, 0},
		{"only blank lines", "\n \n", nil, 0},
		{"no final newline", "{\"a\":1}\n{\"b\":2}", nil, 0},
		{"torn record", "{\"a\":1}\n{\"b\":\n", nil, 2},
		{"array", "[1]\n", nil, 1},
		{"string", "\"x\"\n", nil, 1},
		{"two values on a line", "{} {}\n", nil, 1},
		{"garbage", "{\"a\":1}\n\nhello\n", nil, 3},
		{"invalid UTF-8", "{\"a\":\"\xff\"}\n", nil, 0},
		{"NUL bytes", "\x00\x00\n", nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := Parse([]byte(tc.in))
			if tc.want == nil {
				var me *MalformedError
				if !errors.Is(err, ErrMalformed) || !errors.As(err, &me) {
					t.Fatalf("Parse(%q) = %q, %v; want ErrMalformed", tc.in, recs, err)
				}
				if me.Line != tc.line {
					t.Fatalf("problem reported on line %d, want %d (%v)", me.Line, tc.line, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, string(r))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Parse(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzParse: Parse never panics; what it accepts is a list of JSON
// objects, and encoding them again gives a file that parses to the same
// records.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"{\"a\":1}\n",
		"{\"a\":1}\n\n{\"b\":{\"c\":[1,\"x\\ny\"]}}\n",
		"{\"a\":1}",
		"[1]\n",
		"{\"a\":\"\xff\"}\n",
		"\n\n",
		"{\"record_id\":\"0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f\",\"content\":{\"blocks\":[{\"data\":[104,105]}]}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error does not match ErrMalformed: %v", err)
			}
			return
		}
		if len(recs) == 0 {
			t.Fatal("accepted a file without records")
		}
		for _, r := range recs {
			if !json.Valid(r) || r[0] != '{' {
				t.Fatalf("record is not a JSON object: %q", r)
			}
		}
		enc, err := Encode(recs)
		if err != nil {
			t.Fatalf("cannot encode parsed records: %v", err)
		}
		again, err := Parse(enc)
		if err != nil || len(again) != len(recs) {
			t.Fatalf("re-parse: %d records, %v", len(again), err)
		}
		for i := range recs {
			var a, b bytes.Buffer
			_ = json.Compact(&a, recs[i])
			_ = json.Compact(&b, again[i])
			if a.String() != b.String() {
				t.Fatalf("record %d changed: %q -> %q", i, recs[i], again[i])
			}
			if strings.Contains(string(again[i]), "\n") {
				t.Fatalf("encoded record spans lines: %q", again[i])
			}
		}
	})
}
