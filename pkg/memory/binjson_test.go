package memory

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// float32Edges are the values an embedding's text forms must carry bit
// for bit.
var float32Edges = []float32{0, float32(math.Copysign(0, -1)), math.MaxFloat32, -math.MaxFloat32,
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 0x1p-126, 0x1.fffffcp-127, 1, -1, 1e-7, 3.4e38}

// edgeFloat32s is an embedding of one of many sizes, full of edge values
// (subnormals, negative zero, the largest float32) and random bits.
func (c jsonCorpus) edgeFloat32s() []float32 {
	switch c.pick(8) {
	case 0:
		return nil
	case 1:
		return []float32{}
	}
	sizes := []int{1, 2, 3, 4, 5, 7, 64, 383, 384, 385, 1536}
	v := make([]float32, sizes[c.pick(len(sizes))])
	for i := range v {
		switch c.pick(4) {
		case 0:
			v[i] = float32Edges[c.pick(len(float32Edges))]
		case 1:
			v[i] = math.Float32frombits(c.rng.Uint32() & 0x807fffff) // subnormal
		case 2:
			for {
				x := math.Float32frombits(c.rng.Uint32())
				if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
					v[i] = x
					break
				}
			}
		default:
			v[i] = c.rng.Float32()*2 - 1
		}
	}
	return v
}

// binaryContent is random content (jsonCorpus.content) with edge-case
// embeddings and, now and then, a large block of random bytes.
func (c jsonCorpus) binaryContent() MemoryContent {
	m := c.content()
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.Embedding = c.edgeFloat32s()
		switch c.pick(12) {
		case 0:
			b.Data = make(Bytes, 1+c.pick(70_000))
			for j := range b.Data {
				b.Data[j] = byte(c.rng.Uint32())
			}
		case 1:
			b.Data = Bytes{}
		case 2:
			b.Data = nil
		}
	}
	return m
}

// binaryAnswer is a random recall answer (jsonCorpus.answer) with binary
// edge cases in its content.
func (c jsonCorpus) binaryAnswer() RecallQueryResponse { return c.answer(c.binaryContent) }

// checkBinaryShape fails t unless every "data", "image", "audio" and
// "archive_data" value of the JSON text is a string or null, and every
// "embedding" one too: the base64 form.
func checkBinaryShape(t *testing.T, text []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(text, &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(k, x)
			}
		case []any:
			switch key {
			case "data", "image", "audio", "archive_data", "embedding":
				t.Fatalf("%s is an array in the base64 form:\n%.300s", key, text)
			}
			for _, x := range v {
				walk("", x)
			}
		}
	}
	walk("", v)
}

// decodeInto decodes text with json.Unmarshal into a new T and returns it.
func decodeInto[T any](t *testing.T, text []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(text, &v); err != nil {
		t.Fatalf("decode %T: %v\n%.300s", v, err, text)
	}
	return v
}

