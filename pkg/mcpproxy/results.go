package mcpproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"memsvc.dev/memsvc/pkg/memory"
)

// Every answer is a JSON object, sent twice: as structuredContent, which
// the tool's outputSchema describes, and as the same JSON, compact, in a
// text block for clients that read only text. recall and recall_raw
// return upstream's flattened shapes; the tools that return records
// (inspect, timeline, associate) keep the record's JSON shape, except that
// content blocks show their text instead of an array of byte values and
// embeddings are reduced to their dimension.

// structured is the tool result that carries v.
func structured(v any) (*mcp.CallToolResult, error) {
	var b []byte
	var err error
	if a, ok := v.(jsonAppender); ok {
		b, err = a.appendJSON(nil)
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("encode result: %T is not a JSON object", v)
	}
	return &mcp.CallToolResult{
		Content:              []mcp.Content{mcp.NewTextContent(string(b))},
		RawStructuredContent: b,
	}, nil
}

// offsetTime formats t in UTC with a "+00:00" offset, the form upstream's
// flattened results use.
func offsetTime(t time.Time) timestamp {
	return timestamp(t.UTC().Format("2006-01-02T15:04:05.999999999") + "+00:00")
}

// nonText stands in for the text of a record without a text block.
const nonText = "[non-text content]"

type recallItem struct {
	RecordID       memory.ID        `json:"record_id"`
	Store          memory.StoreType `json:"store"`
	Text           string           `json:"text"`
	RelevanceScore float64          `json:"relevance_score"`
	Fidelity       float64          `json:"fidelity"`
	CreatedAt      timestamp        `json:"created_at"`
	Emotion        *emotionName     `json:"emotion"`
}

type recallResult struct {
	Memories        []recallItem          `json:"memories"`
	QueryMetadata   *memory.QueryMetadata `json:"query_metadata"`
	TotalCandidates uint32                `json:"total_candidates"`
}

// jsonAppender is a result that writes its own JSON, as json.Marshal
// would write it (structured).
type jsonAppender interface {
	appendJSON(dst []byte) ([]byte, error)
}

// appendJSON appends r as json.Marshal writes it. A search's result is
// encoded on every call, and through reflection that took about as long
// as reading the server's answer.
func (r *recallResult) appendJSON(dst []byte) ([]byte, error) {
	n := 96
	for i := range r.Memories {
		n += 224 + len(r.Memories[i].Text) + len(r.Memories[i].Text)/8
	}
	dst = slices.Grow(dst, n)
	var err error
	dst = append(dst, `{"memories":`...)
	if r.Memories == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range r.Memories {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = r.Memories[i].appendJSON(dst); err != nil {
				return nil, err
			}
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"query_metadata":`...)
	if dst, err = appendQueryMetadata(dst, r.QueryMetadata); err != nil {
		return nil, err
	}
	dst = append(dst, `,"total_candidates":`...)
	dst = strconv.AppendUint(dst, uint64(r.TotalCandidates), 10)
	return append(dst, '}'), nil
}

func (it *recallItem) appendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"record_id":`...)
	dst = it.RecordID.AppendJSON(dst)
	dst = append(dst, `,"store":`...)
	if dst, err = it.Store.AppendJSON(dst); err != nil {
		return nil, err
	}
	dst = append(dst, `,"text":`...)
	dst = memory.AppendJSONString(dst, it.Text)
	dst = append(dst, `,"relevance_score":`...)
	if dst, err = memory.AppendJSONFloat(dst, it.RelevanceScore); err != nil {
		return nil, err
	}
	dst = append(dst, `,"fidelity":`...)
	if dst, err = memory.AppendJSONFloat(dst, it.Fidelity); err != nil {
		return nil, err
	}
	dst = append(dst, `,"created_at":`...)
	dst = memory.AppendJSONString(dst, string(it.CreatedAt))
	dst = append(dst, `,"emotion":`...)
	if it.Emotion == nil {
		dst = append(dst, "null"...)
	} else {
		dst = memory.AppendJSONString(dst, string(*it.Emotion))
	}
	return append(dst, '}'), nil
}

