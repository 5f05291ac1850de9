package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/engine/dreamgroup"
	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// The full-text indexes live in memory (package searchindex), one for
// the curated records and one for the raw journal of each namespace.
// Nothing of them is written with the records, so a crash can never
// leave them disagreeing with the records: they are built from the
// records at start, and every committed change is applied to them after
// its batch is durable (txn.commit). Older versions kept postings in the
// data directory under each namespace's derived prefix
// (store.DerivedPrefix); openIndexes deletes them once.

// The fields of both indexes. The text field holds every text of a
// record; the meta field holds the terms derived from its metadata, its
// time (recordTimeTerms) and its speaker (recordSpeakerTerms), each kind
// behind a prefix the tokenizer never produces, so they never meet text
// terms ("may" the month and "may" the verb stay apart) and have
// document frequencies of their own. Time and speaker share one field
// because they are scored alike (verbatim, b = 0, weight 1) and every
// field adds work per posting to the first stage (BM25F sums over the
// fields; docs/recall-ranking.md "Costs" has the measurements). Raw
// journal entries fill the text field only.
const (
	indexField = "text"
	metaField  = "meta"

	fieldText = 0
	fieldMeta = 1

	timePrefix    = "t:"
	speakerPrefix = "s:"
)

// indexConfig is the configuration of a namespace's indexes: BM25F with
// k1 = 1.2, the textindex tokenizer; the text field with b = 0.5 (turns
// and notes are short and of similar length: full normalisation, 0.75,
// ranked worse on the development sets, docs/recall-ranking.md), the
// meta field verbatim with b = 0 (one time and one speaker per record:
// length says nothing), so a match there scores weight · idf.
func indexConfig(an *textindex.Analyzer) searchindex.Config {
	return searchindex.Config{
		Fields: []searchindex.Field{
			{Name: indexField, Weight: 1, B: 0.5},
			{Name: metaField, Weight: 1, Verbatim: true},
		},
		K1:              1.2,
		Analyzer:        an,
		AnalyzerVersion: an.Version(),
	}
}

// curatedDoc is the index document of a curated record: its texts, its
// time and speaker terms, its creation time and its store.
func curatedDoc(rec *memory.MemoryRecord) *searchindex.Document { return curatedDocWith(rec, nil) }

// curatedDocWith is curatedDoc taking the time terms from memo (nil:
// spelled out for this record alone).
func curatedDocWith(rec *memory.MemoryRecord, memo timeTermsMemo) *searchindex.Document {
	d := &searchindex.Document{ID: rec.ID, Attrs: searchindex.Attrs{Time: rec.CreatedAt.UnixNano(), Tag: uint32(rec.Store)}}
	d.Fields[fieldText] = recordTexts(rec)
	if len(d.Fields[fieldText]) == 0 {
		return d // nothing to find: no time or speaker alone
	}
	md := recordMetaFields(rec.Metadata)
	d.Fields[fieldMeta] = append(memo.terms(md, rec.CreatedAt), recordSpeakerTerms(md)...)
	return d
}

// timeTermsMemo remembers time-field terms by what they depend on, for
// the documents of one load: its records share a few days, and spelling
// the terms out for each record was 4% of building the indexes at start.
// The documents share the slices, which nothing modifies. Not safe for
// concurrent use.
type timeTermsMemo map[timeTermsKey][]string

// timeTermsKey is what recordTimeTerms reads: the metadata times, and the
// creation day in UTC.
type timeTermsKey struct {
	eventTime, sessionDate string
	year, day              int
	month                  time.Month
}

// maxTimeTerms bounds a timeTermsMemo: records with times of their own
// (event_time to the second, say) gain nothing from it.
const maxTimeTerms = 4096

// terms is recordTimeTerms(md, created), remembered.
func (m timeTermsMemo) terms(md metaFields, created time.Time) []string {
	if m == nil {
		return recordTimeTerms(md, created)
	}
	k := timeTermsKey{eventTime: md.EventTime, sessionDate: md.SessionDate}
	k.year, k.month, k.day = created.UTC().Date()
	if t, ok := m[k]; ok {
		return t
	}
	t := recordTimeTerms(md, created)
	t = t[:len(t):len(t)] // an append to a shared slice must copy
	if len(m) < maxTimeTerms {
		m[k] = t
	}
	return t
}

