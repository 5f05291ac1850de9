package mcpproxy

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
)

// answerGen makes random recall answers full of the cases the recall
// tool's parser must get right: several blocks of several modalities,
// text that is not UTF-8, escapes, emotions, times in other zones,
// associations, metadata and meta-memory.
type answerGen struct{ rng *rand.Rand }

func (g answerGen) pick(n int) int { return g.rng.IntN(n) }

func (g answerGen) float() float64 {
	switch g.pick(5) {
	case 0:
		return 0
	case 1:
		return float64(g.pick(3))
	case 2:
		return math.Ldexp(g.rng.Float64(), g.pick(200)-100)
	default:
		return g.rng.Float64()
	}
}

func (g answerGen) id() memory.ID {
	var b [16]byte
	for i := range b {
		b[i] = byte(g.rng.Uint32())
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return memory.ID(b)
}

func (g answerGen) time() time.Time {
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+1800), time.FixedZone("", -7*3600)}
	return time.Unix(1_700_000_000+int64(g.pick(1e8)), int64(g.pick(3))*int64(g.pick(1e9))).In(zones[g.pick(len(zones))])
}

func (g answerGen) data() []byte {
	texts := []string{"", "pebble is our storage engine", `a "quoted" <tag> & \ back`, "é 中文 \u2028 🙂", "line\nbreak\ttab"}
	switch g.pick(6) {
	case 0:
		return []byte{0xff, 'a', 0xfe} // not UTF-8
	case 1:
		b := make([]byte, g.pick(600))
		for i := range b {
			b[i] = byte(g.rng.Uint32())
		}
		return b
	default:
		return []byte(texts[g.pick(len(texts))])
	}
}

func (g answerGen) content() memory.MemoryContent {
	var c memory.MemoryContent
	for range g.pick(4) {
		b := memory.ContentBlock{Modality: memory.Modality(1 + g.pick(8)), Format: "text/plain", Data: g.data()}
		if g.pick(2) == 0 {
			b.Modality = memory.ModalityText
		}
		if g.pick(4) == 0 {
			b.Embedding = []float32{float32(g.float()), -1.5}
		}
		c.Blocks = append(c.Blocks, b)
	}
	if g.pick(3) == 0 {
		s := "summary \"of\" it"
		c.Summary = &s
	}
	return c
}

func (g answerGen) record() memory.MemoryRecord {
	now := g.time()
	r := memory.MemoryRecord{
		ID: g.id(), Store: memory.StoreType(1 + g.pick(5)), CreatedAt: g.time(), UpdatedAt: now, LastAccessedAt: g.time(),
		AccessCount: g.rng.Uint32(), Content: g.content(), Version: uint32(g.pick(9)),
		Fidelity: memory.FidelityState{Score: g.float(), NoiseLevel: g.float(), DecayRate: g.float(), EmotionalAnchor: g.float(),
			ReinforcementCount: uint32(g.pick(5)), Stability: g.float(), LastDecayTick: g.time()},
		Meta: memory.UnavailableMeta(memory.TriggerEncodeStore, now),
	}
	if g.pick(2) == 0 {
		r.Emotion = memory.EmotionVector{Joy: g.float(), Trust: g.float(), Fear: g.float(), Surprise: g.float(), Sadness: g.float(),
			Disgust: g.float(), Anger: g.float(), Anticipation: g.float(), Intensity: g.float(), Valence: g.float() - 0.5}
	}
	for range g.pick(3) {
		r.Associations = append(r.Associations, memory.Association{TargetID: g.id(), AssociationType: memory.AssocTemporal,
			Weight: g.float(), CreatedAt: g.time(), LastCoActivation: g.time(), Origin: memory.OriginClient})
	}
	if g.pick(2) == 0 {
		r.Metadata = memory.JSON(`{"source":"test","n":[1,2,{"deep":null}],"s":"\u00e9\""}`)
	}
	if g.pick(2) == 0 {
		r.Meta.Tags = []string{"a", "b"}
		c := g.float()
		r.Meta.Confidence = &c
	}
	return r
}

