package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"testing"

	"memsvc.dev/memsvc/internal/jsonscan"
)

// randomAnswer is a recall answer of random memories (jsonCorpus) as the
// server writes it, with a trace and query metadata or without.
func randomAnswer(t *testing.T, c jsonCorpus) []byte {
	t.Helper()
	b, err := json.Marshal(c.answer(c.content))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answer is a recall answer of random memories whose stored and rendered
// contents come from content, with a trace and query metadata or
// without.
func (c jsonCorpus) answer(content func() MemoryContent) RecallQueryResponse {
	var r RecallQueryResponse
	if c.pick(5) > 0 {
		r.Memories = []RecalledMemory{}
	}
	for range c.pick(4) {
		rec := c.record()
		rec.Content = content()
		m := RecalledMemory{Record: rec, RelevanceScore: c.float(), RenderedContent: content()}
		if c.pick(2) == 0 {
			// As most answers have it: rendered as stored.
			m.RenderedContent = m.Record.Content
		}
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
	return r
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

// metaFieldRE matches the meta-memory fields whose absence has a default.
var metaFieldRE = regexp.MustCompile(`"(schema_version|capture_status|relation)":("[a-z_]+"|[0-9]+),`)

// TestUnmarshalRecallAnswerMatchesJSON: on the answers the server writes
// (random memories full of edge cases) the strict parser decodes alone
// and exactly as json.Unmarshal; on those answers altered (bytes changed,
// dropped or inserted, keys in capitals, white space, repeated keys,
// meta-memory fields left out or out of range) the result and the
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
			switch c.pick(12) {
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
			case 7:
				// Meta-memory fields left out take UnmarshalJSON's defaults.
				m = metaFieldRE.ReplaceAll(m, nil)
			case 8:
				m = bytes.Replace(m, []byte(`"chosen":false`), []byte(`"chosen":null`), 1)
			case 9:
				m = bytes.Replace(m, []byte(`"confidence":null`), []byte(`"confidence":1e400`), 1)
			case 10:
				m = bytes.Replace(m, []byte(`"intent":null`), []byte(`"intent":"a\u00e9"`), 1)
			case 11:
				m = bytes.Replace(m, []byte(`"metadata":{`), []byte(`"metadata":[1, {"x" : "\u2028"}],"x_metadata":{`), 1)
			}
			sameAsUnmarshal(t, m)
			mutants++
		}
	}
	t.Logf("%d answers decoded by the strict parser alone, %d altered ones compared", alone, mutants)
}

// TestRenderedContentCopied: a rendered content whose text is the
// record's content is decoded as a copy of it, sharing nothing: changing
// one leaves the other as it was.
func TestRenderedContentCopied(t *testing.T) {
	content := TextContent("remember the deploy")
	summary := "deploy"
	content.Summary = &summary
	content.Blocks[0].Embedding = []float32{0.5, -1}
	rec := MemoryRecord{Store: StoreEpisodic, Content: content, Meta: LegacyMeta()}
	data, err := json.Marshal(RecallQueryResponse{Memories: []RecalledMemory{{Record: rec, RenderedContent: content}}})
	if err != nil {
		t.Fatal(err)
	}
	if !sameAsUnmarshal(t, data) {
		t.Fatalf("the strict parser gave up on %s", data)
	}
	var r RecallQueryResponse
	if err := UnmarshalRecallQueryResponse(data, &r); err != nil {
		t.Fatal(err)
	}
	got := &r.Memories[0]
	rc := &got.RenderedContent
	rc.Blocks[0].Data[0] = 'X'
	rc.Blocks[0].Embedding[0] = 9
	*rc.Summary = "changed"
	rc.Blocks[0].Format = "changed"
	if !reflect.DeepEqual(got.Record.Content, content) {
		t.Fatalf("changing the rendered content changed the record's: %+v", got.Record.Content)
	}
}