// rawDoc is the index document of a raw journal entry; its attributes
// carry what raw queries filter on (flags, creation time, session), so a
// query never reads entries it will not return.
func rawDoc(rec *memory.RawJournalRecord) *searchindex.Document {
	d := &searchindex.Document{ID: rec.ID, Attrs: searchindex.Attrs{
		Time:  rec.CreatedAt.UnixNano(),
		Group: sessionHash(rec.SessionID),
		Tag:   uint32(store.FlagsOf(rec)),
	}}
	d.Fields[fieldText] = dreamgroup.Texts(rec)
	return d
}

// openIndexes loads the records of every namespace and loads or builds
// its full-text indexes, after deleting the postings older versions kept
// in the database and the snapshots that may not stay (snapshot.go).
func (e *Engine) openIndexes(ctx context.Context) error {
	start := time.Now()
	if err := e.dropPersistedPostings(); err != nil {
		return err
	}
	if err := e.tidySnapshots(); err != nil {
		return fmt.Errorf("index snapshots: %w", err)
	}
	records, raws := 0, 0
	for _, ns := range e.spaces {
		if err := e.openNSIndexes(ctx, ns); err != nil {
			return fmt.Errorf("namespace %s: %w", ns.name, err)
		}
		records += len(ns.st.entries)
		raws += int(ns.raw.total)
	}
	e.log.Debug("engine loaded", "namespaces", len(e.spaces), "records", records, "raw", raws, "took", time.Since(start))
	return nil
}

// dropPersistedPostings deletes the postings of every namespace that
// older versions kept in the data directory. Once they are gone, a start
// only looks for the first key of each prefix.
func (e *Engine) dropPersistedPostings() error {
	b := e.db.NewBatch()
	defer b.Close()
	for _, ns := range e.spaces {
		p := store.DerivedPrefix(ns.id)
		found := false
		err := e.db.ScanPrefix(p, false, func(_, _ []byte) (bool, error) {
			found = true
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("look for persisted postings: %w", err)
		}
		if found {
			b.DeleteRange(p, store.PrefixEnd(p))
		}
	}
	if b.Empty() {
		return nil
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("remove persisted postings: %w", err)
	}
	e.log.Info("removed the search index postings of an older version from the data directory")
	return nil
}

// openNSIndexes loads the records of one namespace (loadRecords) and its
// full-text indexes: from its snapshot, read while the records load, or
// built from the records and raw entries (rebuildNSIndexes).
func (e *Engine) openNSIndexes(ctx context.Context, ns *nsState) error {
	start := time.Now()
	if err := e.loadChangeCounter(ns); err != nil {
		return err
	}
	var snap io.ReadCloser
	if e.snapshotsAllowed() {
		snap = e.openSnapshot(ns)
	}
	if snap == nil {
		return e.rebuildNSIndexes(ctx, ns, start)
	}
	var text, raw *searchindex.Index
	var wg sync.WaitGroup
	wg.Go(func() { text, raw = e.readSnapshot(ns, snap) })
	err := e.loadRecords(ctx, ns, nil)
	wg.Wait()
	if err != nil {
		return err
	}
	if text != nil {
		e.useSnapshot(ns, text, raw)
		e.log.Debug("search indexes loaded", "namespace", ns.name, "records", ns.text.Stats().Docs,
			"raw_entries", ns.rawText.Stats().Docs, "took", time.Since(start).Round(time.Millisecond))
		return nil
	}
	return e.buildNSIndexes(ctx, ns, start)
}

// rebuildNSIndexes loads the records of one namespace and builds its
// full-text indexes: the text index from the records as loadRecords
// decodes them, the raw index from the journal beside it.
func (e *Engine) rebuildNSIndexes(ctx context.Context, ns *nsState, start time.Time) error {
	var raw *searchindex.Index
	var rawErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		raw, rawErr = searchindex.Build(ns.indexConfig, func(add searchindex.AddFunc) error { return e.fillRaw(ctx, ns, add) })
	})
	b, err := searchindex.NewBuilder(ns.indexConfig)
	if err == nil {
		err = e.loadRecords(ctx, ns, b)
	}
	var text *searchindex.Index
	if err == nil {
		text = b.Finish()
	}
	wg.Wait()
	if err != nil {
		return err
	}
	if rawErr != nil {
		return fmt.Errorf("raw text index: %w", rawErr)
	}
	e.useBuilt(ns, text, raw, start)
	return nil
}

