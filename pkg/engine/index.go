package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"memsvc.dev/memsvc/pkg/engine/dreamgroup"
	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Key prefixes of a namespace's full-text indexes: 'c' (curated) and 'r'
// (raw) after the namespace's derived prefix (store.DerivedPrefix), so in
// the default namespace "x" 'c' and "x" 'r', as before namespaces.
func curatedIndexPrefix(ns store.NS) []byte { return append(store.DerivedPrefix(ns), 'c') }
func rawIndexPrefix(ns store.NS) []byte     { return append(store.DerivedPrefix(ns), 'r') }

// openIndexes opens the full-text indexes of every namespace, rebuilding
// them when they are kept in memory, when their format changed, or when
// an interrupted rebuild left them stale.
func (e *Engine) openIndexes(ctx context.Context) error {
	e.idxDB = e.db
	if !e.opts.PersistIndexes {
		mem, err := store.OpenInMemory()
		if err != nil {
			return err
		}
		e.idxDB = mem
		// Derived text must not stay on disk when indexes do not persist
		// (for example after persistence was turned off).
		b := e.db.NewBatch()
		for _, ns := range e.spaces {
			p := store.DerivedPrefix(ns.id)
			b.DeleteRange(p, store.PrefixEnd(p))
		}
		err = b.Commit()
		b.Close()
		if err != nil {
			return fmt.Errorf("remove persisted indexes: %w", err)
		}
	}
	for _, ns := range e.spaces {
		if err := e.openNSIndexes(ctx, ns); err != nil {
			return fmt.Errorf("namespace %s: %w", ns.name, err)
		}
	}
	return nil
}

// openNSIndexes opens (or builds) the full-text indexes of one namespace.
func (e *Engine) openNSIndexes(ctx context.Context, ns *nsState) error {
	var err error
	if ns.text, err = e.openIndex(ns, curatedIndexPrefix(ns.id), func(add textindex.AddFunc) error { return e.fillCurated(ctx, ns, add) }); err != nil {
		return fmt.Errorf("text index: %w", err)
	}
	if ns.rawText, err = e.openIndex(ns, rawIndexPrefix(ns.id), func(add textindex.AddFunc) error { return e.fillRaw(ctx, ns, add) }); err != nil {
		return fmt.Errorf("raw text index: %w", err)
	}
	if e.idxDB == e.db {
		return e.dropOrphans(ns)
	}
	return nil
}

func (e *Engine) openIndex(ns *nsState, prefix []byte, fill func(textindex.AddFunc) error) (*textindex.Index, error) {
	if e.idxDB == e.db {
		ix, err := textindex.Open(e.idxDB, prefix)
		if err == nil {
			return ix, nil
		}
		if !errors.Is(err, textindex.ErrStale) {
			return nil, err
		}
		if len(ns.st.entries) > 0 || ns.raw.total > 0 {
			e.log.Info("rebuilding a stale search index", "namespace", ns.name, "reason", err)
		}
	}
	start := time.Now()
	ix, err := textindex.Rebuild(e.idxDB, prefix, fill)
	if err != nil {
		return nil, err
	}
	e.log.Debug("search index built", "namespace", ns.name, "documents", ix.Stats().Docs, "took", time.Since(start).Round(time.Millisecond))
	return ix, nil
}

func (e *Engine) fillCurated(ctx context.Context, ns *nsState, add textindex.AddFunc) error {
	for _, st := range memory.PersistentStores() {
		err := e.db.ScanRecords(ns.id, st, func(rec *memory.MemoryRecord) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return add(rec.ID, nil, recordTexts(rec)...)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) fillRaw(ctx context.Context, ns *nsState, add textindex.AddFunc) error {
	return e.db.ScanRaw(ns.id, func(rec *memory.RawJournalRecord) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return add(rec.ID, rawAttrs(rec), dreamgroup.Texts(rec)...)
	})
}

// dropOrphans removes index documents without a record: working-store
// records do not survive a restart, but their postings do.
func (e *Engine) dropOrphans(ns *nsState) error {
	prefix := append(curatedIndexPrefix(ns.id), 'f')
	var orphans []memory.ID
	err := e.db.ScanPrefix(prefix, false, func(k, _ []byte) (bool, error) {
		var id memory.ID
		copy(id[:], k[len(prefix):])
		if _, ok := ns.st.entries[id]; !ok {
			orphans = append(orphans, id)
		}
		return true, nil
	})
	if err != nil || len(orphans) == 0 {
		return err
	}
	b := e.db.NewBatch()
	defer b.Close()
	var c textindex.Change
	for _, id := range orphans {
		d, err := ns.text.Delete(b, id)
		if err != nil {
			return err
		}
		c = c.Merge(d)
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("drop orphaned index entries: %w", err)
	}
	ns.text.Apply(c)
	return nil
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

// Raw postings carry the entry's filterable attributes so a raw query never
// reads entries it will not return: flags (1 byte), creation time (8 bytes
// Unix nanoseconds, big endian) and a 64-bit hash of the session id.
const rawAttrsLen = 1 + 8 + 8

func rawAttrs(rec *memory.RawJournalRecord) []byte {
	b := make([]byte, 0, rawAttrsLen)
	b = append(b, byte(store.FlagsOf(rec)))
	b = binary.BigEndian.AppendUint64(b, uint64(rec.CreatedAt.UnixNano()))
	return binary.BigEndian.AppendUint64(b, sessionHash(rec.SessionID))
}

type rawAttr struct {
	flags   store.RawFlags
	created int64
	session uint64
}

func parseRawAttrs(b []byte) (rawAttr, bool) {
	if len(b) != rawAttrsLen {
		return rawAttr{}, false
	}
	return rawAttr{
		flags:   store.RawFlags(b[0]),
		created: int64(binary.BigEndian.Uint64(b[1:])),
		session: binary.BigEndian.Uint64(b[9:]),
	}, true
}

func sessionHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
