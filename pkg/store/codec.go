package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// Record encoding. Every value starts with a format byte; the decoder keeps
// every format it ever wrote, so old data directories stay readable. The
// body is a fixed sequence of fields in the order of the encoder below:
//
//	uvarint   unsigned integers and lengths
//	varint    signed integers
//	8 bytes   float64, little endian IEEE 754
//	4 bytes   float32, little endian (embeddings, as one length-prefixed run)
//	str       uvarint length, then UTF-8 bytes
//	nstr      0x00 for null, or 0x01 then str
//	time      varint Unix seconds, uvarint nanoseconds (always UTC)
//	ntime     0x00 for null, or 0x01 then time
//	id        16 raw bytes
//	list      uvarint count, then the items
//
// Free-form metadata is kept as its compact JSON text (a str); everything
// else is structural, so reading a record never parses JSON.
//
// Curated record formats: 0x01 is the first; 0x02 adds, after each
// association's last_co_activation, one byte for its origin
// (memory.AssociationOrigin, 0 when unknown). Records are written in 0x02;
// a 0x01 record reads with every association's origin unknown, and is
// rewritten in 0x02 the next time it is written.
//
// Plaintext format bytes stay below 0x80. 0xE0-0xEF lead encryption
// envelopes (crypt.go; layout in the package comment): a stored value that
// starts with 0xE1 holds XChaCha20-Poly1305 ciphertext of one of these
// encodings, format byte included, and is opened before it is decoded.
// EncodeRecord and DecodeRecord themselves only ever see plaintext.
const (
	formatRecordV1 byte = 0x01 // MemoryRecord, first format
	formatRecordV2 byte = 0x02 // MemoryRecord with association origins
	formatRawV1    byte = 0x01 // RawJournalRecord
)

// ErrCorrupt is returned when a stored value cannot be decoded.
var ErrCorrupt = errors.New("store: corrupt value")

type wbuf struct{ b []byte }

func (w *wbuf) byte(c byte)      { w.b = append(w.b, c) }
func (w *wbuf) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *wbuf) varint(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *wbuf) f64(v float64)    { w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v)) }
func (w *wbuf) id(v memory.ID)   { w.b = append(w.b, v[:]...) }
func (w *wbuf) bytes(v []byte)   { w.uvarint(uint64(len(v))); w.b = append(w.b, v...) }
func (w *wbuf) str(v string)     { w.uvarint(uint64(len(v))); w.b = append(w.b, v...) }
func (w *wbuf) time(t time.Time) { w.varint(t.Unix()); w.uvarint(uint64(t.Nanosecond())) }
func (w *wbuf) bool(v bool)      { w.byte(boolByte(v)) }
func (w *wbuf) present(ok bool)  { w.byte(boolByte(ok)) }

// writeNullable writes a presence byte, then *v with write when present.
func writeNullable[T any](w *wbuf, v *T, write func(T)) {
	w.present(v != nil)
	if v != nil {
		write(*v)
	}
}

func (w *wbuf) nstr(v *string)     { writeNullable(w, v, w.str) }
func (w *wbuf) ntime(v *time.Time) { writeNullable(w, v, w.time) }
func (w *wbuf) nf64(v *float64)    { writeNullable(w, v, w.f64) }
func (w *wbuf) nid(v *memory.ID)   { writeNullable(w, v, w.id) }

func (w *wbuf) strs(v []string) {
	w.uvarint(uint64(len(v)))
	for _, s := range v {
		w.str(s)
	}
}

func (w *wbuf) ids(v []memory.ID) {
	w.uvarint(uint64(len(v)))
	for _, id := range v {
		w.id(id)
	}
}

// f32s writes nil as 0 and a vector of n values as n+1, then the values.
func (w *wbuf) f32s(v []float32) {
	if v == nil {
		w.uvarint(0)
		return
	}
	w.uvarint(uint64(len(v)) + 1)
	for _, x := range v {
		w.b = binary.LittleEndian.AppendUint32(w.b, math.Float32bits(x))
	}
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// rbuf reads what wbuf wrote. The first problem sticks: later reads return
// zero values and err reports what went wrong.
type rbuf struct {
	b   []byte
	err error
}

func (r *rbuf) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
	r.b = nil
}

