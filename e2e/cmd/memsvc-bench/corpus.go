package main

import (
	"fmt"
	"math/rand/v2"

	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
)

// corpus generates what the benchmark stores: CorpusGen documents (about
// 40 English-like words each) spread over the four persistent stores, with
// a deterministic random embedding each when dims > 0, and raw journal
// sessions of alternating user and assistant turns. A corpus is not safe
// for concurrent use.
type corpus struct {
	docs     *textindex.CorpusGen
	rng      *rand.Rand
	dims     int
	stored   int   // curated records generated
	raws     int   // raw entries generated
	text     int64 // bytes of text generated, curated and raw
	sessions int   // raw sessions started
	turn     int   // turns generated in the current session
}

func newCorpus(seed uint64, dims int) *corpus {
	return &corpus{docs: textindex.NewCorpusGen(seed), rng: rand.New(rand.NewPCG(seed, 0x62656e6368)), dims: dims}
}

// vector returns a random direction of c.dims dimensions.
func (c *corpus) vector() []float32 {
	v := make([]float32, c.dims)
	for i := range v {
		v[i] = float32(c.rng.NormFloat64())
	}
	return v
}

// record returns the next curated memory.
func (c *corpus) record() memory.EncodeStoreRequest {
	doc := c.docs.Document()
	content := memory.TextContent(doc)
	if c.dims > 0 {
		content.Blocks[0].Embedding = c.vector()
	}
	st := memory.PersistentStores()[c.stored%len(memory.PersistentStores())]
	c.stored++
	c.text += int64(len(doc))
	return memory.EncodeStoreRequest{Content: content, Store: &st}
}

func (c *corpus) records(n int) []memory.EncodeStoreRequest {
	out := make([]memory.EncodeStoreRequest, n)
	for i := range out {
		out[i] = c.record()
	}
	return out
}

// contentBytes is the mean size of the content of the records and raw
// entries generated so far: text, and embeddings as float32s.
func (c *corpus) contentBytes() float64 {
	if c.stored+c.raws == 0 {
		return 0
	}
	return float64(c.text+int64(c.stored*4*c.dims)) / float64(c.stored+c.raws)
}

// raw returns the next n raw journal entries; a session holds
// rawSessionLen turns.
func (c *corpus) raw(n int) []memory.EncodeStoreRawRequest {
	out := make([]memory.EncodeStoreRawRequest, n)
	for i := range out {
		if c.turn == 0 {
			c.sessions++
		}
		r := memory.DefaultEncodeStoreRawRequest()
		r.SessionID = fmt.Sprintf("bench-session-%06d", c.sessions)
		turn := fmt.Sprintf("t%03d", c.turn)
		r.TurnID = &turn
		r.Speaker = memory.SpeakerUser
		if c.turn%2 == 1 {
			r.Speaker = memory.SpeakerAssistant
		}
		r.SecrecyLevel = memory.SecrecyPublic
		doc := c.docs.Document()
		r.Content = memory.TextContent(doc)
		c.text += int64(len(doc))
		c.raws++
		out[i] = r
		c.turn = (c.turn + 1) % rawSessionLen
	}
	return out
}

// queries returns n recall queries of one to four words, drawn like the
// corpus words.
func queries(seed uint64, n int) []string {
	g := textindex.NewCorpusGen(seed)
	out := make([]string, n)
	for i := range out {
		out[i] = g.Query(1 + i%4)
	}
	return out
}
