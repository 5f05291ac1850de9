package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"memsvc.dev/memsvc/internal/jsonscan"
)

// randomAnswer is a recall answer of random memories (jsonCorpus) as the
// server writes it, with a trace and query metadata or without.
func randomAnswer(t *testing.T, c jsonCorpus) []byte {
	t.Helper()
	var r RecallQueryResponse
	if c.pick(5) > 0 {
		r.Memories = []RecalledMemory{}
	}
	for range c.pick(4) {
		m := RecalledMemory{Record: c.record(), RelevanceScore: c.float(), RenderedContent: c.content()}
		if c.pick(2) == 0 {
			m.ActivationPath = []ID{c.id()}
		}
		r.Memories = append(r.Memories, m)
	}
	r.TotalCandidates = c.rng.Uint32()
	if c.pick(2) == 0 {
		r.ActivationTrace = &ActivationTrace{SourceID: c.id(), Activations: []Activation{{RecordID: c.id(), ActivationLevel: c.float()}}}
	}
	if c.pick(2) == 0 {
		r.QueryMetadata = &QueryMetadata{TotalRecordsScanned: 7, StoresSearched: []StoreType{StoreSemantic}}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameAsUnmarshal checks that UnmarshalRecallQueryResponse gives data the
// value and error json.Unmarshal gives it; it reports whether the strict
// parser took it alone.
func sameAsUnmarshal(t *testing.T, data []byte) bool {
	t.Helper()
	var want, got RecallQueryResponse
	wantErr := json.Unmarshal(data, &want)
	gotErr := UnmarshalRecallQueryResponse(data, &got)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("error %v, json.Unmarshal's %v, for\n%s", gotErr, wantErr, data)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n%+v\njson.Unmarshal:\n%+v\nfrom\n%s", got, want, data)
	}
	d := recallDecoder{Scanner: jsonscan.Scanner{Data: data}}
	var r RecallQueryResponse
	return d.response(&r) && d.End()
}

// TestUnmarshalRecallAnswerMatchesJSON: on the answers the server writes
// (random memories full of edge cases) the strict parser decodes alone
// and exactly as json.Unmarshal; on those answers altered (bytes changed,
// dropped or inserted, keys in capitals, white space, repeated keys) the result and the
// error are still json.Unmarshal's.
func TestUnmarshalRecallAnswerMatchesJSON(t *testing.T) {
	c := jsonCorpus{rand.New(rand.NewPCG(7, 8))}
	alone, mutants := 0, 0
	for i := range 300 {
		data := randomAnswer(t, c)
		if !sameAsUnmarshal(t, data) {
			t.Fatalf("answer %d: the strict parser gave up on what the server writes:\n%s", i, data)
		}
		alone++
		for range 20 {
			m := bytes.Clone(data)
			k := c.pick(len(m))
			switch c.pick(7) {
			case 0:
				m[k] = "{}[],:\"0-1.e x\\nul"[c.pick(18)]
			case 1:
				m = append(m[:k], m[k+1:]...)
			case 2:
				m = append(m[:k], append([]byte(" \n\t"), m[k:]...)...)
			case 3:
				m = bytes.Replace(m, []byte(`"format"`), []byte(`"Format"`), 1)
			case 4:
				m = bytes.Replace(m, []byte(`"access_count":`), []byte(`"extra":1,"access_count":`), 1)
			case 5:
				m = bytes.Replace(m, []byte(`"summary":null`), []byte(`"summary":"a\u00e9\"b","summary":null`), 1)
			case 6:
				// json.Unmarshal merges a repeated list into the first.
				m = bytes.Replace(m, []byte(`],"summary":`), []byte(`],"blocks":[{"format":"again"}],"summary":`), 1)
			}
			sameAsUnmarshal(t, m)
			mutants++
		}
	}
	t.Logf("%d answers decoded by the strict parser alone, %d altered ones compared", alone, mutants)
}
