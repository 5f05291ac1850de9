package store

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"memsvc.dev/memsvc/pkg/memory"
)

// NS is a namespace's number in the key layout (see "Namespaces" in the
// package comment).
type NS uint32

// DefaultNS is the number of memory.DefaultNamespace.
const DefaultNS NS = 0

// Namespace is a live namespace: its number and its name.
type Namespace struct {
	ID   NS
	Name string
}

// States of a registry entry.
const (
	nsLive    byte = 1
	nsDropped byte = 2
)

// ErrNoNamespace is returned for a namespace number that is not live.
var ErrNoNamespace = errors.New("store: no such namespace")

// registry maps namespace names to numbers. Writers of the registry hold
// mu through their commit, so a number is assigned once.
type registry struct {
	mu     sync.RWMutex
	byName map[string]NS // live namespaces, the default one included
	names  map[NS]string // the same, by number
	next   NS            // the number the next new namespace gets
}

func registryKey(ns NS) []byte {
	return binary.BigEndian.AppendUint32([]byte{kindRegistry}, uint32(ns))
}

// loadRegistry reads the registry; the default namespace is always live.
func (db *DB) loadRegistry() error {
	r := &db.reg
	r.byName = map[string]NS{memory.DefaultNamespace: DefaultNS}
	r.names = map[NS]string{DefaultNS: memory.DefaultNamespace}
	r.next = DefaultNS + 1
	return db.ScanPrefix([]byte{kindRegistry}, false, func(k, v []byte) (bool, error) {
		if len(k) != 5 || len(v) < 2 || (v[0] != nsLive && v[0] != nsDropped) {
			return false, fmt.Errorf("%w: namespace registry entry %x", ErrCorrupt, k)
		}
		ns, name := NS(binary.BigEndian.Uint32(k[1:])), string(v[1:])
		if ns == DefaultNS || memory.ValidateNamespace(name) != nil {
			return false, fmt.Errorf("%w: namespace registry entry %x names %q", ErrCorrupt, k, name)
		}
		if ns >= r.next {
			if ns == math.MaxUint32 {
				r.next = ns // no number left; CreateNamespace refuses
			} else {
				r.next = ns + 1
			}
		}
		if v[0] == nsLive {
			if _, dup := r.byName[name]; dup {
				return false, fmt.Errorf("%w: namespace %s is registered twice", ErrCorrupt, name)
			}
			r.byName[name], r.names[ns] = ns, name
		}
		return true, nil
	})
}

// Namespaces lists the live namespaces, the default one included, by name.
func (db *DB) Namespaces() []Namespace {
	r := &db.reg
	r.mu.RLock()
	out := make([]Namespace, 0, len(r.names))
	for ns, name := range r.names {
		out = append(out, Namespace{ID: ns, Name: name})
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b Namespace) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// LookupNamespace returns the number of the live namespace name.
func (db *DB) LookupNamespace(name string) (NS, bool) {
	r := &db.reg
	r.mu.RLock()
	defer r.mu.RUnlock()
	ns, ok := r.byName[name]
	return ns, ok
}

// CreateNamespace returns the number of namespace name, registering it
// with the next unused number when it is not live. The registration is
// committed (synced) before it returns, so a number handed out is never
// handed out again, even after a crash.
func (db *DB) CreateNamespace(name string) (NS, error) {
	if err := memory.ValidateNamespace(name); err != nil {
		return 0, err
	}
	r := &db.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if ns, ok := r.byName[name]; ok {
		return ns, nil
	}
	if r.next == math.MaxUint32 {
		return 0, fmt.Errorf("create namespace %s: every namespace number of this data directory has been used", name)
	}
	ns := r.next
	b := db.NewBatch()
	defer b.Close()
	b.Set(registryKey(ns), append([]byte{nsLive}, name...))
	if err := b.Commit(); err != nil {
		return 0, fmt.Errorf("create namespace %s: %w", name, err)
	}
	r.next = ns + 1
	r.byName[name], r.names[ns] = ns, name
	return ns, nil
}

// DropNamespace deletes everything namespace ns holds: its records, raw
// entries and their indexes and, for a namespace other than the default
// one, its settings and derived indexes too (its whole key range), and
// marks it dropped in the registry, so its name is free again (a new
// namespace of that name gets a new number) and its number is never used
// again. The default namespace is only emptied: it stays live, and its
// settings (shared with the global ones under "m") and derived indexes are
// the engine's to reset. The registry changes when the batch commits.
func (b *Batch) DropNamespace(ns NS) {
	if ns == DefaultNS {
		b.DeleteAllRecords(ns)
		return
	}
	p := ns.appendPrefix(nil)
	b.DeleteRange(p, PrefixEnd(p))
	name, _ := b.db.namespaceName(ns)
	b.Set(registryKey(ns), append([]byte{nsDropped}, name...))
	b.released = append(b.released, ns)
	b.dropped = append(b.dropped, ns)
}

// namespaceName returns the name of the live namespace ns.
func (db *DB) namespaceName(ns NS) (string, bool) {
	r := &db.reg
	r.mu.RLock()
	defer r.mu.RUnlock()
	name, ok := r.names[ns]
	return name, ok
}

// forget removes dropped namespaces from the registry's maps.
func (r *registry) forget(spaces []NS) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ns := range spaces {
		if name, ok := r.names[ns]; ok {
			delete(r.names, ns)
			delete(r.byName, name)
		}
	}
}

// spaces returns the numbers of the live namespaces, in increasing order.
func (db *DB) spaces() []NS {
	r := &db.reg
	r.mu.RLock()
	out := make([]NS, 0, len(r.names))
	for ns := range r.names {
		out = append(out, ns)
	}
	r.mu.RUnlock()
	slices.Sort(out)
	return out
}
