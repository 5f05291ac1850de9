package memory

import "time"

// Hand-written encoders of the records and their content. A recall answer
// is mostly record content: text as integer arrays and embeddings as
// float arrays. Through encoding/json every record went through reflection
// and every Bytes value through a MarshalJSON whose output was scanned
// again; these write the same bytes directly (recordjson_test.go compares
// them with encoding/json on random records). The meta-memory has its own
// in metajson.go.

// appendRecordJSON appends r as MemoryRecord.MarshalJSON writes it, with
// its binary values in form f.
func appendRecordJSON(dst []byte, r *MemoryRecord, f BinaryForm) ([]byte, error) {
	dst, _, err := appendRecordContentAt(dst, r, nil, f)
	return dst, err
}

// appendRecordContentAt is appendRecordJSON that also returns where r's
// content is in the output, dst[at[0]:at[1]]; texts, when not nil, notes
// where its embeddings were written (float32json.go). Binary values are
// written in form f.
func appendRecordContentAt(dst []byte, r *MemoryRecord, texts *embeddingTexts, f BinaryForm) (_ []byte, at [2]int, err error) {
	dst, err = appendRecordHead(dst, r)
	if err != nil {
		return dst, at, err
	}
	dst = append(dst, `,"content":`...)
	at[0] = len(dst)
	if dst, err = appendContentJSON(dst, &r.Content, texts, f); err != nil {
		return dst, at, err
	}
	at[1] = len(dst)
	dst, err = appendRecordTail(dst, r)
	return dst, at, err
}

// appendRecordHead appends r's fields before its content, the opening
// brace included.
func appendRecordHead(dst []byte, r *MemoryRecord) ([]byte, error) {
	var err error
	dst = append(dst, `{"id":`...)
	dst = appendJSONID(dst, r.ID)
	dst = append(dst, `,"store":`...)
	if dst, err = appendJSONEnum(dst, storeNames, uint8(r.Store)); err != nil {
		return dst, err
	}
	for _, f := range [...]struct {
		key string
		t   time.Time
	}{{`,"created_at":`, r.CreatedAt}, {`,"updated_at":`, r.UpdatedAt}, {`,"last_accessed_at":`, r.LastAccessedAt}} {
		dst = append(dst, f.key...)
		if dst, err = appendJSONTime(dst, f.t); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `,"access_count":`...)
	return appendJSONUint(dst, r.AccessCount), nil
}