// TestBinaryFormRoundTrip: every answer that carries content, written in
// BinaryBase64, decodes (with the strict decoder and with json.Unmarshal)
// to exactly the values the default form decodes to, on random answers
// full of edge cases: nil and empty data and embeddings, blocks of up to
// 70 KB, embeddings of 1 to 1,536 values with subnormals, negative zero
// and the largest float32. The default form stays what json.Marshal
// writes, and the base64 form has no arrays where binary values are.
func TestBinaryFormRoundTrip(t *testing.T) {
	c := jsonCorpus{rand.New(rand.NewPCG(17, 4))}
	for i := range 60 {
		r := c.binaryAnswer()
		arrays, err := r.AppendJSONForm(nil, BinaryArrays)
		if err != nil {
			t.Fatal(err)
		}
		if want, err := json.Marshal(r); err != nil || !bytes.Equal(arrays, want) {
			t.Fatalf("answer %d: the default form differs from json.Marshal (%v)", i, err)
		}
		compact, err := r.AppendJSONForm(nil, BinaryBase64)
		if err != nil {
			t.Fatal(err)
		}
		checkBinaryShape(t, compact)
		if len(compact) > len(arrays) {
			t.Errorf("answer %d: base64 form %d bytes, arrays %d", i, len(compact), len(arrays))
		}
		want := decodeInto[RecallQueryResponse](t, arrays)
		if got := decodeInto[RecallQueryResponse](t, compact); !reflect.DeepEqual(got, want) {
			t.Fatalf("answer %d: json.Unmarshal of the base64 form differs", i)
		}
		var strict RecallQueryResponse
		if err := UnmarshalRecallQueryResponse(compact, &strict); err != nil || !reflect.DeepEqual(strict, want) {
			t.Fatalf("answer %d: strict decoder of the base64 form: %v", i, err)
		}
		if !sameAsUnmarshal(t, compact) {
			t.Errorf("answer %d: the strict decoder left the base64 form to encoding/json", i)
		}

		assoc := RecallAssociateResponse{Memories: r.Memories, TotalCandidates: 3}
		tl := RecallTimelineResponse{Buckets: []TimelineBucket{{Start: t0, End: t1, Memories: r.Memories, Count: 1}}}
		raw := RecallRawQueryResponse{TotalCandidates: 2}
		for range c.pick(3) {
			raw.Records = append(raw.Records, RawJournalRecord{ID: c.id(), SessionID: c.text(), Source: SourceConversation,
				Speaker: SpeakerUser, Visibility: VisibilityNormal, SecrecyLevel: SecrecySensitive, CreatedAt: t0, UpdatedAt: t1,
				Content: c.binaryContent(), Meta: c.recordMeta()})
		}
		rec := c.record()
		rec.Content = c.binaryContent()
		for _, tc := range []struct {
			name string
			v    interface {
				AppendJSONForm([]byte, BinaryForm) ([]byte, error)
			}
			decode func([]byte) any
		}{
			{"associate", &assoc, func(b []byte) any { return decodeInto[RecallAssociateResponse](t, b) }},
			{"timeline", &tl, func(b []byte) any { return decodeInto[RecallTimelineResponse](t, b) }},
			{"raw", &raw, func(b []byte) any { return decodeInto[RecallRawQueryResponse](t, b) }},
			{"record", &rec, func(b []byte) any { return decodeInto[MemoryRecord](t, b) }},
		} {
			want, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if arrays, err := tc.v.AppendJSONForm(nil, BinaryArrays); err != nil || !bytes.Equal(arrays, want) {
				t.Fatalf("%s %d: the default form differs from json.Marshal (%v)", tc.name, i, err)
			}
			compact, err := tc.v.AppendJSONForm([]byte("prefix"), BinaryBase64)
			if err != nil || !bytes.HasPrefix(compact, []byte("prefix")) {
				t.Fatalf("%s %d: %v", tc.name, i, err)
			}
			compact = compact[len("prefix"):]
			checkBinaryShape(t, compact)
			if got, want := tc.decode(compact), tc.decode(want); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %d: the base64 form decodes to other values", tc.name, i)
			}
		}
	}
}