// next consumes n bytes; when fewer remain it fails with what and
// returns nil.
func (r *rbuf) next(n int, what string) []byte {
	if n < 0 || len(r.b) < n {
		r.fail(what)
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *rbuf) byte() byte {
	if p := r.next(1, "short value"); p != nil {
		return p[0]
	}
	return 0
}

// varint64 reads a uvarint (signed false) or a varint (signed true) as the
// bits of an int64.
func (r *rbuf) varint64(signed bool) uint64 {
	var v uint64
	var n int
	if signed {
		var sv int64
		sv, n = binary.Varint(r.b)
		v = uint64(sv)
	} else {
		v, n = binary.Uvarint(r.b)
	}
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *rbuf) uvarint() uint64 { return r.varint64(false) }
func (r *rbuf) varint() int64   { return int64(r.varint64(true)) }

func (r *rbuf) u32() uint32 {
	v := r.uvarint()
	if v > math.MaxUint32 {
		r.fail("integer out of range")
		return 0
	}
	return uint32(v)
}

func (r *rbuf) f64() float64 {
	if p := r.next(8, "short float"); p != nil {
		return math.Float64frombits(binary.LittleEndian.Uint64(p))
	}
	return 0
}

func (r *rbuf) id() memory.ID {
	var id memory.ID
	copy(id[:], r.next(16, "short id"))
	return id
}

// n reads a length and checks that at least min*length bytes remain, so a
// corrupt length cannot make the decoder allocate wildly.
func (r *rbuf) n(min int) int {
	v := r.uvarint()
	if v > uint64(len(r.b)) || (min > 0 && v*uint64(min) > uint64(len(r.b))) {
		r.fail("length exceeds value")
		return 0
	}
	return int(v)
}

func (r *rbuf) bytes() []byte {
	n := r.n(1)
	if r.err != nil {
		return nil
	}
	v := make([]byte, n)
	copy(v, r.next(n, "short bytes"))
	return v
}

func (r *rbuf) str() string {
	n := r.n(1)
	if r.err != nil {
		return ""
	}
	return string(r.next(n, "short string"))
}

func (r *rbuf) bool() bool {
	switch r.byte() {
	case 0:
		return false
	case 1:
		return true
	default:
		r.fail("bad bool")
		return false
	}
}

func (r *rbuf) time() time.Time {
	sec := r.varint()
	nsec := r.uvarint()
	if nsec >= 1e9 {
		r.fail("bad nanoseconds")
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// nullable reads a presence byte, then the value with read when present.
func nullable[T any](r *rbuf, read func() T) *T {
	if !r.bool() {
		return nil
	}
	v := read()
	return &v
}

func (r *rbuf) nstr() *string     { return nullable(r, r.str) }
func (r *rbuf) ntime() *time.Time { return nullable(r, r.time) }
func (r *rbuf) nf64() *float64    { return nullable(r, r.f64) }
func (r *rbuf) nid() *memory.ID   { return nullable(r, r.id) }

// list reads a count of elements that take at least min bytes each, then
// each element with read; a count of 0 (or an error) reads as nil.
func list[T any](r *rbuf, min int, read func(*T)) []T {
	n := r.n(min)
	if n == 0 {
		return nil
	}
	v := make([]T, n)
	for i := range v {
		read(&v[i])
	}
	return v
}

func (r *rbuf) strs() []string   { return list(r, 1, func(s *string) { *s = r.str() }) }
func (r *rbuf) ids() []memory.ID { return list(r, 16, func(id *memory.ID) { *id = r.id() }) }

func (r *rbuf) f32s() []float32 {
	n := r.uvarint()
	if n == 0 || r.err != nil {
		return nil
	}
	n--
	if n > uint64(len(r.b))/4 { // not n*4: a corrupt count can overflow it
		r.fail("short embedding")
		return nil
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(r.b[4*i:]))
	}
	r.b = r.b[4*n:]
	return v
}

func (r *rbuf) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	return r.err
}

// EncodeRecord returns the stored form of a curated record.
func EncodeRecord(rec *memory.MemoryRecord) []byte { return encodeRecord(rec, formatRecordV2) }

// encodeRecord writes rec in format f (tests write the older format).
func encodeRecord(rec *memory.MemoryRecord, format byte) []byte {
	w := &wbuf{b: make([]byte, 0, 256+contentSize(&rec.Content))}
	encodeRecordHead(w, rec, format)
	encodeEmotion(w, &rec.Emotion)
	w.uvarint(uint64(len(rec.Associations)))
	for i := range rec.Associations {
		a := &rec.Associations[i]
		w.id(a.TargetID)
		w.byte(byte(a.AssociationType))
		w.f64(a.Weight)
		w.time(a.CreatedAt)
		w.time(a.LastCoActivation)
		if format >= formatRecordV2 {
			w.byte(byte(a.Origin))
		}
	}
	w.bytes(rec.Metadata)
	w.uvarint(uint64(rec.Version))
	encodeMeta(w, &rec.Meta)
	return w.b
}

// encodeRecordHead writes the part of rec before its emotion: the format
// byte, id, store, times, access count, content and fidelity.
func encodeRecordHead(w *wbuf, rec *memory.MemoryRecord, format byte) {
	w.byte(format)
	w.id(rec.ID)
	w.byte(byte(rec.Store))
	w.time(rec.CreatedAt)
	w.time(rec.UpdatedAt)
	w.time(rec.LastAccessedAt)
	w.uvarint(uint64(rec.AccessCount))
	encodeContent(w, &rec.Content)
	f := &rec.Fidelity
	w.f64(f.Score)
	w.f64(f.NoiseLevel)
	w.f64(f.DecayRate)
	w.f64(f.EmotionalAnchor)
	w.uvarint(uint64(f.ReinforcementCount))
	w.f64(f.Stability)
	w.time(f.LastDecayTick)
	w.f64(f.ClockBase)
}

// DecodeRecord parses what EncodeRecord wrote.
func DecodeRecord(b []byte) (*memory.MemoryRecord, error) {
	r := &rbuf{b: b}
	format := r.byte()
	if r.err == nil && format != formatRecordV1 && format != formatRecordV2 {
		return nil, fmt.Errorf("%w: unknown record format %#x", ErrCorrupt, format)
	}
	rec := &memory.MemoryRecord{}
	rec.ID = r.id()
	rec.Store = memory.StoreType(r.byte())
	rec.CreatedAt = r.time()
	rec.UpdatedAt = r.time()
	rec.LastAccessedAt = r.time()
	rec.AccessCount = r.u32()
	decodeContent(r, &rec.Content)
	f := &rec.Fidelity
	f.Score = r.f64()
	f.NoiseLevel = r.f64()
	f.DecayRate = r.f64()
	f.EmotionalAnchor = r.f64()
	f.ReinforcementCount = r.u32()
	f.Stability = r.f64()
	f.LastDecayTick = r.time()
	f.ClockBase = r.f64()
	decodeEmotion(r, &rec.Emotion)
	rec.Associations = list(r, 1, func(a *memory.Association) {
		a.TargetID = r.id()
		a.AssociationType = memory.AssociationType(r.byte())
		a.Weight = r.f64()
		a.CreatedAt = r.time()
		a.LastCoActivation = r.time()
		if format >= formatRecordV2 {
			if a.Origin = memory.AssociationOrigin(r.byte()); a.Origin != 0 && !a.Origin.Valid() {
				r.fail("unknown association origin")
			}
		}
	})
	if md := r.bytes(); len(md) > 0 {
		rec.Metadata = md
	}
	rec.Version = r.u32()
	decodeMeta(r, &rec.Meta)
	if err := r.done(); err != nil {
		return nil, err
	}
	return rec, nil
}

// EncodeRaw returns the stored form of a raw journal entry.
func EncodeRaw(rec *memory.RawJournalRecord) []byte {
	w := &wbuf{b: make([]byte, 0, 192+len(rec.SessionID)+contentSize(&rec.Content))}
	w.byte(formatRawV1)
	w.id(rec.ID)
	w.str(rec.SessionID)
	w.nstr(rec.TurnID)
	w.nstr(rec.TopicID)
	w.byte(byte(rec.Source))
	w.byte(byte(rec.Speaker))
	w.byte(byte(rec.Visibility))
	w.byte(byte(rec.SecrecyLevel))
	w.time(rec.CreatedAt)
	w.time(rec.UpdatedAt)
	encodeContent(w, &rec.Content)
	w.bytes(rec.Metadata)
	w.ids(rec.DerivedMemoryIDs)
	w.bool(rec.Suppressed)
	encodeMeta(w, &rec.Meta)
	return w.b
}

// DecodeRaw parses what EncodeRaw wrote.
func DecodeRaw(b []byte) (*memory.RawJournalRecord, error) {
	r := &rbuf{b: b}
	if f := r.byte(); r.err == nil && f != formatRawV1 {
		return nil, fmt.Errorf("%w: unknown raw record format %#x", ErrCorrupt, f)
	}
	rec := &memory.RawJournalRecord{}
	rec.ID = r.id()
	rec.SessionID = r.str()
	rec.TurnID = r.nstr()
	rec.TopicID = r.nstr()
	rec.Source = memory.RawSource(r.byte())
	rec.Speaker = memory.RawSpeaker(r.byte())
	rec.Visibility = memory.Visibility(r.byte())
	rec.SecrecyLevel = memory.SecrecyLevel(r.byte())
	rec.CreatedAt = r.time()
	rec.UpdatedAt = r.time()
	decodeContent(r, &rec.Content)
	if md := r.bytes(); len(md) > 0 {
		rec.Metadata = md
	}
	rec.DerivedMemoryIDs = r.ids()
	rec.Suppressed = r.bool()
	decodeMeta(r, &rec.Meta)
	if err := r.done(); err != nil {
		return nil, err
	}
	return rec, nil
}

func contentSize(c *memory.MemoryContent) int {
	n := 0
	for i := range c.Blocks {
		n += len(c.Blocks[i].Data) + 4*len(c.Blocks[i].Embedding) + 32
	}
	return n
}

func encodeContent(w *wbuf, c *memory.MemoryContent) {
	w.nstr(c.Summary)
	w.uvarint(uint64(len(c.Blocks)))
	for i := range c.Blocks {
		b := &c.Blocks[i]
		w.byte(byte(b.Modality))
		w.str(b.Format)
		w.bytes(b.Data)
		w.f32s(b.Embedding)
	}
}

func decodeContent(r *rbuf, c *memory.MemoryContent) {
	c.Summary = r.nstr()
	c.Blocks = list(r, 3, func(b *memory.ContentBlock) {
		b.Modality = memory.Modality(r.byte())
		b.Format = r.str()
		b.Data = r.bytes()
		b.Embedding = r.f32s()
	})
}

// encodeEmotion writes a bit mask of the non-zero components, then those
// components: most records carry no emotion and cost two bytes.
func encodeEmotion(w *wbuf, e *memory.EmotionVector) {
	v := emotionValues(e)
	var mask uint64
	for i, x := range v {
		if x != 0 {
			mask |= 1 << i
		}
	}
	w.uvarint(mask)
	for i, x := range v {
		if mask&(1<<i) != 0 {
			w.f64(x)
		}
	}
}

func decodeEmotion(r *rbuf, e *memory.EmotionVector) {
	mask := r.uvarint()
	if mask >= 1<<10 {
		r.fail("bad emotion mask")
		return
	}
	var v [10]float64
	for i := range v {
		if mask&(1<<i) != 0 {
			v[i] = r.f64()
		}
	}
	*e = memory.EmotionVector{Joy: v[0], Trust: v[1], Fear: v[2], Surprise: v[3], Sadness: v[4], Disgust: v[5], Anger: v[6], Anticipation: v[7], Intensity: v[8], Valence: v[9]}
}

func emotionValues(e *memory.EmotionVector) [10]float64 {
	return [10]float64{e.Joy, e.Trust, e.Fear, e.Surprise, e.Sadness, e.Disgust, e.Anger, e.Anticipation, e.Intensity, e.Valence}
}

func encodeEvidence(w *wbuf, ev []memory.MetaEvidenceRef) {
	w.uvarint(uint64(len(ev)))
	for i := range ev {
		e := &ev[i]
		w.nid(e.RecordID)
		w.nid(e.RawRecordID)
		w.nstr(e.Label)
		w.nstr(e.Excerpt)
		w.nstr(e.URI)
		w.nf64(e.Confidence)
	}
}

func decodeEvidence(r *rbuf) []memory.MetaEvidenceRef {
	return list(r, 6, func(e *memory.MetaEvidenceRef) {
		e.RecordID = r.nid()
		e.RawRecordID = r.nid()
		e.Label = r.nstr()
		e.Excerpt = r.nstr()
		e.URI = r.nstr()
		e.Confidence = r.nf64()
	})
}

func encodeMeta(w *wbuf, m *memory.MetaMemory) {
	w.uvarint(uint64(m.SchemaVersion))
	w.byte(byte(m.CaptureStatus))
	w.nstr(m.Intent)
	w.nstr(m.Rationale)
	w.nstr(m.Trigger)
	w.strs(m.Goals)
	encodeEvidence(w, m.Evidence)
	w.strs(m.Assumptions)
	w.uvarint(uint64(len(m.Alternatives)))
	for i := range m.Alternatives {
		a := &m.Alternatives[i]
		w.str(a.Option)
		w.nstr(a.Reason)
		w.bool(a.Chosen)
	}
	w.nstr(m.Decision)
	w.nf64(m.Confidence)
	w.ids(m.SourceRecordIDs)
	w.ids(m.ParentMetaIDs)
	w.uvarint(uint64(len(m.ContextEdges)))
	for i := range m.ContextEdges {
		e := &m.ContextEdges[i]
		w.nid(e.SourceID)
		w.id(e.TargetID)
		w.byte(byte(e.Relation))
		w.nstr(e.Rationale)
		encodeEvidence(w, e.Evidence)
		w.nf64(e.Confidence)
		w.ntime(e.CreatedAt)
	}
	w.strs(m.Tags)
	w.ntime(m.CapturedAt)
}

func decodeMeta(r *rbuf, m *memory.MetaMemory) {
	m.SchemaVersion = r.u32()
	m.CaptureStatus = memory.MetaCaptureStatus(r.byte())
	m.Intent = r.nstr()
	m.Rationale = r.nstr()
	m.Trigger = r.nstr()
	m.Goals = r.strs()
	m.Evidence = decodeEvidence(r)
	m.Assumptions = r.strs()
	m.Alternatives = list(r, 3, func(a *memory.MetaAlternative) {
		a.Option = r.str()
		a.Reason = r.nstr()
		a.Chosen = r.bool()
	})
	m.Decision = r.nstr()
	m.Confidence = r.nf64()
	m.SourceRecordIDs = r.ids()
	m.ParentMetaIDs = r.ids()
	m.ContextEdges = list(r, 22, func(e *memory.MetaEdge) {
		e.SourceID = r.nid()
		e.TargetID = r.id()
		e.Relation = memory.MetaRelation(r.byte())
		e.Rationale = r.nstr()
		e.Evidence = decodeEvidence(r)
		e.Confidence = r.nf64()
		e.CreatedAt = r.ntime()
	})
	m.Tags = r.strs()
	m.CapturedAt = r.ntime()
}