// answer returns a random recall answer as the server writes it.
func (g answerGen) answer(t testing.TB) []byte {
	t.Helper()
	b, err := json.Marshal(g.response())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// response returns a random recall answer.
func (g answerGen) response() *memory.RecallQueryResponse {
	var r memory.RecallQueryResponse
	if g.pick(5) > 0 {
		r.Memories = []memory.RecalledMemory{}
	}
	for range g.pick(5) {
		m := memory.RecalledMemory{Record: g.record(), RelevanceScore: g.float(), RenderedContent: g.content()}
		if g.pick(2) == 0 {
			m.ActivationPath = []memory.ID{g.id()}
		}
		r.Memories = append(r.Memories, m)
	}
	r.TotalCandidates = g.rng.Uint32()
	if g.pick(2) == 0 {
		r.ActivationTrace = &memory.ActivationTrace{SourceID: g.id(), Activations: []memory.Activation{{RecordID: g.id(), ActivationLevel: g.float()}}}
	}
	switch g.pick(3) {
	case 0:
		r.QueryMetadata = &memory.QueryMetadata{TotalRecordsScanned: g.rng.Uint32(), StoresSearched: []memory.StoreType{memory.StoreSemantic, memory.StoreWorking}, FidelityFiltered: 3}
	case 1:
		r.QueryMetadata = &memory.QueryMetadata{StoresSearched: []memory.StoreType{}}
	}
	return &r
}

// decodedRecall is the recall tool's result from the full decoder, or its
// error.
func decodedRecall(data []byte) (*recallResult, error) {
	var r memory.RecallQueryResponse
	if err := memory.UnmarshalRecallQueryResponse(data, &r); err != nil {
		return nil, err
	}
	return flattenRecall(&r), nil
}

// sameResult fails the test when the parser took data and its result is
// not the full decoder's; it reports whether the parser took it, and
// whether it did where the full decoder fails (a field the tool does not
// show holds a well-formed value of the wrong type).
func sameResult(t *testing.T, data []byte) (taken, lenient bool) {
	t.Helper()
	got, ok, brief := parseRecall(data)
	if !ok || brief {
		// A brief answer has no full decoding to compare with
		// (TestParseRecallBrief compares it with its source).
		return ok, false
	}
	want, err := decodedRecall(data)
	if err != nil {
		return true, true
	}
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Fatalf("parsed\n%s\nfull decoder:\n%s\nfrom\n%s", gb, wb, data)
	}
	return true, false
}

// TestParseRecallMatchesDecoder: the recall tool's parser reads every
// answer the server writes (random ones, and the same indented) to the
// result decoding it in full gives; answers altered at random (bytes
// changed, dropped or inserted, keys renamed or repeated) are either left
// to the full decoder or read to the same result.
func TestParseRecallMatchesDecoder(t *testing.T) {
	g := answerGen{rand.New(rand.NewPCG(3, 4))}
	taken, mutants, left, lenient := 0, 0, 0, 0
	for i := range 300 {
		data := g.answer(t)
		var indented bytes.Buffer
		if err := json.Indent(&indented, data, "", "\t"); err != nil {
			t.Fatal(err)
		}
		for _, d := range [][]byte{data, indented.Bytes()} {
			if ok, _ := sameResult(t, d); !ok {
				t.Fatalf("answer %d: the parser gave up on what the server writes:\n%s", i, d)
			}
			taken++
		}
		for range 20 {
			m := bytes.Clone(data)
			k := g.pick(len(m))
			switch g.pick(7) {
			case 0:
				m[k] = "{}[],:\"0-1.e x\\nul"[g.pick(18)]
			case 1:
				m = append(m[:k], m[k+1:]...)
			case 2:
				m = append(m[:k], append([]byte(" \n\t"), m[k:]...)...)
			case 3:
				m = bytes.Replace(m, []byte(`"store"`), []byte(`"Store"`), 1)
			case 4:
				m = bytes.Replace(m, []byte(`"access_count":`), []byte(`"extra":1,"access_count":`), 1)
			case 5:
				m = bytes.Replace(m, []byte(`"score":`), []byte(`"score":0.25,"score":`), 1)
			case 6:
				m = bytes.Replace(m, []byte(`"data":[`), []byte(`"data":"AAEC","format":"x","data":[`), 1)
			}
			switch ok, l := sameResult(t, m); {
			case !ok:
				left++
			case l:
				lenient++
			}
			mutants++
		}
	}
	t.Logf("%d answers read by the parser; %d altered ones compared, %d of them left to the full decoder, %d read where it fails", taken, mutants, left, lenient)
}