// TestBase64RequestRoundTrip: a request written by Base64Request decodes
// to exactly what the same request in the default form decodes to, and
// has its binary values as strings.
func TestBase64RequestRoundTrip(t *testing.T) {
	c := jsonCorpus{rand.New(rand.NewPCG(8, 9))}
	check := func(t *testing.T, req any, decode func([]byte) (any, error)) {
		t.Helper()
		plain, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		compact, err := json.Marshal(Base64Request(req))
		if err != nil {
			t.Fatal(err)
		}
		checkBinaryShape(t, compact)
		want, err := decode(plain)
		if err != nil {
			t.Fatalf("%T default form: %v", req, err)
		}
		got, err := decode(compact)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%T: the base64 form decodes to other values (%v):\n%.400s\n%.400s", req, err, compact, plain)
		}
	}
	dec := func(v any) func([]byte) (any, error) {
		return func(b []byte) (any, error) {
			p := reflect.New(reflect.TypeOf(v).Elem())
			err := json.Unmarshal(b, p.Interface())
			return p.Elem().Interface(), err
		}
	}
	for range 40 {
		store := EncodeStoreRequest{Content: c.binaryContent(), Metadata: JSON(`{"k":1}`)}
		if c.pick(2) == 0 {
			s := StoreSemantic
			store.Store = &s
		}
		check(t, &store, dec(&store))
		batch := EncodeBatchRequest{InferAssociations: true}
		for range c.pick(3) {
			batch.Records = append(batch.Records, EncodeStoreRequest{Content: c.binaryContent()})
		}
		check(t, &batch, dec(&batch))
		raw := DefaultEncodeStoreRawRequest()
		raw.SessionID, raw.Content = c.text(), c.binaryContent()
		check(t, &raw, dec(&raw))
		check(t, &EncodeBatchStoreRawRequest{Records: []EncodeStoreRawRequest{raw, raw}}, dec(&EncodeBatchStoreRawRequest{}))
		upd := EncodeUpdateRequest{RecordID: c.id()}
		if c.pick(2) == 0 {
			content := c.binaryContent()
			upd.Content = &content
		}
		if c.pick(2) == 0 {
			upd.Metadata = JSON(`{}`)
		}
		check(t, &upd, dec(&upd))
		q := DefaultRecallQueryRequest()
		q.Cue.Embedding = c.edgeFloat32s()
		if c.pick(2) == 0 {
			q.Cue.Image = Bytes(c.text())
			q.Cue.Audio = Bytes{}
			text := c.text()
			q.Cue.Text = &text
		}
		check(t, &q, dec(&q))
		imp := DefaultImportRequest()
		if c.pick(2) == 0 {
			imp.ArchiveData = Bytes(c.text())
		}
		check(t, &imp, dec(&imp))
	}
	// Requests without binary values are left alone.
	stats := &ForgetRequest{}
	if Base64Request(stats) != any(stats) {
		t.Error("Base64Request changed a request without binary values")
	}
}

// le32 is base64 of the little-endian bits of v.
func le32(v ...float32) string {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// TestEmbeddingString: an embedding given as a base64 string is read bit
// for bit wherever embeddings are read (content blocks, recall cues), in
// the standard padded alphabet and the others Bytes accepts, escapes
// included; "" is an empty embedding as [] is.
func TestEmbeddingString(t *testing.T) {
	want := float32Edges
	text := le32(want...)
	for name, s := range map[string]string{
		"standard": text,
		"unpadded": strings.TrimRight(text, "="),
		"url":      base64.URLEncoding.EncodeToString([]byte(base64Raw(t, text))),
		"escaped":  strings.Replace(text, "A", `\u0041`, 1),
	} {
		var b ContentBlock
		if err := json.Unmarshal([]byte(`{"modality":"text","format":"f","data":"aGk=","embedding":"`+s+`"}`), &b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var cue RecallCue
		if err := json.Unmarshal([]byte(`{"embedding":"`+s+`"}`), &cue); err != nil {
			t.Fatalf("%s cue: %v", name, err)
		}
		for _, got := range [][]float32{b.Embedding, cue.Embedding} {
			if len(got) != len(want) {
				t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Errorf("%s: value %d is %v, want %v", name, i, got[i], want[i])
				}
			}
		}
		if string(b.Data) != "hi" {
			t.Errorf("%s: data %q", name, b.Data)
		}
	}
	var b ContentBlock
	if err := json.Unmarshal([]byte(`{"modality":"text","embedding":""}`), &b); err != nil || b.Embedding == nil || len(b.Embedding) != 0 {
		t.Errorf(`"" is %#v (%v), want an empty embedding`, b.Embedding, err)
	}
}

func base64Raw(t *testing.T, s string) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestBinaryStringsRejected: a base64 embedding or bytes value that is not
// base64, or an embedding whose bytes are not whole float32 values or are
// NaN or infinite, is refused with an error that names the field and says
// what is wanted, in a block, a cue and a whole request.
func TestBinaryStringsRejected(t *testing.T) {
	for _, tc := range []struct {
		name, embedding, want string
	}{
		{"not base64", `"!!!!"`, "embedding: string \"!!!!\" is not base64; want an array of numbers or a standard base64 string of little-endian float32 values"},
		{"bad length", `"AAAAAAA="`, "embedding: base64 string holds 5 bytes, not a whole number of 4-byte float32 values"},
		{"one byte", `"AA=="`, "holds 1 bytes"},
		{"NaN", `"` + le32(1, float32(math.NaN())) + `"`, "embedding[1]: must be a finite number (got NaN)"},
		{"infinity", `"` + le32(float32(math.Inf(-1))) + `"`, "embedding[0]: must be a finite number (got -Inf)"},
		{"number", `7`, "cannot unmarshal number"},
	} {
		for _, doc := range []struct {
			name string
			text string
			v    any
		}{
			{"block", `{"modality":"text","embedding":` + tc.embedding + `}`, &ContentBlock{}},
			{"cue", `{"embedding":` + tc.embedding + `}`, &RecallCue{}},
			{"store", `{"content":{"blocks":[{"modality":"text","data":[104],"embedding":` + tc.embedding + `}]}}`, &EncodeStoreRequest{}},
			{"recall", `{"cue":{"text":"x","embedding":` + tc.embedding + `}}`, &RecallQueryRequest{}},
		} {
			err := json.Unmarshal([]byte(doc.text), doc.v)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s in a %s: error %v, want one containing %q", tc.name, doc.name, err, tc.want)
			}
			if tc.name != "number" && CodeOf(err) != CodeValidation {
				t.Errorf("%s in a %s: code %s, want %s", tc.name, doc.name, CodeOf(err), CodeValidation)
			}
		}
	}
	for _, data := range []string{`"!!!!"`, `"AAA=A"`, `"a"`} {
		var b ContentBlock
		err := json.Unmarshal([]byte(`{"modality":"text","data":`+data+`}`), &b)
		if err == nil || !strings.Contains(err.Error(), "invalid base64 string: want an array of integers 0-255 or a base64 string") {
			t.Errorf("data %s: error %v", data, err)
		}
	}
}