// appendQueryMetadata appends m as json.Marshal writes it (its
// MarshalJSON: no stores as []), null when m is nil.
func appendQueryMetadata(dst []byte, m *memory.QueryMetadata) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, `{"total_records_scanned":`...)
	dst = strconv.AppendUint(dst, uint64(m.TotalRecordsScanned), 10)
	dst = append(dst, `,"stores_searched":[`...)
	for i, s := range m.StoresSearched {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = s.AppendJSON(dst); err != nil {
			return nil, err
		}
	}
	dst = append(dst, `],"fidelity_filtered":`...)
	dst = strconv.AppendUint(dst, uint64(m.FidelityFiltered), 10)
	return append(dst, '}'), nil
}

func flattenRecall(r *memory.RecallQueryResponse) *recallResult {
	out := &recallResult{Memories: make([]recallItem, 0, len(r.Memories)), QueryMetadata: r.QueryMetadata, TotalCandidates: r.TotalCandidates}
	for _, m := range r.Memories {
		f := recallFields{id: m.Record.ID, store: m.Record.Store, relevance: m.RelevanceScore,
			fidelity: m.Record.Fidelity.Score, created: m.Record.CreatedAt, emotion: m.Record.Emotion}
		f.text, f.isText = m.Record.Content.Text()
		out.Memories = append(out.Memories, f.item())
	}
	return out
}

// recallFields are what the recall tool shows of one recalled memory.
type recallFields struct {
	id        memory.ID
	store     memory.StoreType
	text      string
	isText    bool // the record has a text block, whose text is text
	relevance float64
	fidelity  float64
	created   time.Time
	emotion   memory.EmotionVector
}

func (f *recallFields) item() recallItem {
	it := recallItem{RecordID: f.id, Store: f.store, Text: f.text, RelevanceScore: f.relevance, Fidelity: f.fidelity, CreatedAt: offsetTime(f.created)}
	if !f.isText {
		it.Text = nonText
	}
	if l := emotionName(f.emotion.Label()); l != "" {
		it.Emotion = &l
	}
	return it
}

type rawItem struct {
	RecordID     memory.ID           `json:"record_id"`
	SessionID    string              `json:"session_id"`
	Source       memory.RawSource    `json:"source"`
	Speaker      memory.RawSpeaker   `json:"speaker"`
	Visibility   memory.Visibility   `json:"visibility"`
	SecrecyLevel memory.SecrecyLevel `json:"secrecy_level"`
	Text         string              `json:"text"`
	CreatedAt    timestamp           `json:"created_at"`
}

type rawResult struct {
	Records         []rawItem `json:"records"`
	TotalCandidates uint32    `json:"total_candidates"`
}

func flattenRaw(r *memory.RecallRawQueryResponse) *rawResult {
	out := &rawResult{Records: make([]rawItem, 0, len(r.Records)), TotalCandidates: r.TotalCandidates}
	for _, rec := range r.Records {
		text, ok := rec.Content.Text()
		if !ok {
			text = nonText
		}
		out.Records = append(out.Records, rawItem{
			RecordID: rec.ID, SessionID: rec.SessionID, Source: rec.Source, Speaker: rec.Speaker,
			Visibility: rec.Visibility, SecrecyLevel: rec.SecrecyLevel, Text: text, CreatedAt: offsetTime(rec.CreatedAt),
		})
	}
	return out
}

// blockView is a content block as a model reads it.
type blockView struct {
	Modality memory.Modality `json:"modality"`
	Format   string          `json:"format"`
	// Text is the block's data when it is UTF-8 text (text, structured
	// JSON, ...); binary blocks give SizeBytes instead.
	Text                *string `json:"text,omitempty"`
	SizeBytes           *int    `json:"size_bytes,omitempty"`
	EmbeddingDimensions int     `json:"embedding_dimensions,omitempty"`
}

type contentView struct {
	Blocks  []blockView `json:"blocks"`
	Summary *string     `json:"summary"`
}

