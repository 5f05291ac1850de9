package recorder

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/redact"
)

// RecorderName is the value of the "recorder" metadata key of every entry
// the recorder writes.
const RecorderName = "memsvc-recorder"

// entryMetadata is the metadata object of a raw entry, in this key order.
type entryMetadata struct {
	Recorder        string          `json:"recorder"`
	EventType       string          `json:"event_type"`
	ActionID        string          `json:"action_id,omitempty"`
	CaptureSource   string          `json:"capture_source,omitempty"`
	ObservedAt      string          `json:"observed_at,omitempty"`
	RecorderCwd     string          `json:"recorder_cwd,omitempty"`
	CaptureMetadata json.RawMessage `json:"capture_metadata,omitempty"`
}

// entry is an event turned into a raw request, redacted and ready to send
// or spool.
type entry struct {
	req  memory.EncodeStoreRawRequest
	key  dedupeKey // zero unless the event has an explicit identity
	size int       // estimated size of the request as JSON
}

// dedupeKey identifies an event for duplicate dropping: a hash over its
// identity fields and content, all as redacted (see the package comment).
type dedupeKey [16]byte

// toEntry converts an event into a raw request, redacting everything that
// can hold a secret. id is the client-generated record id; cwd is the
// recorder's working directory ("" to leave it out).
func toEntry(ev *Event, id memory.ID, cwd string) (entry, error) {
	text, err := redactContent(ev.Content)
	if err != nil {
		return entry{}, err
	}
	if strings.TrimSpace(text) == "" {
		return entry{}, invalid("content", "must not be blank")
	}
	if len(text) > memory.MaxTextBlockBytes {
		return entry{}, invalid("content", "%d bytes exceeds the limit of %d", len(text), memory.MaxTextBlockBytes)
	}
	md := entryMetadata{
		Recorder:      RecorderName,
		EventType:     ev.Type.String(),
		ActionID:      redact.Text(ev.ActionID),
		CaptureSource: redact.Text(ev.Source),
		RecorderCwd:   redact.Text(cwd),
	}
	if !ev.Timestamp.IsZero() {
		md.ObservedAt = ev.Timestamp.UTC().Format(time.RFC3339Nano)
	}
	if ev.Metadata != nil {
		if md.CaptureMetadata, err = redact.JSON(bytes.TrimSpace(ev.Metadata)); err != nil {
			return entry{}, invalid("metadata", "not valid JSON")
		}
	}
	mdJSON, err := json.Marshal(md)
	if err != nil {
		return entry{}, invalid("metadata", "%v", err)
	}
	var meta *memory.MetaMemory
	metaSize := 0
	if ev.Meta != nil {
		if meta, metaSize, err = redactMeta(ev.Meta); err != nil {
			return entry{}, err
		}
	}
	req := memory.EncodeStoreRawRequest{
		RecordID:     &id,
		SessionID:    redact.Text(ev.SessionID),
		Source:       ev.Type.Source(),
		Speaker:      ev.Speaker,
		Visibility:   ev.Visibility,
		SecrecyLevel: ev.Secrecy,
		Content:      memory.TextContent(text),
		Metadata:     memory.JSON(mdJSON),
		Meta:         meta,
	}
	if req.Speaker == 0 {
		req.Speaker = ev.Type.Speaker()
	}
	if req.Visibility == 0 {
		req.Visibility = memory.VisibilityNormal
	}
	if req.SecrecyLevel == 0 {
		req.SecrecyLevel = memory.SecrecySensitive
	}
	if ev.TurnID != "" {
		s := redact.Text(ev.TurnID)
		req.TurnID = &s
	}
	if ev.TopicID != "" {
		s := redact.Text(ev.TopicID)
		req.TopicID = &s
	}
	e := entry{req: req, size: estimateSize(&req, len(mdJSON), metaSize)}
	if ev.TurnID != "" || ev.ActionID != "" || !ev.Timestamp.IsZero() {
		e.key = keyOf(&req, &md, text)
	}
	return e, nil
}

// redactContent turns content into redacted text: a JSON string is
// redacted as text; any other JSON value is first redacted structurally
// (the value of a secret key goes whatever its type) and kept as written,
// then its text is redacted again as a whole.
func redactContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		s, err := contentText(raw)
		if err != nil {
			return "", err
		}
		return redact.Text(s), nil
	}
	red, err := redact.JSON(raw)
	if err != nil {
		return "", invalid("content", "not valid JSON")
	}
	return redact.Text(string(bytes.TrimSpace(red))), nil
}

// redactMeta redacts a meta-memory structurally: as JSON, then parsed back.
// It returns the redacted value and the size of its JSON.
func redactMeta(m *memory.MetaMemory) (*memory.MetaMemory, int, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, 0, invalid("meta", "%v", err)
	}
	red, err := redact.JSON(b)
	if err != nil {
		return nil, 0, invalid("meta", "%v", err)
	}
	var out memory.MetaMemory
	if err := json.Unmarshal(red, &out); err != nil {
		return nil, 0, invalid("meta", "unusable after redaction: %v", jsonProblem(err))
	}
	return &out, len(red), nil
}

// estimateSize bounds the JSON size of a request: content bytes are sent as
// integer arrays (up to four bytes per byte).
func estimateSize(req *memory.EncodeStoreRawRequest, metadata, meta int) int {
	n := 512 + metadata + meta + len(req.SessionID)
	if req.TurnID != nil {
		n += len(*req.TurnID)
	}
	if req.TopicID != nil {
		n += len(*req.TopicID)
	}
	for _, b := range req.Content.Blocks {
		n += 4*len(b.Data) + 64
	}
	return n
}

// keyOf hashes the identity of an entry: session, event type, turn and
// action ids, timestamp, capture source and content text. Each part is
// length-prefixed so that no two different tuples hash alike.
func keyOf(req *memory.EncodeStoreRawRequest, md *entryMetadata, text string) dedupeKey {
	h := sha256.New()
	h.Write([]byte("memsvc-recorder dedupe v1"))
	turn := ""
	if req.TurnID != nil {
		turn = *req.TurnID
	}
	for _, part := range []string{req.SessionID, md.EventType, turn, md.ActionID, md.ObservedAt, md.CaptureSource, text} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	var k dedupeKey
	copy(k[:], h.Sum(nil))
	return k
}

// String is the key in hex, as stored in the recent-events file.
func (k dedupeKey) String() string { return fmt.Sprintf("%x", k[:]) }
