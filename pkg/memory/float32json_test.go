package memory

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"memsvc.dev/memsvc/internal/jsonscan"
)

// checkParseFloat32 fails t unless parseJSONFloat32 gives strconv's
// float32 (bit for bit, so -0 too) and the same verdict on s. It reports
// whether the fast path took s.
func checkParseFloat32(t *testing.T, s string) bool {
	t.Helper()
	want, err := strconv.ParseFloat(s, 32)
	got, ok := parseJSONFloat32([]byte(s))
	if ok != (err == nil) {
		t.Fatalf("%q: ok %v, strconv error %v", s, ok, err)
	}
	if ok && math.Float32bits(got) != math.Float32bits(float32(want)) {
		t.Fatalf("%q: %v (%#x), strconv %v (%#x)", s, got, math.Float32bits(got), float32(want), math.Float32bits(float32(want)))
	}
	_, fast := fastFloat32([]byte(s))
	return fast
}

// TestParseJSONFloat32Edges: zeros of both signs, the ends of the float32
// range (subnormals, overflow), exact midpoints between float32 values
// (ties to even), and digits or exponents beyond the fast path.
func TestParseJSONFloat32Edges(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "0.0", "-0.0", "0e0", "-0E-5", "0.000e+12", "1", "-1", "0.1", "-0.30000001", "1e22", "1e23", "-1e-22",
		"1e-45", "1.4e-45", "7e-46", "1e-46", "-1e-46", "1.1754942e-38", "1.17549435e-38", "1.1754944e-38",
		"3.4028235e38", "3.40282356e38", "3.4028236e38", "-3.4028235e+38", "1e39", "-1e39", "1e400", "1e-400",
		"16777216", "16777217", "16777219", "-16777217", "33554434", "33554435", "8388608.5", "8388609.5",
		"1.000000059604644775390625", "1.0000000596046447753906249", "1.0000000596046447753906251",
		"9007199254740993e-22", "9007199254740992e-22", "1234567890123456789", "12345678901234567890",
		"0.000000000000000000000000000000000000000001", "123456789012345678901234567890e-20",
		"4.9406564584124654e-324", "2.5e-1", "1E1", "1e+1",
	} {
		checkParseFloat32(t, s)
	}
}

// TestParseJSONFloat32Random compares parseJSONFloat32 with strconv on
// random float32 values of every exponent (subnormals included) written
// as the server writes them, as strconv writes them in each format and
// at chosen precisions, and as float64 text; on the midpoints between
// neighbouring float32 values; and on random decimal strings. The fast
// path must take most of what the server writes.
func TestParseJSONFloat32Random(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	served, fast := 0, 0
	for range 200_000 {
		f := math.Float32frombits(rng.Uint32())
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			continue
		}
		embedding := rng.IntN(2) == 0
		if embedding {
			f = float32(rng.NormFloat64() * 0.05) // a value of a normalised embedding
		}
		text, err := appendJSONFloat(nil, float64(f), 32)
		if err != nil {
			t.Fatal(err)
		}
		if checkParseFloat32(t, string(text)) && embedding {
			fast++
		}
		if embedding {
			served++
		}
		if got, _ := parseJSONFloat32(text); got != f {
			t.Fatalf("%s read back as %v, written from %v", text, got, f)
		}
		fmtc := "fegE"[rng.IntN(4)]
		checkParseFloat32(t, strconv.FormatFloat(float64(f), fmtc, -1, 32))
		checkParseFloat32(t, strconv.FormatFloat(float64(f), fmtc, rng.IntN(20), 64))
		checkParseFloat32(t, strconv.FormatFloat(float64(f), 'g', -1, 64))
		// The midpoint to the next float32 up, exactly (a float64), then
		// written shortest as a float64 and with a few digits too many.
		next := math.Nextafter32(f, float32(math.Inf(1)))
		if !math.IsInf(float64(next), 0) {
			mid := (float64(f) + float64(next)) / 2
			checkParseFloat32(t, strconv.FormatFloat(mid, 'e', -1, 64))
			checkParseFloat32(t, strconv.FormatFloat(mid, 'e', 8+rng.IntN(12), 64))
		}
	}
	for range 100_000 {
		var b strings.Builder
		if rng.IntN(2) == 0 {
			b.WriteByte('-')
		}
		n := 1 + rng.IntN(25)
		point := rng.IntN(n + 1)
		for i := range n {
			if i == point && i > 0 {
				b.WriteByte('.')
			}
			d := byte('0' + rng.IntN(10))
			if i == 0 {
				d = byte('1' + rng.IntN(9))
			}
			b.WriteByte(d)
		}
		if rng.IntN(2) == 0 {
			b.WriteString("e" + strconv.Itoa(rng.IntN(100)-50))
		}
		checkParseFloat32(t, b.String())
	}
	if fast < served*99/100 {
		t.Fatalf("the fast path took %d of %d embedding values as the server writes them", fast, served)
	}
}

