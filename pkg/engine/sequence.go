package engine

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"slices"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// Conversation order. Recall ranking lets a record share in the evidence
// of the records just before and after it in its conversation (the answer
// usually follows the turn that repeats the question's words), so the
// engine knows, for every curated record, its previous and next record:
//
//   - Records that name a session form one sequence per session key,
//     ordered by creation time, then id: records stored one by one follow
//     their creation order, and the records of one batch share one
//     creation time and get increasing ids in batch order. The session key
//     is the first of these metadata values: _context.session_id (the
//     encode request's context), session_id, session, then, for records
//     that name no session, conversation_id, conversation. A session key
//     is a string or a number.
//   - Records that name no session form one sequence per creation
//     instant, which is a batch: a batch store gives all its records the
//     same creation time, while records stored one by one are each alone
//     in theirs (two stores do not happen in the same nanosecond).
//   - Where the sequence has no record before (or after) a record, its
//     sequential associations stand in: the previous record is the latest
//     target created before the record (by creation time, then id), the
//     next the earliest created after. A client links records stored one
//     by one this way.
//
// Everything here is derived from the records (metadata, creation time,
// id, associations), which are stored, exported and imported whole, so
// the order survives a restart and an export and import unchanged. It is
// namespace-local: a namespace's state holds only its records.

// createdItem is a record's place in creation order: by creation time in
// Unix nanoseconds, then id. Both the sessions here and a namespace's
// recency order (recency.go) sort records by it.
type createdItem struct {
	created int64
	id      memory.ID
}

func compareCreated(a, b createdItem) int {
	if c := cmp.Compare(a.created, b.created); c != 0 {
		return c
	}
	return compareIDs(a.id, b.id)
}

// sequenceKey is the key of the sequence a record belongs to: its
// session key, else its creation instant (its batch). Never 0.
func sequenceKey(md memory.JSON, created time.Time) uint64 {
	if k := sessionKey(md); k != 0 {
		return k
	}
	var b [9]byte
	b[0] = 'b'
	binary.BigEndian.PutUint64(b[1:], uint64(created.UnixNano()))
	return hashKey(b[:])
}

// hashKey hashes b to a sequence key, never 0.
func hashKey(b ...[]byte) uint64 {
	h := fnv.New64a()
	for _, p := range b {
		h.Write(p)
	}
	if s := h.Sum64(); s != 0 {
		return s
	}
	return 1
}

// sessionKey is the hash of the session key in metadata md, 0 when it
// names none. Session, conversation and batch keys hash apart.
func sessionKey(md memory.JSON) uint64 {
	if !bytes.Contains(md, []byte(`"session`)) && !bytes.Contains(md, []byte(`"conversation`)) {
		return 0
	}
	var v struct {
		Context struct {
			SessionID json.RawMessage `json:"session_id"`
		} `json:"_context"`
		SessionID      json.RawMessage `json:"session_id"`
		Session        json.RawMessage `json:"session"`
		ConversationID json.RawMessage `json:"conversation_id"`
		Conversation   json.RawMessage `json:"conversation"`
	}
	if json.Unmarshal(md, &v) != nil {
		return 0
	}
	for _, k := range []struct {
		kind byte
		raw  json.RawMessage
	}{
		{'s', v.Context.SessionID}, {'s', v.SessionID}, {'s', v.Session},
		{'c', v.ConversationID}, {'c', v.Conversation},
	} {
		if len(k.raw) == 0 || (k.raw[0] != '"' && k.raw[0] != '-' && (k.raw[0] < '0' || k.raw[0] > '9')) || string(k.raw) == `""` {
			continue // absent, empty, or not a string or number
		}
		return hashKey([]byte{k.kind}, k.raw)
	}
	return 0
}

// sessions holds the records of each session key in order. Guarded by
// Engine.mu with the state that holds it.
type sessions map[uint64][]createdItem

// insert puts it in its place in the list of key and returns that place
// (which later insertions and removals before it may change).
func (s sessions) insert(key uint64, it createdItem) int {
	list := s[key]
	if n := len(list); n == 0 || compareCreated(list[n-1], it) < 0 {
		s[key] = append(list, it) // the usual case: the newest record
		return n
	}
	i, found := slices.BinarySearchFunc(list, it, compareCreated)
	if !found {
		s[key] = slices.Insert(list, i, it)
	}
	return i
}

