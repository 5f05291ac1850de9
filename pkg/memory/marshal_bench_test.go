package memory

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// recallAnswer is a recall response shaped like the benchmark driver's:
// ten memories of a few hundred characters, each with a 384-dimension
// embedding, returned with their rendered content.
func recallAnswer() RecallQueryResponse {
	rng := rand.New(rand.NewPCG(1, 2))
	text := strings.Repeat("the deploy pipeline failed on the staging cluster again ", 10)
	resp := RecallQueryResponse{TotalCandidates: 120, QueryMetadata: &QueryMetadata{TotalRecordsScanned: 100000, StoresSearched: []StoreType{StoreEpisodic}}}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i := range 10 {
		emb := make([]float32, 384)
		for j := range emb {
			emb[j] = rng.Float32()*2 - 1
		}
		content := MemoryContent{Blocks: []ContentBlock{{Modality: ModalityText, Format: "text/plain", Data: Bytes(text), Embedding: emb}}}
		rec := MemoryRecord{ID: MustParseID("0196a7f0-0000-7000-8000-00000000000" + string(rune('0'+i))), Store: StoreEpisodic, CreatedAt: now, UpdatedAt: now, LastAccessedAt: now, AccessCount: uint32(i), Content: content, Fidelity: FidelityState{Score: 1, Stability: 2}, Version: 1, Meta: UnavailableMeta(TriggerEncodeStore, now)}
		resp.Memories = append(resp.Memories, RecalledMemory{Record: rec, RelevanceScore: 0.5, RenderedContent: content})
	}
	return resp
}

// BenchmarkMarshalRecallAnswer measures the JSON encoding of a typical
// recall answer, the largest part of a recall request's transport cost:
// "Server" as the HTTP API writes it (calling MarshalJSON), "Marshal"
// through json.Marshal.
func BenchmarkMarshalRecallAnswer(b *testing.B) {
	resp := recallAnswer()
	out, err := json.Marshal(resp)
	if err != nil {
		b.Fatal(err)
	}
	direct, err := resp.MarshalJSON()
	if err != nil || !bytes.Equal(direct, out) {
		b.Fatalf("MarshalJSON and json.Marshal disagree (err %v)", err)
	}
	for _, bc := range []struct {
		name string
		fn   func() ([]byte, error)
	}{
		{"Server", resp.MarshalJSON},
		{"Marshal", func() ([]byte, error) { return json.Marshal(resp) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(out)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRecallAnswerErrors: an unencodable value anywhere in a hand-assembled
// answer fails it, as json.Marshal fails the same value.
func TestRecallAnswerErrors(t *testing.T) {
	bad := recallAnswer()
	bad.Memories[3].RelevanceScore = math.NaN()
	badStore := recallAnswer()
	badStore.Memories[9].Record.Store = 0
	for name, v := range map[string]json.Marshaler{
		"NaN score in recall":        bad,
		"zero store in associate":    RecallAssociateResponse{Memories: badStore.Memories},
		"NaN score in timeline":      RecallTimelineResponse{Buckets: []TimelineBucket{{}, {Memories: bad.Memories}}},
		"zero store in one memory":   badStore.Memories[9],
		"NaN score in a lone bucket": TimelineBucket{Memories: bad.Memories},
	} {
		if out, err := v.MarshalJSON(); err == nil {
			t.Errorf("%s: encoded %d bytes, want an error", name, len(out))
		}
		if _, err := json.Marshal(v); err == nil {
			t.Errorf("%s: json.Marshal succeeded", name)
		}
	}
}

// TestRecallAnswerFields: the hand-assembled encoders write exactly the
// fields of their types, in declaration order, so a field added to one of
// the types later cannot be left out of the wire silently.
func TestRecallAnswerFields(t *testing.T) {
	answer := recallAnswer()
	answer.ActivationTrace = &ActivationTrace{}
	for _, v := range []json.Marshaler{
		answer,
		answer.Memories[0],
		RecallAssociateResponse{Memories: answer.Memories},
		TimelineBucket{Memories: answer.Memories},
		RecallTimelineResponse{Buckets: []TimelineBucket{{}}, Truncated: true},
	} {
		b, err := v.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := objectKeys(t, b), jsonFields(reflect.TypeOf(v)); !slices.Equal(got, want) {
			t.Errorf("%T writes %q, its fields are %q", v, got, want)
		}
	}
}

// jsonFields lists the JSON names of a struct type's fields in order.
func jsonFields(typ reflect.Type) []string {
	var out []string
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "-" && f.IsExported() {
			out = append(out, name)
		}
	}
	return out
}

// objectKeys lists the keys of the JSON object b, in order.
func objectKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var keys []string
	if _, err := dec.Token(); err != nil { // {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	if len(keys) != len(obj) {
		t.Fatalf("duplicate keys in %s", b)
	}
	return keys
}

// BenchmarkUnmarshalRecallAnswer measures the decoding of the same answer,
// the client's share of a recall: through json.Unmarshal and through
// UnmarshalRecallQueryResponse.
func BenchmarkUnmarshalRecallAnswer(b *testing.B) {
	data, err := json.Marshal(recallAnswer())
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		fn   func(*RecallQueryResponse) error
	}{
		{"Unmarshal", func(r *RecallQueryResponse) error { return json.Unmarshal(data, r) }},
		{"Strict", func(r *RecallQueryResponse) error { return UnmarshalRecallQueryResponse(data, r) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var resp RecallQueryResponse
				if err := bc.fn(&resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