// TestParseRecallLeavesTheUnexpected: answers the parser does not take
// (the forms it leaves to the full decoder) reach the recall tool's
// result through that decoder, as they always did.
func TestParseRecallLeavesTheUnexpected(t *testing.T) {
	const id = "0196a7f0-0000-7000-8000-000000000001"
	record := func(content string) string {
		return `{"memories":[{"record":{"id":"` + id + `","store":"semantic","created_at":"2026-05-01T09:30:00Z","content":` + content +
			`,"fidelity":{"score":0.5}},"relevance_score":0.75}],"total_candidates":1}`
	}
	for _, tc := range []struct {
		name, body, text string
	}{
		{"base64 data", record(`{"blocks":[{"modality":"text","data":"aGVsbG8="}]}`), "hello"},
		{"null data", record(`{"blocks":[{"modality":"text","data":null}]}`), ""},
		{"escaped key", strings.Replace(record(`{"blocks":[{"modality":"text","data":[104,105]}]}`), `"store"`, `"st\u006fre"`, 1), "hi"},
		{"key in capitals", strings.Replace(record(`{"blocks":[{"modality":"text","data":[104,105]}]}`), `"content"`, `"Content"`, 1), "hi"},
		{"repeated key", record(`{"blocks":[{"modality":"text","data":[104],"data":[105]}]}`), "i"},
		{"null fidelity", strings.Replace(record(`{"blocks":[{"modality":"text","data":[104,105]}]}`), `{"score":0.5}`, `null`, 1), "hi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok, _ := parseRecall([]byte(tc.body)); ok {
				t.Fatalf("the parser took %s", tc.body)
			}
			want, err := decodedRecall([]byte(tc.body))
			if err != nil {
				t.Fatalf("full decoder: %v", err)
			}
			if len(want.Memories) != 1 || want.Memories[0].Text != tc.text {
				t.Fatalf("full decoder read %+v, want text %q", want.Memories, tc.text)
			}
			wantText, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			p := newProxy(t, fakeHTTP(t, 200, tc.body), client.Options{}, Options{})
			got, isErr := callTool(t, p, "recall", map[string]any{"query": "x"})
			if isErr || got != string(wantText) {
				t.Errorf("recall answered (error %v)\n%s\nwant\n%s", isErr, got, wantText)
			}
		})
	}
	// An answer neither can read is the same error as before.
	p := newProxy(t, fakeHTTP(t, 200, `{"memories":[{"record":{"id":"nope"}}]}`), client.Options{}, Options{})
	got, isErr := callTool(t, p, "recall", map[string]any{"query": "x"})
	if !isErr || !strings.Contains(got, "decode answer of POST /v1/recall/query") {
		t.Errorf("recall of an unreadable answer: error %v, %s", isErr, got)
	}
}