// TestBinaryFormRefusesNonFinite: NaN and infinities fail the base64
// form's encoder as they fail the arrays' (JSON numbers cannot hold them).
func TestBinaryFormRefusesNonFinite(t *testing.T) {
	for _, x := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		r := MemoryRecord{ID: idA, Store: StoreSemantic, Content: MemoryContent{Blocks: []ContentBlock{{Modality: ModalityText, Embedding: []float32{1, x}}}}}
		for _, f := range []BinaryForm{BinaryArrays, BinaryBase64} {
			if out, err := r.AppendJSONForm(nil, f); err == nil {
				t.Errorf("%v in form %d: wrote %.100s", x, f, out)
			}
		}
		if _, err := json.Marshal(Base64Request(&RecallQueryRequest{Cue: RecallCue{Embedding: []float32{x}}})); err == nil {
			t.Errorf("%v in a cue: no error", x)
		}
	}
}

// TestBinaryFormExample pins the base64 form of one block.
func TestBinaryFormExample(t *testing.T) {
	c := MemoryContent{Blocks: []ContentBlock{{Modality: ModalityText, Format: "text/plain", Data: Bytes("hi"), Embedding: []float32{1, -2}}}}
	got, err := appendContentJSON(nil, &c, nil, BinaryBase64)
	want := `{"blocks":[{"modality":"text","format":"text/plain","data":"aGk=","embedding":"AACAPwAAAMA="}],"summary":null}`
	if err != nil || string(got) != want {
		t.Errorf("got %s (%v)\nwant %s", got, err, want)
	}
	got, err = appendContentJSON(nil, &MemoryContent{Blocks: []ContentBlock{{Modality: ModalityText, Data: nil, Embedding: []float32{}}}}, nil, BinaryBase64)
	if want := `{"blocks":[{"modality":"text","format":"","data":"","embedding":""}],"summary":null}`; err != nil || string(got) != want {
		t.Errorf("empty values: got %s (%v)\nwant %s", got, err, want)
	}
}

