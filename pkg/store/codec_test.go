package store

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

func TestRecordCodecRoundTrip(t *testing.T) {
	withTimes := fullRecord()
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	withTimes.CreatedAt = withTimes.CreatedAt.In(zone)
	withTimes.UpdatedAt = time.Now() // carries a monotonic reading

	nilVsEmpty := minimalRecord()
	nilVsEmpty.Content.Summary = ptr("")
	nilVsEmpty.Content.Blocks[0].Embedding = []float32{}
	nilVsEmpty.Meta.Rationale = ptr("")
	nilVsEmpty.Meta.Confidence = ptr(0.0)

	negZero := minimalRecord()
	negZero.Emotion.Valence = math.Copysign(0, -1)
	negZero.Fidelity.Score = math.Copysign(0, -1)

	tests := []struct {
		name string
		rec  *memory.MemoryRecord
	}{
		{"full", fullRecord()},
		{"minimal", minimalRecord()},
		{"nil vs empty", nilVsEmpty},
		{"non-UTC and monotonic times", withTimes},
		{"negative zero", negZero},
		{"realistic", realisticRecord(7, idC)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			enc := EncodeRecord(tc.rec)
			if len(enc) == 0 || enc[0] != formatRecordV2 {
				t.Fatalf("encoding does not start with the format byte: % x", enc[:min(len(enc), 4)])
			}
			got, err := DecodeRecord(enc)
			if err != nil {
				t.Fatalf("DecodeRecord: %v", err)
			}
			want := normaliseRecord(tc.rec)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip differs:\n got %+v\nwant %+v", got, want)
			}
			// Decoded times are UTC.
			if got.CreatedAt.Location() != time.UTC || got.UpdatedAt.Location() != time.UTC {
				t.Errorf("decoded times are not UTC: %v %v", got.CreatedAt.Location(), got.UpdatedAt.Location())
			}
			// Encoding is deterministic.
			if again := EncodeRecord(got); !bytes.Equal(again, enc) {
				t.Errorf("re-encoding differs")
			}
			// The decoder does not keep a reference to its input.
			for i := range enc {
				enc[i] = 0xee
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded record changed when the input buffer was overwritten")
			}
		})
	}

	// The distinctions that show on the wire survive.
	got, err := DecodeRecord(EncodeRecord(nilVsEmpty))
	if err != nil {
		t.Fatal(err)
	}
	if got.Content.Summary == nil || *got.Content.Summary != "" {
		t.Error("empty summary became null")
	}
	if got.Content.Blocks[0].Embedding == nil {
		t.Error("empty embedding became null")
	}
	got, err = DecodeRecord(EncodeRecord(minimalRecord()))
	if err != nil {
		t.Fatal(err)
	}
	if got.Content.Summary != nil || got.Content.Blocks[0].Embedding != nil || got.Meta.Rationale != nil || got.Meta.CapturedAt != nil {
		t.Error("null fields decoded as present")
	}
	if math.Signbit(must(DecodeRecord(EncodeRecord(negZero))).Fidelity.Score) != true {
		t.Error("negative zero score lost its sign")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// normaliseRecord is what a decoded record is expected to look like: times
// in UTC without monotonic readings. Nothing else may change.
func normaliseRecord(r *memory.MemoryRecord) *memory.MemoryRecord {
	c := *r
	c.CreatedAt, c.UpdatedAt, c.LastAccessedAt = utc(c.CreatedAt), utc(c.UpdatedAt), utc(c.LastAccessedAt)
	c.Fidelity.LastDecayTick = utc(c.Fidelity.LastDecayTick)
	c.Associations = append([]memory.Association(nil), r.Associations...)
	for i := range c.Associations {
		c.Associations[i].CreatedAt = utc(c.Associations[i].CreatedAt)
		c.Associations[i].LastCoActivation = utc(c.Associations[i].LastCoActivation)
	}
	c.Meta = normaliseMeta(c.Meta)
	return &c
}

func normaliseRaw(r *memory.RawJournalRecord) *memory.RawJournalRecord {
	c := *r
	c.CreatedAt, c.UpdatedAt = utc(c.CreatedAt), utc(c.UpdatedAt)
	c.Meta = normaliseMeta(c.Meta)
	return &c
}

func normaliseMeta(m memory.MetaMemory) memory.MetaMemory {
	if m.CapturedAt != nil {
		m.CapturedAt = ptr(utc(*m.CapturedAt))
	}
	m.ContextEdges = append([]memory.MetaEdge(nil), m.ContextEdges...)
	for i := range m.ContextEdges {
		if e := &m.ContextEdges[i]; e.CreatedAt != nil {
			e.CreatedAt = ptr(utc(*e.CreatedAt))
		}
	}
	if len(m.ContextEdges) == 0 {
		m.ContextEdges = nil
	}
	return m
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

func TestRawCodecRoundTrip(t *testing.T) {
	nonUTC := fullRaw()
	nonUTC.CreatedAt = nonUTC.CreatedAt.In(time.FixedZone("W", -7*3600))
	for _, tc := range []struct {
		name string
		rec  *memory.RawJournalRecord
	}{
		{"full", fullRaw()},
		{"minimal", minimalRaw()},
		{"non-UTC", nonUTC},
		{"realistic", realisticRaw(11, idB)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := EncodeRaw(tc.rec)
			if enc[0] != formatRawV1 {
				t.Fatalf("format byte %#x", enc[0])
			}
			got, err := DecodeRaw(enc)
			if err != nil {
				t.Fatalf("DecodeRaw: %v", err)
			}
			if want := normaliseRaw(tc.rec); !reflect.DeepEqual(got, want) {
				t.Errorf("round trip differs:\n got %+v\nwant %+v", got, want)
			}
			if !bytes.Equal(EncodeRaw(got), enc) {
				t.Error("re-encoding differs")
			}
		})
	}
	got := must(DecodeRaw(EncodeRaw(fullRaw())))
	if got.TurnID == nil || *got.TurnID != "" || got.Content.Summary == nil {
		t.Error("empty strings became null")
	}
	got = must(DecodeRaw(EncodeRaw(minimalRaw())))
	if got.TurnID != nil || got.TopicID != nil || got.Suppressed {
		t.Error("null fields decoded as present")
	}
}

// Every proper prefix of a valid encoding is corrupt, and so is a valid
// encoding with a byte appended.
func TestDecodeTruncated(t *testing.T) {
	check := func(t *testing.T, name string, enc []byte, decode func([]byte) error) {
		for i := range enc {
			err := decode(enc[:i:i])
			if err == nil {
				t.Fatalf("%s: prefix of %d/%d bytes decoded", name, i, len(enc))
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: prefix of %d bytes: error %v does not wrap ErrCorrupt", name, i, err)
			}
		}
		long := append(bytes.Clone(enc), 0)
		if err := decode(long); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: trailing byte: %v", name, err)
		}
	}
	decRec := func(b []byte) error { _, err := DecodeRecord(b); return err }
	decRaw := func(b []byte) error { _, err := DecodeRaw(b); return err }
	check(t, "full record", EncodeRecord(fullRecord()), decRec)
	check(t, "minimal record", EncodeRecord(minimalRecord()), decRec)
	check(t, "full raw", EncodeRaw(fullRaw()), decRaw)
	check(t, "minimal raw", EncodeRaw(minimalRaw()), decRaw)
}