// buildNSIndexes builds the namespace's text index from its stored
// records and its raw index from the journal, and puts them in place: for
// a snapshot that turned out unusable once the records were loaded.
func (e *Engine) buildNSIndexes(ctx context.Context, ns *nsState, start time.Time) error {
	text, err := searchindex.Build(ns.indexConfig, func(add searchindex.AddFunc) error { return e.fillCurated(ctx, ns, add) })
	if err != nil {
		return fmt.Errorf("text index: %w", err)
	}
	raw, err := searchindex.Build(ns.indexConfig, func(add searchindex.AddFunc) error { return e.fillRaw(ctx, ns, add) })
	if err != nil {
		return fmt.Errorf("raw text index: %w", err)
	}
	e.useBuilt(ns, text, raw, start)
	return nil
}

// useBuilt puts the namespace's freshly built text and raw indexes in
// place; start is when opening them began.
func (e *Engine) useBuilt(ns *nsState, text, raw *searchindex.Index, start time.Time) {
	ns.text, ns.rawText = text, raw
	e.log.Debug("search indexes built", "namespace", ns.name, "records", text.Stats().Docs,
		"raw_entries", raw.Stats().Docs, "took", time.Since(start).Round(time.Millisecond))
}

func (e *Engine) fillCurated(ctx context.Context, ns *nsState, add searchindex.AddFunc) error {
	for _, st := range memory.PersistentStores() {
		err := e.db.ScanRecords(ns.id, st, func(rec *memory.MemoryRecord) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return add(curatedDoc(rec))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) fillRaw(ctx context.Context, ns *nsState, add searchindex.AddFunc) error {
	return e.db.ScanRaw(ns.id, func(rec *memory.RawJournalRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return add(rawDoc(rec))
	})
}

// recordTexts is what the full-text index sees of a curated record: every
// text block, flattened structured blocks, the summary, and the meta-memory
// text when it was provided or inferred (the canned texts of legacy and
// unavailable meta are not worth finding).
func recordTexts(rec *memory.MemoryRecord) []string {
	var out []string
	for _, b := range rec.Content.Blocks {
		switch b.Modality {
		case memory.ModalityText:
			if utf8.Valid(b.Data) {
				out = append(out, string(b.Data))
			}
		case memory.ModalityStructured:
			if s, ok := flattenStructured(b.Data); ok {
				out = append(out, s)
			}
		}
	}
	if rec.Content.Summary != nil {
		out = append(out, *rec.Content.Summary)
	}
	return append(out, metaTexts(&rec.Meta)...)
}

func metaTexts(m *memory.MetaMemory) []string {
	if m.CaptureStatus != memory.CaptureProvided && m.CaptureStatus != memory.CaptureInferred {
		return nil
	}
	var out []string
	add := func(s *string) {
		if s != nil && *s != "" {
			out = append(out, *s)
		}
	}
	add(m.Intent)
	add(m.Rationale)
	add(m.Trigger)
	add(m.Decision)
	out = append(out, m.Goals...)
	out = append(out, m.Assumptions...)
	out = append(out, m.Tags...)
	evidence := func(ev []memory.MetaEvidenceRef) {
		for i := range ev {
			add(ev[i].Label)
			add(ev[i].Excerpt)
			add(ev[i].URI)
		}
	}
	evidence(m.Evidence)
	for i := range m.Alternatives {
		out = append(out, m.Alternatives[i].Option)
		add(m.Alternatives[i].Reason)
	}
	for i := range m.ContextEdges {
		add(m.ContextEdges[i].Rationale)
		evidence(m.ContextEdges[i].Evidence)
	}
	return out
}

// flattenStructured renders a JSON block as "path: value" lines (object
// keys sorted, array items repeating their key), up to ten levels deep.
func flattenStructured(data []byte) (string, bool) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return "", false
	}
	var lines []string
	var walk func(prefix string, v any, depth int) bool
	walk = func(prefix string, v any, depth int) bool {
		if depth > 10 {
			return false
		}
		label := func(s string) string {
			if prefix == "" {
				return s
			}
			return prefix + ": " + s
		}
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				if !walk(p, x[k], depth+1) {
					return false
				}
			}
		case []any:
			for _, item := range x {
				if !walk(prefix, item, depth+1) {
					return false
				}
			}
		case string:
			lines = append(lines, label(x))
		case float64:
			lines = append(lines, label(strconv.FormatFloat(x, 'g', -1, 64)))
		case bool:
			lines = append(lines, label(strconv.FormatBool(x)))
		case nil:
			lines = append(lines, label("null"))
		}
		return true
	}
	if !walk("", v, 0) {
		return "", false
	}
	return strings.Join(lines, "\n"), true
}

func sessionHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
