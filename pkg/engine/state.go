package engine

import (
	"time"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// entry is what the engine keeps in memory about every curated record: enough
// to answer stats, walk associations and find the record on disk, and little
// else (the content stays in the store). An entry is never changed after it
// is published (a change replaces it), so it may be read without the lock
// once found.
type entry struct {
	store   memory.StoreType
	created time.Time
	// decay parameters; the score is derived from them and the clock
	stability, anchor, rate, base float64
	edges                         []edge // outgoing associations
	vector                        bool   // has an embedding
	dream                         dreamKind
	session                       uint64 // sequence key (sequenceKey), never 0
	// seqAt is where the record was put in its session's list: still its
	// place unless records were inserted or removed before it since
	// (neighboursAt checks before it trusts it).
	seqAt int
}

// score is the entry's fidelity at clock reading c.
func (e *entry) score(c float64) float64 {
	if !decays(e.store) {
		return 1
	}
	return fidelityScore((c-e.base)/secondsPerDay, e.stability, e.anchor, e.rate)
}

type edge struct {
	target memory.ID
	typ    memory.AssociationType
	weight float64
}

// dreamKind marks records that dream processing created, for the stats.
type dreamKind uint8

const (
	notDreamt dreamKind = iota
	dreamSummary
	dreamSemantic
)

// state is the engine's in-memory view of the curated records. It is guarded
// by Engine.mu.
type state struct {
	entries  map[memory.ID]*entry
	incoming map[memory.ID]map[memory.ID]struct{} // target -> sources
	sessions sessions                             // records by sequence key, in order (sequence.go)

	count [memory.StoreWorking + 1]uint32
	// sumScore holds the score sums per store at clock reading sumClock;
	// they are recomputed when the clock has moved.
	sumScore [memory.StoreWorking + 1]float64
	sumClock float64
	edges    uint32
	vectors  uint32
	dreamt   [3]uint32

	// version counts changes to entries, so a computation made outside
	// the lock can tell whether it is still current.
	version uint64

	// oldest/newest creation times; stale when the record holding them is
	// deleted, recomputed lazily.
	oldest, newest time.Time
	extremesStale  bool

	// recent orders the entries by creation time (recency.go).
	recent recency
}

// rawState counts the raw journal.
type rawState struct {
	total   uint32
	pending uint32 // what a default dream tick would process
}

func (r *rawState) add(f store.RawFlags) {
	r.total++
	if pendingDream(f) {
		r.pending++
	}
}

func (r *rawState) remove(f store.RawFlags) {
	r.total--
	if pendingDream(f) {
		r.pending--
	}
}

func newState() *state {
	return &state{
		entries:  make(map[memory.ID]*entry),
		incoming: make(map[memory.ID]map[memory.ID]struct{}),
		sessions: make(sessions),
	}
}

func entryOf(rec *memory.MemoryRecord) *entry {
	f := &rec.Fidelity
	e := &entry{
		store:     rec.Store,
		created:   rec.CreatedAt,
		stability: f.Stability,
		anchor:    f.EmotionalAnchor,
		rate:      f.DecayRate,
		base:      f.ClockBase,
		vector:    rec.Content.Embedding() != nil,
		dream:     dreamKindOf(rec),
		session:   sequenceKey(rec.Metadata, rec.CreatedAt),
	}
	if len(rec.Associations) > 0 {
		e.edges = make([]edge, len(rec.Associations))
		for i, a := range rec.Associations {
			e.edges[i] = edge{target: a.TargetID, typ: a.AssociationType, weight: a.Weight}
		}
	}
	return e
}

// put adds or replaces the entry of rec.
func (s *state) put(rec *memory.MemoryRecord) { s.putEntry(rec.ID, entryOf(rec), true) }

// putEntry adds or replaces the entry of record id. Unless recent is set,
// the entry is left out of the creation order, which the caller then
// builds whole (loadEntries).
func (s *state) putEntry(id memory.ID, e *entry, recent bool) {
	old, had := s.entries[id]
	// A record that keeps its session and creation time keeps its place.
	moved := !had || old.session != e.session || !old.created.Equal(e.created)
	var oldCreated *int64
	if had {
		s.remove(id, old, moved)
		oldCreated = ptrTo(old.created.UnixNano())
	}
	if moved {
		e.seqAt = s.sessions.insert(e.session, createdItem{created: e.created.UnixNano(), id: id})
	} else {
		e.seqAt = old.seqAt
	}
	if recent {
		s.recent.put(id, e.created.UnixNano(), oldCreated)
	}
	s.version++
	s.entries[id] = e
	s.count[e.store]++
	s.sumScore[e.store] += e.score(s.sumClock)
	s.edges += uint32(len(e.edges))
	if e.vector {
		s.vectors++
	}
	s.dreamt[e.dream]++
	for _, ed := range e.edges {
		src := s.incoming[ed.target]
		if src == nil {
			src = make(map[memory.ID]struct{}, 1)
			s.incoming[ed.target] = src
		}
		src[id] = struct{}{}
	}
	if !s.extremesStale {
		if s.oldest.IsZero() || e.created.Before(s.oldest) {
			s.oldest = e.created
		}
		if e.created.After(s.newest) {
			s.newest = e.created
		}
	}
}

// delete forgets the entry of id; incoming edges held by other records are
// the caller's business (they are rewritten on disk and re-put).
func (s *state) delete(id memory.ID) {
	if e, ok := s.entries[id]; ok {
		s.version++
		s.remove(id, e, true)
		delete(s.entries, id)
		s.recent.deleted(s)
	}
}

func ptrTo[T any](v T) *T { return &v }

// remove takes e out of the counts and edges and, when fromSession, out
// of its session's order.
func (s *state) remove(id memory.ID, e *entry, fromSession bool) {
	if fromSession {
		s.sessions.remove(e.session, createdItem{created: e.created.UnixNano(), id: id})
	}
	s.count[e.store]--
	s.sumScore[e.store] -= e.score(s.sumClock)
	s.edges -= uint32(len(e.edges))
	if e.vector {
		s.vectors--
	}
	s.dreamt[e.dream]--
	for _, ed := range e.edges {
		if src := s.incoming[ed.target]; src != nil {
			delete(src, id)
			if len(src) == 0 {
				delete(s.incoming, ed.target)
			}
		}
	}
	if e.created.Equal(s.oldest) || e.created.Equal(s.newest) {
		s.extremesStale = true
	}
}

// extremes returns the oldest and newest creation times (zero when empty).
func (s *state) extremes() (oldest, newest time.Time) {
	if s.extremesStale {
		s.oldest, s.newest = time.Time{}, time.Time{}
		for _, e := range s.entries {
			if s.oldest.IsZero() || e.created.Before(s.oldest) {
				s.oldest = e.created
			}
			if e.created.After(s.newest) {
				s.newest = e.created
			}
		}
		s.extremesStale = false
	}
	return s.oldest, s.newest
}

// sources returns the records holding an edge to id.
func (s *state) sources(id memory.ID) []memory.ID {
	src := s.incoming[id]
	out := make([]memory.ID, 0, len(src))
	for k := range src {
		out = append(out, k)
	}
	return out
}

// sums returns the score sums per store at clock reading c.
func (s *state) sums(c float64) [memory.StoreWorking + 1]float64 {
	if c != s.sumClock {
		s.sumScore = [memory.StoreWorking + 1]float64{}
		for _, e := range s.entries {
			s.sumScore[e.store] += e.score(c)
		}
		s.sumClock = c
	}
	return s.sumScore
}