// TestUnmarshalRepeatedEmbedding: an embedding repeated in the rendered
// content (as the server writes it) and one that differs from the
// previous in a single digit both decode as json.Unmarshal decodes them,
// into slices that do not share memory.
func TestUnmarshalRepeatedEmbedding(t *testing.T) {
	emb := []float32{0.5, -0.25, 1e-7, float32(math.Copysign(0, -1)), 3.4e38}
	other := []float32{0.5, -0.25, 1e-7, float32(math.Copysign(0, -1)), 3.3e38}
	content := func(e []float32) MemoryContent {
		return MemoryContent{Blocks: []ContentBlock{{Modality: ModalityText, Data: Bytes("x"), Embedding: e}}}
	}
	resp := RecallQueryResponse{Memories: []RecalledMemory{
		{Record: MemoryRecord{Store: StoreEpisodic, Content: content(emb)}, RenderedContent: content(emb)},
		{Record: MemoryRecord{Store: StoreEpisodic, Content: content(other)}, RenderedContent: content(emb)},
		{Record: MemoryRecord{Store: StoreEpisodic, Content: content([]float32{})}, RenderedContent: content(nil)},
	}}
	data, err := resp.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var got, want RecallQueryResponse
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	d := recallDecoder{Scanner: jsonscan.Scanner{Data: data}}
	if !d.response(&got) || !d.End() {
		t.Fatal("the strict parser gave up on the answer")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n%+v\njson.Unmarshal:\n%+v", got, want)
	}
	for i, m := range got.Memories[:2] {
		if e := m.RenderedContent.Blocks[0].Embedding; math.Float32bits(e[3]) != 1<<31 {
			t.Fatalf("memory %d: -0 read as %v", i, e[3])
		}
	}
	got.Memories[0].Record.Content.Blocks[0].Embedding[0] = 9
	if got.Memories[0].RenderedContent.Blocks[0].Embedding[0] != 0.5 || got.Memories[1].RenderedContent.Blocks[0].Embedding[0] != 0.5 {
		t.Fatal("decoded embeddings share memory")
	}
}

// TestRecalledMemorySharedEmbeddingJSON: a recalled memory whose rendered
// content shares the record's embedding slices (as recall renders it), a
// prefix of one (same first element, shorter), or an equal copy in
// another block is written byte for byte as encoding/json writes it.
func TestRecalledMemorySharedEmbeddingJSON(t *testing.T) {
	c := jsonCorpus{rand.New(rand.NewPCG(43, 44))}
	for i := range 300 {
		r := c.record()
		r.Content.Blocks = append(r.Content.Blocks, ContentBlock{Modality: ModalityText, Data: Bytes("y"), Embedding: c.float32s()})
		rendered := r.Content
		rendered.Blocks = slices.Clone(r.Content.Blocks)
		switch i % 3 {
		case 1:
			if e := rendered.Blocks[0].Embedding; len(e) > 1 {
				rendered.Blocks[0].Embedding = e[:len(e)-1]
			}
		case 2:
			rendered.Blocks = append(rendered.Blocks, ContentBlock{Modality: ModalityText, Embedding: slices.Clone(rendered.Blocks[0].Embedding)})
			slices.Reverse(rendered.Blocks)
		}
		m := RecalledMemory{Record: r, RelevanceScore: c.float(), RenderedContent: rendered}
		want, err := json.Marshal(refMemory{refRecordOf(r), m.RelevanceScore, m.ActivationPath, refContent(m.RenderedContent.withBlocks())})
		if err != nil {
			t.Fatalf("memory %d: reference: %v", i, err)
		}
		got, err := json.Marshal(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("memory %d (err %v):\n got %s\nwant %s", i, err, got, want)
		}
	}
}