func (s sessions) remove(key uint64, it createdItem) {
	list := s[key]
	i, found := slices.BinarySearchFunc(list, it, compareCreated)
	if !found {
		return
	}
	if len(list) == 1 {
		delete(s, key)
		return
	}
	s[key] = slices.Delete(list, i, i+1)
}

// neighbour returns the record before (dir −1) or after (dir +1) id in
// its conversation. Callers hold Engine.mu.
func (s *state) neighbour(id memory.ID, dir int) (memory.ID, bool) {
	ent, ok := s.entries[id]
	if !ok {
		return memory.ID{}, false
	}
	self := createdItem{created: ent.created.UnixNano(), id: id}
	list := s.sessions[ent.session]
	if i, found := slices.BinarySearchFunc(list, self, compareCreated); found {
		if j := i + dir; j >= 0 && j < len(list) {
			return list[j].id, true
		}
	}
	return s.sequentialEdge(id, ent, self, dir)
}

// seqPlace is where a record sits in its session's list: the list's key
// and the index in it, valid while Engine.mu is held.
type seqPlace struct {
	key uint64
	i   int
	ok  bool
}

// neighboursAt returns the records before and after id in its
// conversation, with one lookup of its place; at, when set, is where id
// may sit (found as a neighbour in the same list), which spares the
// search when the list still holds it there. It also returns where the
// neighbours it found in the list sit, for looking up theirs in turn.
// Callers hold Engine.mu.
func (s *state) neighboursAt(id memory.ID, at seqPlace) (prev, next neighbourOf, prevAt, nextAt seqPlace) {
	// A record is in one list only, its session's: found where at says,
	// with a record on either side, it needs nothing of its entry.
	if at.ok {
		if list := s.sessions[at.key]; at.i > 0 && at.i+1 < len(list) && list[at.i].id == id {
			return neighbourOf{list[at.i-1].id, true}, neighbourOf{list[at.i+1].id, true},
				seqPlace{at.key, at.i - 1, true}, seqPlace{at.key, at.i + 1, true}
		}
	}
	ent, ok := s.entries[id]
	if !ok {
		return prev, next, prevAt, nextAt
	}
	self := createdItem{created: ent.created.UnixNano(), id: id}
	list := s.sessions[ent.session]
	i, found := at.i, at.ok && at.key == ent.session && at.i >= 0 && at.i < len(list) && list[at.i] == self
	if !found && ent.seqAt < len(list) && list[ent.seqAt] == self {
		i, found = ent.seqAt, true // still where it was put
	}
	if !found {
		i, found = slices.BinarySearchFunc(list, self, compareCreated)
	}
	if found {
		if i > 0 {
			prev, prevAt = neighbourOf{list[i-1].id, true}, seqPlace{ent.session, i - 1, true}
		}
		if i+1 < len(list) {
			next, nextAt = neighbourOf{list[i+1].id, true}, seqPlace{ent.session, i + 1, true}
		}
	}
	if !prev.ok {
		prev.id, prev.ok = s.sequentialEdge(id, ent, self, -1)
	}
	if !next.ok {
		next.id, next.ok = s.sequentialEdge(id, ent, self, +1)
	}
	return prev, next, prevAt, nextAt
}

// sequentialEdge returns the nearest target of ent's sequential
// associations on side dir of self.
func (s *state) sequentialEdge(id memory.ID, ent *entry, self createdItem, dir int) (memory.ID, bool) {
	var best createdItem
	found := false
	for _, ed := range ent.edges {
		if ed.typ != memory.AssocSequential || ed.target == id {
			continue
		}
		t, ok := s.entries[ed.target]
		if !ok {
			continue
		}
		it := createdItem{created: t.created.UnixNano(), id: ed.target}
		if compareCreated(it, self)*dir <= 0 {
			continue // on the other side
		}
		if !found || compareCreated(it, best)*dir < 0 {
			best, found = it, true
		}
	}
	return best.id, found
}

// conversation is the sequence view of a namespace's records that recall
// ranking reads (rank.Sequence). Callers hold Engine.mu while using it.
type conversation struct{ s *state }

// Prev returns the record just before doc in its conversation.
func (c conversation) Prev(doc memory.ID) (memory.ID, bool) { return c.s.neighbour(doc, -1) }

// Next returns the record just after doc in its conversation.
func (c conversation) Next(doc memory.ID) (memory.ID, bool) { return c.s.neighbour(doc, +1) }
