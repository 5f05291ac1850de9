package memory

import "encoding/json"

// Base64Request returns what a client marshals, with json.Marshal, to
// send req with its binary values in BinaryBase64: content data, image
// and audio cues and archives as base64 strings, embeddings as base64
// strings of little-endian float32 values. Every other field is written
// as req writes it. Requests without binary values are returned as they
// are. memsvc servers read both forms; upstream servers may not read
// embeddings as strings.
func Base64Request(req any) any {
	switch r := req.(type) {
	case *EncodeStoreRequest:
		return storeRequestBase64(r)
	case *EncodeBatchRequest:
		type plain EncodeBatchRequest
		return struct {
			*plain
			Records []storeBase64 `json:"records"`
		}{(*plain)(r), base64Each(r.Records, storeRequestBase64)}
	case *EncodeStoreRawRequest:
		return rawRequestBase64(r)
	case *EncodeBatchStoreRawRequest:
		type plain EncodeBatchStoreRawRequest
		return struct {
			*plain
			Records []rawBase64 `json:"records"`
		}{(*plain)(r), base64Each(r.Records, rawRequestBase64)}
	case *EncodeUpdateRequest:
		var c *contentForm
		if r.Content != nil {
			c = &contentForm{r.Content, BinaryBase64, true}
		}
		return updateJSON[*contentForm]{r.Header, r.RecordID, c, r.Emotion, json.RawMessage(r.Metadata), r.Meta}
	case *RecallQueryRequest:
		type plain RecallQueryRequest
		return struct {
			*plain
			Cue cueBase64 `json:"cue"`
		}{(*plain)(r), cueBase64{&r.Cue}}
	case *ImportRequest:
		// encoding/json writes []byte in base64 (nil is null).
		return importJSON[[]byte]{r.Header, r.ArchiveID, r.Strategy, r.ConflictResolution, r.DecryptionKey, r.ArchiveData, r.PreserveNamespaces}
	}
	return req
}

// base64Each returns form of each request of reqs, and nil for nil, so
// that a missing list is written as null as the original is.
func base64Each[T, U any](reqs []T, form func(*T) U) []U {
	if reqs == nil {
		return nil
	}
	out := make([]U, len(reqs))
	for i := range reqs {
		out[i] = form(&reqs[i])
	}
	return out
}

type plainStore EncodeStoreRequest

// storeBase64 writes an EncodeStoreRequest with its content in
// BinaryBase64.
type storeBase64 struct {
	*plainStore
	Content contentForm `json:"content"`
}

func storeRequestBase64(r *EncodeStoreRequest) storeBase64 {
	return storeBase64{(*plainStore)(r), contentForm{&r.Content, BinaryBase64, true}}
}

type plainRaw EncodeStoreRawRequest

// rawBase64 writes an EncodeStoreRawRequest with its content in
// BinaryBase64.
type rawBase64 struct {
	*plainRaw
	Content contentForm `json:"content"`
}

func rawRequestBase64(r *EncodeStoreRawRequest) rawBase64 {
	return rawBase64{(*plainRaw)(r), contentForm{&r.Content, BinaryBase64, true}}
}

// cueBase64 writes a cue as RecallCue.MarshalJSON does, with its image,
// audio and embedding in BinaryBase64.
type cueBase64 struct{ c *RecallCue }

// MarshalJSON writes the cue.
func (c cueBase64) MarshalJSON() ([]byte, error) {
	return json.Marshal(cueJSON[[]byte, float32sBase64]{c.c.Text, c.c.Image, c.c.Audio, c.c.Emotion, c.c.Temporal, c.c.Spatial, c.c.Semantic, float32sBase64(c.c.Embedding)})
}

// float32sBase64 writes an embedding in BinaryBase64 (nil is null).
type float32sBase64 []float32

// MarshalJSON writes the embedding.
func (v float32sBase64) MarshalJSON() ([]byte, error) {
	return appendBinaryFloat32s(nil, v, BinaryBase64)
}

// The shapes in which requests that hold binary values are written and
// read, with B the type of their bytes and E of their embeddings in the
// form at hand: one field list for MarshalJSON (the CMP arrays), for
// Base64Request, and for the fallback of RecallCue.UnmarshalJSON.

// updateJSON is an EncodeUpdateRequest with a nil metadata written as
// null ("leave it unchanged"), its content C.
type updateJSON[C any] struct {
	Header   *CMPHeader      `json:"header"`
	RecordID ID              `json:"record_id"`
	Content  C               `json:"content"`
	Emotion  *EmotionVector  `json:"emotion"`
	Metadata json.RawMessage `json:"metadata"`
	Meta     *MetaMemory     `json:"meta"`
}

// cueJSON is a RecallCue.
type cueJSON[B, E any] struct {
	Text      *string         `json:"text"`
	Image     B               `json:"image"`
	Audio     B               `json:"audio"`
	Emotion   *EmotionVector  `json:"emotion"`
	Temporal  *TemporalRange  `json:"temporal"`
	Spatial   json.RawMessage `json:"spatial"`
	Semantic  json.RawMessage `json:"semantic"`
	Embedding E               `json:"embedding"`
}

// importJSON is an ImportRequest.
type importJSON[B any] struct {
	Header             *CMPHeader         `json:"header"`
	ArchiveID          string             `json:"archive_id"`
	Strategy           ImportStrategy     `json:"strategy"`
	ConflictResolution ConflictResolution `json:"conflict_resolution"`
	DecryptionKey      *string            `json:"decryption_key"`
	ArchiveData        B                  `json:"archive_data"`
	PreserveNamespaces bool               `json:"preserve_namespaces,omitempty"`
}