// Hand-built corrupt values: wrong format byte, bad booleans, lengths that
// point past the end or overflow when multiplied, bad emotion masks.
func TestDecodeCorrupt(t *testing.T) {
	// rawHead is a raw entry's format byte, id and session id.
	rawHead := func() *wbuf {
		w := &wbuf{}
		w.byte(formatRawV1)
		w.id(idA)
		w.str("s")
		return w
	}
	// rawEnums is rawHead followed by absent turn and topic ids and the
	// four enumeration bytes.
	rawEnums := func() *wbuf {
		w := rawHead()
		w.nstr(nil)
		w.nstr(nil)
		w.b = append(w.b, 1, 1, 1, 1)
		return w
	}
	// rawPrefix is a raw entry up to (not including) the first block's
	// embedding.
	rawPrefix := func() *wbuf {
		w := rawEnums()
		w.time(tBase)
		w.time(tBase)
		w.nstr(nil)  // summary
		w.uvarint(1) // one block
		w.byte(1)    // text
		w.str("f")   // format
		w.bytes(nil) // data
		return w
	}
	tests := []struct {
		name   string
		value  func() []byte
		decode func([]byte) error
	}{
		{"empty record", func() []byte { return nil }, decRec},
		{"empty raw", func() []byte { return []byte{} }, decRaw},
		{"record format 3", func() []byte { b := EncodeRecord(minimalRecord()); b[0] = 3; return b }, decRec},
		{"association origin 4", func() []byte {
			r := minimalRecord()
			r.Associations = []memory.Association{{TargetID: idB, AssociationType: memory.AssocSemantic, Origin: 4}}
			return EncodeRecord(r)
		}, decRec},
		{"record format 0", func() []byte { b := EncodeRecord(minimalRecord()); b[0] = 0; return b }, decRec},
		{"raw format 0xff", func() []byte { b := EncodeRaw(minimalRaw()); b[0] = 0xff; return b }, decRaw},
		{"embedding count overflows", func() []byte {
			w := rawPrefix()
			w.uvarint(1<<62 + 1) // n-1 = 2^62 floats: n*4 wraps to 0
			w.b = append(w.b, make([]byte, 64)...)
			return w.b
		}, decRaw},
		{"embedding count max", func() []byte {
			w := rawPrefix()
			w.uvarint(math.MaxUint64)
			w.b = append(w.b, make([]byte, 64)...)
			return w.b
		}, decRaw},
		{"embedding count past end", func() []byte {
			w := rawPrefix()
			w.uvarint(100)
			w.b = append(w.b, make([]byte, 64)...)
			return w.b
		}, decRaw},
		{"block count past end", func() []byte {
			w := rawEnums()
			w.time(tBase)
			w.time(tBase)
			w.nstr(nil)
			w.uvarint(1 << 40)
			return w.b
		}, decRaw},
		{"bad null marker", func() []byte {
			w := rawHead()
			w.byte(2) // turn id presence must be 0 or 1
			return append(w.b, make([]byte, 80)...)
		}, decRaw},
		{"nanoseconds out of range", func() []byte {
			w := rawEnums()
			w.varint(0)
			w.uvarint(1e9)
			return append(w.b, make([]byte, 80)...)
		}, decRaw},
		{"uvarint overflow", func() []byte {
			w := &wbuf{}
			w.byte(formatRawV1)
			w.id(idA)
			w.b = append(w.b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)
			return w.b
		}, decRaw},
		{"access count above uint32", func() []byte {
			w := &wbuf{}
			w.byte(formatRecordV1)
			w.id(idA)
			w.byte(1)
			for range 3 { // created, updated, last accessed
				w.time(tBase)
			}
			w.uvarint(1 << 32)
			return append(w.b, make([]byte, 200)...)
		}, decRec},
		{"emotion mask", func() []byte {
			// A minimal record's emotion mask is the single byte 0x00
			// after the fidelity block; rebuild with a mask of 1<<10.
			w := &wbuf{}
			encodeRecordHead(w, minimalRecord(), formatRecordV1)
			w.uvarint(1 << 10)
			return append(w.b, make([]byte, 200)...)
		}, decRec},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("decoder panicked: %v", p)
					}
				}()
				err = tc.decode(tc.value())
			}()
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("error %v does not wrap ErrCorrupt", err)
			}
		})
	}
}