func readableContent(c memory.MemoryContent) contentView {
	out := contentView{Blocks: make([]blockView, 0, len(c.Blocks)), Summary: c.Summary}
	for _, b := range c.Blocks {
		v := blockView{Modality: b.Modality, Format: b.Format, EmbeddingDimensions: len(b.Embedding)}
		switch b.Modality {
		case memory.ModalityImage, memory.ModalityAudio, memory.ModalityVideo:
		default:
			if utf8.Valid(b.Data) {
				s := string(b.Data)
				v.Text = &s
			}
		}
		if v.Text == nil {
			n := len(b.Data)
			v.SizeBytes = &n
		}
		out.Blocks = append(out.Blocks, v)
	}
	return out
}

// recordView mirrors memory.MemoryRecord field for field, with readable
// content.
type recordView struct {
	ID             memory.ID            `json:"id"`
	Store          memory.StoreType     `json:"store"`
	CreatedAt      time.Time            `json:"created_at"`
	UpdatedAt      time.Time            `json:"updated_at"`
	LastAccessedAt time.Time            `json:"last_accessed_at"`
	AccessCount    uint32               `json:"access_count"`
	Content        contentView          `json:"content"`
	Fidelity       memory.FidelityState `json:"fidelity"`
	Emotion        memory.EmotionVector `json:"emotion"`
	Associations   []memory.Association `json:"associations"`
	Metadata       memory.JSON          `json:"metadata"`
	Version        uint32               `json:"version"`
	Meta           memory.MetaMemory    `json:"meta"`
}

func readableRecord(r *memory.MemoryRecord) recordView {
	assoc := r.Associations
	if assoc == nil {
		assoc = []memory.Association{}
	}
	return recordView{
		ID: r.ID, Store: r.Store, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, LastAccessedAt: r.LastAccessedAt,
		AccessCount: r.AccessCount, Content: readableContent(r.Content), Fidelity: r.Fidelity, Emotion: r.Emotion,
		Associations: assoc, Metadata: r.Metadata, Version: r.Version, Meta: r.Meta,
	}
}

// recalledView is a memory.RecalledMemory with a readable record. The
// rendered content is shown only when it differs from the record's own
// (human-mode noise); otherwise it would repeat the text.
type recalledView struct {
	Record          recordView   `json:"record"`
	RelevanceScore  float64      `json:"relevance_score"`
	ActivationPath  []memory.ID  `json:"activation_path"`
	RenderedContent *contentView `json:"rendered_content,omitempty"`
}

func readableRecalled(ms []memory.RecalledMemory) []recalledView {
	out := make([]recalledView, 0, len(ms))
	for i := range ms {
		m := &ms[i]
		path := m.ActivationPath
		if path == nil {
			path = []memory.ID{}
		}
		v := recalledView{Record: readableRecord(&m.Record), RelevanceScore: m.RelevanceScore, ActivationPath: path}
		if !sameContent(m.RenderedContent, m.Record.Content) && len(m.RenderedContent.Blocks) > 0 {
			c := readableContent(m.RenderedContent)
			v.RenderedContent = &c
		}
		out = append(out, v)
	}
	return out
}

func sameContent(a, b memory.MemoryContent) bool {
	if len(a.Blocks) != len(b.Blocks) {
		return false
	}
	for i := range a.Blocks {
		if !bytes.Equal(a.Blocks[i].Data, b.Blocks[i].Data) {
			return false
		}
	}
	return true
}

type associateResult struct {
	Memories        []recalledView `json:"memories"`
	TotalCandidates uint32         `json:"total_candidates"`
}

func readableAssociate(r *memory.RecallAssociateResponse) *associateResult {
	return &associateResult{Memories: readableRecalled(r.Memories), TotalCandidates: r.TotalCandidates}
}

type bucketView struct {
	Start    time.Time      `json:"start"`
	End      time.Time      `json:"end"`
	Memories []recalledView `json:"memories"`
	Count    uint32         `json:"count"`
}

type timelineResult struct {
	Buckets   []bucketView `json:"buckets"`
	Truncated bool         `json:"truncated,omitempty"`
}

func readableTimeline(r *memory.RecallTimelineResponse) *timelineResult {
	out := &timelineResult{Buckets: make([]bucketView, 0, len(r.Buckets)), Truncated: r.Truncated}
	for _, b := range r.Buckets {
		out.Buckets = append(out.Buckets, bucketView{Start: b.Start, End: b.End, Memories: readableRecalled(b.Memories), Count: b.Count})
	}
	return out
}
