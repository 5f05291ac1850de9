package memory

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"memsvc.dev/memsvc/internal/jsonscan"
)

// BinaryForm is how a JSON text writes binary values: content bytes,
// image and audio cues, archives and embeddings.
//
// The CMP form, BinaryArrays, is the default of every answer and what
// upstream clients expect: bytes as arrays of integers 0-255 and
// embeddings as arrays of numbers. A recall answer of ten text records is
// then mostly digits and commas, about four bytes per content byte and
// ten per embedding value, written twice (record and rendered content).
// BinaryBase64 is memsvc's compact form, which its own client asks for:
// bytes as one standard padded base64 string, an embedding as one such
// string of its values as little-endian IEEE-754 binary32.
//
// Input needs no form: every decoder of this package reads either.
type BinaryForm uint8

// The values of BinaryForm.
const (
	BinaryArrays BinaryForm = iota
	BinaryBase64
)

// appendBinaryBytes appends b in form f: an integer array ([] when
// empty) or a quoted base64 string ("" when empty).
func appendBinaryBytes(dst, b []byte, f BinaryForm) []byte {
	if f != BinaryBase64 {
		return appendJSONBytes(dst, b)
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendBinaryFloat32s appends v in form f: null when nil, else a number
// array or a quoted base64 string of its little-endian binary32 values.
// A NaN or an infinity is an error in either form.
func appendBinaryFloat32s(dst []byte, v []float32, f BinaryForm) ([]byte, error) {
	if f != BinaryBase64 || v == nil {
		return appendJSONFloat32s(dst, v)
	}
	n := len(dst)
	// The raw values go just past the room the text needs, in the same
	// allocation, and are encoded into that room.
	enc := base64.StdEncoding.EncodedLen(4 * len(v))
	dst = slices.Grow(dst, 2+enc+4*len(v))
	buf := dst[:n+2+enc+4*len(v)]
	raw := buf[n+2+enc:]
	for i, x := range v {
		bits := math.Float32bits(x)
		if !finite32(bits) {
			return dst, errUnsupportedFloat
		}
		binary.LittleEndian.PutUint32(raw[4*i:], bits)
	}
	buf[n] = '"'
	base64.StdEncoding.Encode(buf[n+1:], raw)
	buf[n+1+enc] = '"'
	return buf[:n+2+enc], nil
}

// wantEmbeddingString is what an embedding given as a string must be.
const wantEmbeddingString = "want an array of numbers or a standard base64 string of little-endian float32 values"

// decodeBase64 decodes s, standard padded base64 first (what memsvc
// writes), then unpadded and the URL alphabet, padded or not. The result
// is never nil.
func decodeBase64(s []byte) ([]byte, bool) {
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(s))) // the longest of the four
	for _, enc := range [...]*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if n, err := enc.Decode(out, s); err == nil {
			return out[:n], true
		}
	}
	return nil, false
}

// decodeFloat32s reads the values of an embedding given as a base64
// string (its text without quotes): a whole number of little-endian
// binary32 values, all finite. field names the value in errors. The
// result is never nil: "" is an empty embedding, as [] is.
func decodeFloat32s(field string, s []byte) ([]float32, error) {
	raw, ok := decodeBase64(s)
	if !ok {
		return nil, Invalid(field, "string %s is not base64; %s", Quote(string(s)), wantEmbeddingString)
	}
	if len(raw)%4 != 0 {
		return nil, Invalid(field, "base64 string holds %d bytes, not a whole number of 4-byte float32 values; %s", len(raw), wantEmbeddingString)
	}
	v := make([]float32, len(raw)/4)
	for i := range v {
		bits := binary.LittleEndian.Uint32(raw[4*i:])
		if !finite32(bits) {
			return nil, Invalid(fmt.Sprintf("%s[%d]", field, i), "must be a finite number (got %v)", math.Float32frombits(bits))
		}
		v[i] = math.Float32frombits(bits)
	}
	return v, nil
}

// finite32 reports whether the binary32 value of bits is neither NaN nor
// an infinity: its exponent is not all ones.
func finite32(bits uint32) bool { return bits&0x7f800000 != 0x7f800000 }

// embeddingJSON is an embedding as the fallback decoders read it: null,
// an array of numbers (as encoding/json reads []float32, errors
// included), or a base64 string of BinaryBase64.
type embeddingJSON []float32