// appendRecordTail appends r's fields after its content, the closing
// brace included.
func appendRecordTail(dst []byte, r *MemoryRecord) ([]byte, error) {
	var err error
	dst = append(dst, `,"fidelity":`...)
	if dst, err = appendFidelityJSON(dst, &r.Fidelity); err != nil {
		return dst, err
	}
	dst = append(dst, `,"emotion":`...)
	if dst, err = appendEmotionJSON(dst, &r.Emotion); err != nil {
		return dst, err
	}
	dst = append(dst, `,"associations":[`...)
	for i := range r.Associations {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendAssociationJSON(dst, &r.Associations[i]); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `],"metadata":`...)
	if dst, err = appendJSONRaw(dst, r.Metadata); err != nil {
		return dst, err
	}
	dst = append(dst, `,"version":`...)
	dst = appendJSONUint(dst, r.Version)
	dst = append(dst, `,"meta":`...)
	if dst, err = appendMetaJSON(dst, &r.Meta); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// sameContent reports whether a and b are one value: the same blocks
// (one array) and the same summary, as a memory rendered as stored
// shares its record's. Such values encode to the same bytes.
func sameContent(a, b *MemoryContent) bool {
	return len(a.Blocks) == len(b.Blocks) && (len(a.Blocks) == 0 || &a.Blocks[0] == &b.Blocks[0]) && a.Summary == b.Summary
}

// appendContentJSON appends c with a nil block list as [] and its data
// and embeddings in form f; texts, when not nil, copies embeddings
// written before and notes new ones.
func appendContentJSON(dst []byte, c *MemoryContent, texts *embeddingTexts, f BinaryForm) ([]byte, error) {
	var err error
	dst = append(dst, `{"blocks":[`...)
	for i := range c.Blocks {
		b := &c.Blocks[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"modality":`...)
		if dst, err = appendJSONEnum(dst, modalityNames, uint8(b.Modality)); err != nil {
			return dst, err
		}
		dst = append(dst, `,"format":`...)
		dst = appendJSONString(dst, b.Format)
		dst = append(dst, `,"data":`...)
		dst = appendBinaryBytes(dst, b.Data, f)
		dst = append(dst, `,"embedding":`...)
		if dst, err = texts.appendEmbedding(dst, b.Embedding, f); err != nil {
			return dst, err
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `],"summary":`...)
	if c.Summary == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONString(dst, *c.Summary)
	}
	return append(dst, '}'), nil
}

// appendFloatFields appends "key":value pairs, the first key with its
// leading brace or comma included in keys.
func appendFloatFields(dst []byte, keys []string, vals []float64) ([]byte, error) {
	var err error
	for i, k := range keys {
		dst = append(dst, k...)
		if dst, err = appendJSONFloat(dst, vals[i], 64); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

var fidelityKeys = []string{`{"score":`, `,"noise_level":`, `,"decay_rate":`, `,"emotional_anchor":`}

func appendFidelityJSON(dst []byte, f *FidelityState) ([]byte, error) {
	dst, err := appendFloatFields(dst, fidelityKeys, []float64{f.Score, f.NoiseLevel, f.DecayRate, f.EmotionalAnchor})
	if err != nil {
		return dst, err
	}
	dst = append(dst, `,"reinforcement_count":`...)
	dst = appendJSONUint(dst, f.ReinforcementCount)
	dst = append(dst, `,"stability":`...)
	if dst, err = appendJSONFloat(dst, f.Stability, 64); err != nil {
		return dst, err
	}
	dst = append(dst, `,"last_decay_tick":`...)
	if dst, err = appendJSONTime(dst, f.LastDecayTick); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

var emotionKeys = []string{`{"joy":`, `,"trust":`, `,"fear":`, `,"surprise":`, `,"sadness":`,
	`,"disgust":`, `,"anger":`, `,"anticipation":`, `,"intensity":`, `,"valence":`}

func appendEmotionJSON(dst []byte, e *EmotionVector) ([]byte, error) {
	dst, err := appendFloatFields(dst, emotionKeys, []float64{e.Joy, e.Trust, e.Fear, e.Surprise, e.Sadness,
		e.Disgust, e.Anger, e.Anticipation, e.Intensity, e.Valence})
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

func appendAssociationJSON(dst []byte, a *Association) ([]byte, error) {
	var err error
	dst = append(dst, `{"target_id":`...)
	dst = appendJSONID(dst, a.TargetID)
	dst = append(dst, `,"association_type":`...)
	if dst, err = appendJSONEnum(dst, assocNames, uint8(a.AssociationType)); err != nil {
		return dst, err
	}
	dst = append(dst, `,"weight":`...)
	if dst, err = appendJSONFloat(dst, a.Weight, 64); err != nil {
		return dst, err
	}
	dst = append(dst, `,"created_at":`...)
	if dst, err = appendJSONTime(dst, a.CreatedAt); err != nil {
		return dst, err
	}
	dst = append(dst, `,"last_co_activation":`...)
	if dst, err = appendJSONTime(dst, a.LastCoActivation); err != nil {
		return dst, err
	}
	if a.Origin != 0 {
		dst = append(dst, `,"origin":`...)
		if dst, err = appendJSONEnum(dst, originNames, uint8(a.Origin)); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// recordSizeHint estimates the encoded size of r: about four bytes per
// content byte and twelve per embedding value, plus the fixed fields.
func recordSizeHint(r *MemoryRecord) int {
	return 1536 + 160*len(r.Associations) + len(r.Metadata) + contentSizeHint(&r.Content)
}

func contentSizeHint(c *MemoryContent) int {
	n := 32
	for _, bl := range c.Blocks {
		n += 80 + 4*len(bl.Data) + 12*len(bl.Embedding)
	}
	if c.Summary != nil {
		n += len(*c.Summary) + 8
	}
	return n
}
