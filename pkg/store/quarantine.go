package store

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"memsvc.dev/memsvc/pkg/memory"
)

// Quarantine. A record value that cannot be read back (its bytes do not
// decode, or its encryption envelope does not open under the directory's
// key) must not stop the data directory from being used: one damaged
// record would otherwise keep the server from starting. The store
// quarantines such a value the first time it meets it: ScanRecords and
// ScanRaw (on the database and on snapshots) skip it, GetRecord and GetRaw
// return an error matching ErrCorrupt, the value stays on disk untouched,
// it is logged once, and Quarantined lists it. Writing the key again (a
// restored copy) or deleting every record of its namespace (a replacing
// import, a drop) releases it. A value encrypted under a passphrase the
// database was opened without is not damaged (ErrEncrypted) and is never
// quarantined.

// Damaged is a quarantined record value.
type Damaged struct {
	// NS is the namespace of the record.
	NS NS
	// Store is the curated store of the record, or 0 for a raw journal
	// entry.
	Store memory.StoreType
	ID    memory.ID
	// Err says what is wrong; it matches ErrCorrupt.
	Err error
}

func (d Damaged) String() string {
	what := "raw journal entry"
	if d.Store != 0 {
		what = d.Store.String() + " record"
	}
	if d.NS != DefaultNS {
		what = fmt.Sprintf("namespace %d %s", d.NS, what)
	}
	return fmt.Sprintf("%s %s: %v", what, d.ID, d.Err)
}

type quarantine struct {
	n     atomic.Int32 // len(byKey), read without the lock on every write
	mu    sync.Mutex
	byKey map[string]Damaged
}

// add quarantines the value under key and reports whether it is new.
func (q *quarantine) add(key []byte, d Damaged) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.byKey == nil {
		q.byKey = map[string]Damaged{}
	}
	if _, ok := q.byKey[string(key)]; ok {
		return false
	}
	q.byKey[string(key)] = d
	q.n.Store(int32(len(q.byKey)))
	return true
}

func (q *quarantine) has(key []byte) bool {
	if q.n.Load() == 0 {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	_, ok := q.byKey[string(key)]
	return ok
}

// release lets the values under keys go (they were rewritten), and every
// value of the namespaces in spaces (their records were all deleted).
func (q *quarantine) release(keys [][]byte, spaces []NS) {
	if q.n.Load() == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for k, d := range q.byKey {
		if slices.Contains(spaces, d.NS) {
			delete(q.byKey, k)
		}
	}
	for _, k := range keys {
		delete(q.byKey, string(k))
	}
	q.n.Store(int32(len(q.byKey)))
}

// QuarantinedCount is len(Quarantined()), without the list.
func (db *DB) QuarantinedCount() int { return int(db.quarantine.n.Load()) }

// QuarantinedIn counts the quarantined values of namespace ns.
func (db *DB) QuarantinedIn(ns NS) int {
	q := &db.quarantine
	if q.n.Load() == 0 {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, d := range q.byKey {
		if d.NS == ns {
			n++
		}
	}
	return n
}

// Quarantined lists the quarantined values by namespace: curated records
// by store and id, then raw entries by id.
func (db *DB) Quarantined() []Damaged {
	q := &db.quarantine
	q.mu.Lock()
	out := make([]Damaged, 0, len(q.byKey))
	for _, d := range q.byKey {
		out = append(out, d)
	}
	q.mu.Unlock()
	slices.SortFunc(out, func(a, b Damaged) int {
		if a.NS != b.NS {
			return cmp.Compare(a.NS, b.NS)
		}
		if a.Store != b.Store {
			// Raw entries (store 0) last.
			return cmp.Compare(a.Store-1, b.Store-1)
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	})
	return out
}

// damaged quarantines the value under key when err says it cannot be read
// and reports whether it did; the caller then skips the value.
func (db *DB) damaged(key []byte, ns NS, st memory.StoreType, err error) bool {
	if !errors.Is(err, ErrCorrupt) {
		return false
	}
	var id memory.ID
	copy(id[:], key[len(key)-min(len(key), len(id)):])
	d := Damaged{NS: ns, Store: st, ID: id, Err: err}
	if db.quarantine.add(key, d) {
		db.log.Error("record quarantined: it cannot be read; it stays on disk untouched and out of every index. "+
			"Restore it from a backup (import) or leave it; nothing else is affected",
			"record", d.String())
	}
	return true
}