// UnmarshalJSON reads either form.
func (e *embeddingJSON) UnmarshalJSON(data []byte) error {
	d := recallDecoder{Scanner: jsonscan.Scanner{Data: data}}
	var v []float32
	if d.embedding(&v) && d.End() {
		*e = v
		return nil
	}
	d.Pos = 0
	if d.Peek() != '"' {
		if err := json.Unmarshal(data, &v); err != nil {
			return err
		}
		*e = v
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	v, err := decodeFloat32s("embedding", []byte(s))
	if err != nil {
		return err
	}
	*e = v
	return nil
}

// UnmarshalJSON reads a block as encoding/json reads its fields, with the
// data and the embedding in either BinaryForm. The common shape (the four
// keys, spelled so, once each) is read in one pass; anything else goes
// through encoding/json, whose results and errors then stand.
func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	d := recallDecoder{Scanner: jsonscan.Scanner{Data: data}}
	out := *b
	if d.block(&out) && d.End() {
		*b = out
		return nil
	}
	t := struct {
		Modality  Modality      `json:"modality"`
		Format    string        `json:"format"`
		Data      Bytes         `json:"data"`
		Embedding embeddingJSON `json:"embedding"`
	}{b.Modality, b.Format, b.Data, b.Embedding}
	if err := json.Unmarshal(data, &t); err != nil {
		return err
	}
	*b = ContentBlock{Modality: t.Modality, Format: t.Format, Data: t.Data, Embedding: t.Embedding}
	return nil
}

// UnmarshalJSON reads a cue as encoding/json reads its fields, with the
// image, the audio and the embedding in either BinaryForm: in one pass
// when the keys are spelled as memsvc writes them, else through
// encoding/json, whose results and errors then stand.
func (c *RecallCue) UnmarshalJSON(data []byte) error {
	d := recallDecoder{Scanner: jsonscan.Scanner{Data: data}}
	out := *c
	if d.cue(&out) && d.End() {
		*c = out
		return nil
	}
	// The fields one by one, not an embedded twin of RecallCue: the
	// twin's name would join the field paths of encoding/json's errors.
	t := cueJSON[Bytes, embeddingJSON]{c.Text, c.Image, c.Audio, c.Emotion, c.Temporal, c.Spatial, c.Semantic, c.Embedding}
	if err := json.Unmarshal(data, &t); err != nil {
		return err
	}
	*c = RecallCue{t.Text, t.Image, t.Audio, t.Emotion, t.Temporal, t.Spatial, t.Semantic, t.Embedding}
	return nil
}

// contentForm writes content with its binary values in a BinaryForm.
type contentForm struct {
	c *MemoryContent
	f BinaryForm
	// nilBlocks writes a nil block list as null, as encoding/json writes
	// the content of a request; answers write [].
	nilBlocks bool
}

// MarshalJSON writes the content as appendContentJSON does.
func (c contentForm) MarshalJSON() ([]byte, error) {
	if c.nilBlocks && c.c.Blocks == nil {
		b, err := appendContentJSON(nil, c.c, nil, c.f)
		if err != nil {
			return nil, err
		}
		const empty, null = `{"blocks":[]`, `{"blocks":null`
		return append([]byte(null), b[len(empty):]...), nil
	}
	return appendContentJSON(make([]byte, 0, contentSizeHint(c.c)), c.c, nil, c.f)
}

// AppendJSONForm appends r as MarshalJSON writes it, with the entries'
// content data and embeddings in form f, to dst; on an error dst's
// contents are undefined.
func (r *RecallRawQueryResponse) AppendJSONForm(dst []byte, f BinaryForm) ([]byte, error) {
	if f != BinaryBase64 {
		b, err := json.Marshal(r)
		return append(dst, b...), err
	}
	type plain RawJournalRecord
	type entry struct {
		*plain
		Content          contentForm `json:"content"`
		DerivedMemoryIDs []ID        `json:"derived_memory_ids"`
	}
	recs := make([]entry, len(r.Records))
	for i := range r.Records {
		rec := &r.Records[i]
		recs[i] = entry{(*plain)(rec), contentForm{c: &rec.Content, f: f}, orEmpty(rec.DerivedMemoryIDs)}
	}
	b, err := json.Marshal(struct {
		Records         []entry `json:"records"`
		TotalCandidates uint32  `json:"total_candidates"`
	}{recs, r.TotalCandidates})
	return append(dst, b...), err
}

// cue parses a recall cue over *c, as json.Unmarshal decodes one.
func (d *recallDecoder) cue(c *RecallCue) bool {
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "text":
			return d.optStr(&c.Text)
		case "image":
			return d.bytes(&c.Image)
		case "audio":
			return d.bytes(&c.Audio)
		case "emotion":
			if d.Null() {
				c.Emotion = nil
				return true
			}
			// Into a copy of what c points at, as encoding/json decodes
			// into it: c keeps its values if the parse is abandoned.
			e := EmotionVector{}
			if c.Emotion != nil {
				e = *c.Emotion
			}
			c.Emotion = &e
			return ScanEmotionJSON(&d.Scanner, c.Emotion)
		case "temporal":
			if c.Temporal != nil {
				t := *c.Temporal
				c.Temporal = &t
			}
			return d.delegate(&c.Temporal)
		case "spatial":
			c.Spatial = nil // decoded afresh, not into c's array
			return d.delegate(&c.Spatial)
		case "semantic":
			c.Semantic = nil
			return d.delegate(&c.Semantic)
		case "embedding":
			return d.embedding(&c.Embedding)
		}
		return false
	})
}