// TestCueDecodeMatchesJSON: the one-pass cue decoder gives what
// encoding/json gives (through a twin of RecallCue without its
// UnmarshalJSON), on cues as clients write them and on variants it leaves
// to encoding/json (capitalised or unknown or repeated keys, white space,
// nulls, escapes).
func TestCueDecodeMatchesJSON(t *testing.T) {
	// RecallCue's fields and tags without its methods; not cueJSON, the
	// field list of the decoder under test.
	type twin RecallCue
	c := jsonCorpus{rand.New(rand.NewPCG(21, 22))}
	variants := []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.Replace(s, `"text"`, `"Text"`, 1) },
		func(s string) string { return strings.Replace(s, `{`, `{"other":[1,{"x":2}],`, 1) },
		func(s string) string { return strings.Replace(s, `{`, `{"text":"first",`, 1) },
		func(s string) string { return strings.ReplaceAll(s, `,`, " ,\n ") },
		func(s string) string {
			return strings.Replace(s, `"emotion":null`, `"emotion":{"joy":0.5,"Fear":1}`, 1)
		},
		func(s string) string {
			return strings.Replace(s, `"temporal":null`, `"temporal":{"start":"2026-01-01T00:00:00Z","end":"2026-02-01T00:00:00+02:00"}`, 1)
		},
		func(s string) string { return strings.Replace(s, `"spatial":null`, `"spatial":{"lat": 1.5}`, 1) },
		func(s string) string { return strings.Replace(s, `"text":"`, `"text":"\u00e9\n`, 1) },
		func(s string) string { return strings.Replace(s, `"image":null`, `"image":"aGk="`, 1) },
		func(s string) string { return strings.Replace(s, `"embedding":`, `"embedding":1,"x":`, 1) },
	}
	for i := range 300 {
		cue := RecallCue{Embedding: c.edgeFloat32s()}
		if c.pick(2) == 0 {
			text := c.text()
			cue.Text = &text
			cue.Audio = Bytes(c.text())
		}
		if c.pick(3) == 0 {
			cue.Emotion = &EmotionVector{Joy: c.float(), Valence: c.float()}
		}
		arrays, err := json.Marshal(cue)
		if err != nil {
			t.Fatal(err)
		}
		text := variants[i%len(variants)](string(arrays))
		var want twin
		wantErr := json.Unmarshal([]byte(text), &want)
		var got RecallCue
		gotErr := json.Unmarshal([]byte(text), &got)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("cue %s: error %v, encoding/json's %v", text, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(twin(got), want) {
			t.Fatalf("cue %s:\n got %+v\nwant %+v", text, got, want)
		}
		// The same cue with its binary values in base64.
		compact, err := json.Marshal(cueBase64{&cue})
		if err != nil {
			t.Fatal(err)
		}
		var fromCompact RecallCue
		if err := json.Unmarshal(compact, &fromCompact); err != nil {
			t.Fatal(err)
		}
		var fromArrays RecallCue
		if err := json.Unmarshal(arrays, &fromArrays); err != nil || !reflect.DeepEqual(fromCompact, fromArrays) {
			t.Fatalf("cue %s decodes otherwise than %s (%v)", compact, arrays, err)
		}
		d := recallDecoder{}
		d.Data = compact
		if !d.cue(&RecallCue{}) || !d.End() {
			t.Errorf("the one-pass decoder left %s to encoding/json", compact)
		}
	}
}

// TestTypeErrorFieldNames: a value of the wrong type in a cue or a block
// that the one-pass decoders leave to encoding/json is reported under the
// field's JSON path, as encoding/json reports it without the custom
// decoders (which the server passes on to the client).
func TestTypeErrorFieldNames(t *testing.T) {
	for _, tc := range []struct {
		text, field string
		v           any
	}{
		{`{"cue":{"text":5}}`, "cue.text", &RecallQueryRequest{}},
		{`{"cue":{"temporal":5}}`, "cue.temporal", &RecallQueryRequest{}},
		{`{"cue":{"emotion":{"joy":"a"}}}`, "cue.emotion.joy", &RecallQueryRequest{}},
		{`{"cue":{"embedding":[1,"a"]}}`, "cue.embedding", &RecallQueryRequest{}},
		{`{"content":{"blocks":[{"format":5}]}}`, "content.blocks.format", &EncodeStoreRequest{}},
		{`{"content":{"blocks":[{"embedding":[1,"a"]}]}}`, "content.blocks.embedding", &EncodeStoreRequest{}},
	} {
		err := json.Unmarshal([]byte(tc.text), tc.v)
		te, ok := errors.AsType[*json.UnmarshalTypeError](err)
		if !ok || te.Field != tc.field {
			t.Errorf("%s: error %v, want a type error of field %q", tc.text, err, tc.field)
		}
	}
}