// TestParseRecallBrief: the brief answer of a recall (random ones, and
// the same indented) reads to the result the full answer gives, and a
// brief answer the parser gives up on is an error of the recall tool,
// never a result of the full decoder.
func TestParseRecallBrief(t *testing.T) {
	g := answerGen{rand.New(rand.NewPCG(7, 8))}
	for i := range 300 {
		r := g.response()
		brief, err := memory.RecallBrief{Response: r}.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var indented bytes.Buffer
		if err := json.Indent(&indented, brief, "", "\t"); err != nil {
			t.Fatal(err)
		}
		want := flattenRecall(r)
		for _, d := range [][]byte{brief, indented.Bytes()} {
			got, ok, isBrief := parseRecall(d)
			if !ok || !isBrief || !reflect.DeepEqual(got, want) {
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(want)
				t.Fatalf("answer %d: parsed (%v, brief %v)\n%s\nwant\n%s\nfrom\n%s", i, ok, isBrief, gb, wb, d)
			}
		}
	}
	for _, body := range []string{
		`{"view":"brief","memories":[{"record":{"content":{"blocks":[{"modality":"text","data":[104]}]}}}]}`,
		`{"view":"brief","memories":[{"record":{"content":{"blocks":[{"modality":"text","text":1}]}}}]}`,
		`{"view":"brief","memories":[{"bogus":1}]}`,
		`{"view":"brief","view":"brief","memories":[]}`,
	} {
		if _, ok, brief := parseRecall([]byte(body)); ok || !brief {
			t.Errorf("%s: parsed %v, brief %v", body, ok, brief)
		}
		p := newProxy(t, fakeHTTP(t, 200, body), client.Options{}, Options{})
		got, isErr := callTool(t, p, "recall", map[string]any{"query": "x"})
		if !isErr || !strings.Contains(got, "decode answer of POST /v1/recall/query") {
			t.Errorf("recall of %s: error %v, %s", body, isErr, got)
		}
	}
	// "text" blocks belong to brief answers only; another view, or a view
	// after other keys, is no brief answer.
	for _, body := range []string{
		`{"memories":[{"record":{"content":{"blocks":[{"modality":"text","text":"hi"}]}}}]}`,
		`{"view":"full","memories":[]}`,
		`{"memories":[],"view":"brief"}`,
	} {
		if _, ok, brief := parseRecall([]byte(body)); ok || brief {
			t.Errorf("%s: parsed %v, brief %v", body, ok, brief)
		}
	}
}

// TestRecallSameOverClient: the recall tool answers the same through
// pkg/client (which hands it the answer to parse) as over the engine
// directly (which gives it the decoded answer).
func TestRecallSameOverClient(t *testing.T) {
	eng := newEngine(t)
	srv, err := httpapi.New(eng, httpapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	viaHTTP := newProxy(t, ts.URL, client.Options{}, Options{})
	direct := New(eng, Options{})
	for _, c := range []string{"the deploy key rotates on Fridays", "the cache bucket is ci-cache-eu", "pebble is our <storage> engine"} {
		storeMemory(t, direct, map[string]any{"content": c, "emotion": "trust"})
	}
	for _, args := range []map[string]any{
		{"query": "deploy key", "reconsolidate": false},
		{"query": "engine storage cache", "limit": 2, "reconsolidate": false},
		{"reconsolidate": false},
	} {
		want, _ := callTool(t, direct, "recall", args)
		got, _ := callTool(t, viaHTTP, "recall", args)
		if got != want {
			t.Errorf("recall %v over HTTP:\n%s\ndirect:\n%s", args, got, want)
		}
	}
}

// FuzzParseRecall: on any input the parser either gives up or gives the
// full decoder's result (when that decoder reads it too), and never
// panics.
func FuzzParseRecall(f *testing.F) {
	g := answerGen{rand.New(rand.NewPCG(5, 6))}
	for range 8 {
		f.Add(g.answer(f))
	}
	f.Add([]byte(`{"memories":null,"total_candidates":0,"query_metadata":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameResult(t, data)
	})
}
