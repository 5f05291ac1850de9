package memory

import (
	"context"
	"fmt"
)

// AnswerTooLarge starts the message of an answer refused for its size, so
// that a client (the MCP proxy) can tell it from an input that is too
// large; both are CONTENT_TOO_LARGE.
const AnswerTooLarge = "answer too large"

// AnswerBudget bounds the size of one answer. A transport puts one in the
// request context (WithAnswerLimit); the service charges every record it
// is about to return, before loading the next, so an answer over the
// limit is refused while it is still small, without the service holding
// it all. Charges estimate the JSON answer, where content bytes are
// decimal integers (about four bytes each) and a recalled memory carries
// its content twice (record and rendered copy). A transport that encodes
// the answer can also check its exact size (Check).
//
// A nil *AnswerBudget accepts everything. A budget is not safe for
// concurrent use; a request's service call charges it from one goroutine.
type AnswerBudget struct {
	max, used int64
	records   int
}

type answerBudgetKey struct{}

// WithAnswerLimit returns ctx with a fresh budget of max bytes; max <= 0
// returns ctx unchanged (no limit).
func WithAnswerLimit(ctx context.Context, max int64) context.Context {
	if max <= 0 {
		return ctx
	}
	return context.WithValue(ctx, answerBudgetKey{}, &AnswerBudget{max: max})
}

// AnswerBudgetOf returns the budget of ctx, or nil when it has none.
func AnswerBudgetOf(ctx context.Context) *AnswerBudget {
	b, _ := ctx.Value(answerBudgetKey{}).(*AnswerBudget)
	return b
}

// Fixed parts of the estimates: the fields of a record or raw entry other
// than its content, metadata and meta.
const (
	recordOverhead = 2048
	rawOverhead    = 1024
)

// contentSize estimates the JSON of content.
func contentSize(c *MemoryContent) int64 {
	n := int64(64)
	if c.Summary != nil {
		n += int64(len(*c.Summary))
	}
	for i := range c.Blocks {
		n += 96 + 4*int64(len(c.Blocks[i].Data)) + 12*int64(len(c.Blocks[i].Embedding))
	}
	return n
}

// metaSize estimates the JSON of a meta-memory from its text.
func metaSize(m *MetaMemory) int64 {
	if m == nil {
		return 0
	}
	n := int64(512)
	add := func(ss ...*string) {
		for _, s := range ss {
			if s != nil {
				n += 8 + int64(len(*s))
			}
		}
	}
	evidence := func(refs []MetaEvidenceRef) {
		for i := range refs {
			n += 160
			add(refs[i].Label, refs[i].Excerpt, refs[i].URI)
		}
	}
	add(m.Intent, m.Rationale, m.Trigger, m.Decision)
	for _, list := range [][]string{m.Goals, m.Assumptions, m.Tags} {
		for i := range list {
			add(&list[i])
		}
	}
	evidence(m.Evidence)
	for i := range m.Alternatives {
		add(&m.Alternatives[i].Option, m.Alternatives[i].Reason)
	}
	for i := range m.ContextEdges {
		n += 160
		add(m.ContextEdges[i].Rationale)
		evidence(m.ContextEdges[i].Evidence)
	}
	return n + 40*int64(len(m.SourceRecordIDs)+len(m.ParentMetaIDs))
}

// Recalled charges a memory as recall, associate and timeline answers
// carry it: the record, its rendered content and the relevance fields.
func (b *AnswerBudget) Recalled(rec *MemoryRecord) error {
	if b == nil {
		return nil
	}
	c := contentSize(&rec.Content)
	n := recordOverhead + 2*c + int64(len(rec.Metadata)) + 96*int64(len(rec.Associations)) + metaSize(&rec.Meta)
	return b.charge(n)
}

// Raw charges a raw journal entry.
func (b *AnswerBudget) Raw(rec *RawJournalRecord) error {
	if b == nil {
		return nil
	}
	n := rawOverhead + contentSize(&rec.Content) + int64(len(rec.Metadata)) + metaSize(&rec.Meta)
	return b.charge(n)
}

func (b *AnswerBudget) charge(n int64) error {
	b.used += n
	if b.used > b.max {
		return b.refuse(fmt.Sprintf("only %d records fit within", b.records))
	}
	b.records++
	return nil
}

// Check refuses an encoded answer of size bytes over the limit.
func (b *AnswerBudget) Check(size int) error {
	if b == nil || int64(size) <= b.max {
		return nil
	}
	return b.refuse(fmt.Sprintf("%d bytes exceed", size))
}

func (b *AnswerBudget) refuse(what string) error {
	return &Error{Code: CodeContentTooLarge, Message: fmt.Sprintf(
		"%s: %s the server's limit of %d bytes for one answer; ask for fewer records (a lower limit) or narrow the query (a time range, a session, fewer stores) and page through the results",
		AnswerTooLarge, what, b.max)}
}