func decRec(b []byte) error { _, err := DecodeRecord(b); return err }
func decRaw(b []byte) error { _, err := DecodeRaw(b); return err }

func FuzzDecodeRecord(f *testing.F) {
	// Seeds stay small: the fuzzer minimises every new input, which is
	// slow on multi-kilobyte values.
	typical := realisticRecord(3, idA)
	typical.Content.Blocks[0].Data = typical.Content.Blocks[0].Data[:64]
	typical.Content.Blocks[0].Embedding = typical.Content.Blocks[0].Embedding[:8]
	for _, r := range []*memory.MemoryRecord{fullRecord(), minimalRecord(), typical} {
		f.Add(EncodeRecord(r))
	}
	f.Add([]byte{formatRecordV1})
	f.Add([]byte{formatRecordV2})
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, b, DecodeRecord, EncodeRecord) })
}

func FuzzDecodeRaw(f *testing.F) {
	for _, r := range []*memory.RawJournalRecord{fullRaw(), minimalRaw(), realisticRaw(5, idB)} {
		f.Add(EncodeRaw(r))
	}
	f.Add([]byte{formatRawV1})
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, b, DecodeRaw, EncodeRaw) })
}

// checkDecode is the property both decoders must have: an error wraps
// ErrCorrupt, and whatever decodes re-encodes to a value that decodes to
// the same thing (compared as bytes: NaNs are not equal to themselves).
func checkDecode[T any](t *testing.T, b []byte, decode func([]byte) (T, error), encode func(T) []byte) {
	rec, err := decode(b)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		return
	}
	enc := encode(rec)
	again, err := decode(enc)
	if err != nil {
		t.Fatalf("re-encoded value does not decode: %v", err)
	}
	if enc2 := encode(again); !bytes.Equal(enc, enc2) {
		t.Fatalf("encoding is not stable:\n% x\n% x", enc, enc2)
	}
}

// TestDecodeRecordV1: records written in the first format, before
// associations had an origin, still decode, with every origin unknown,
// and the current format differs from it by exactly the origin bytes.
func TestDecodeRecordV1(t *testing.T) {
	rec := fullRecord()
	v1 := encodeRecord(rec, formatRecordV1)
	if v1[0] != 0x01 {
		t.Fatalf("first format byte %#x", v1[0])
	}
	got, err := DecodeRecord(v1)
	if err != nil {
		t.Fatal(err)
	}
	want := normaliseRecord(rec)
	for i := range want.Associations {
		want.Associations[i].Origin = 0
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("format 1 decodes as\n %+v\nwant %+v", got, want)
	}
	if v2 := EncodeRecord(rec); v2[0] != 0x02 || len(v2)-len(v1) != len(rec.Associations) {
		t.Errorf("format 2 is %d bytes, format 1 %d, with %d associations", len(v2), len(v1), len(rec.Associations))
	}
}
