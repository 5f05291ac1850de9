package engine

import (
	"slices"

	"memsvc.dev/memsvc/pkg/memory"
)

// Spreading activation: a weighted breadth-first walk along outgoing
// associations. The source starts at 1; crossing an edge multiplies by its
// weight and by activationDecay; nodes under activationFloor are not
// reached. A node keeps the best activation (and path) found for it.
const (
	activationDecay = 0.5
	activationFloor = 0.05
)

type activated struct {
	id    memory.ID
	level float64
	path  []memory.ID // from the source to id, both included
	edge  memory.AssociationType
	hop   int
}

// spreadLocked activates from source up to depth hops, following edges of
// weight ≥ minWeight whose type passes types (nil: all). The result
// excludes the source and is ordered by activation, then id. Only records
// of namespace ns are reached. Callers hold e.mu (read or write).
func spreadLocked(ns *nsState, source memory.ID, depth int, minWeight float64, types map[memory.AssociationType]bool) []activated {
	type item struct {
		id    memory.ID
		level float64
		path  []memory.ID
		hop   int
	}
	best := map[memory.ID]*activated{}
	queue := []item{{source, 1, []memory.ID{source}, 0}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if it.id != source {
			if b := best[it.id]; b != nil && it.level < b.level {
				continue // a better path was found meanwhile
			}
		}
		if it.hop >= depth {
			continue
		}
		ent := ns.st.entries[it.id]
		if ent == nil {
			continue
		}
		for _, ed := range ent.edges {
			if ed.weight < minWeight || (types != nil && !types[ed.typ]) {
				continue
			}
			level := it.level * ed.weight * activationDecay
			if level < activationFloor || ed.target == source || slices.Contains(it.path, ed.target) {
				continue
			}
			if _, ok := ns.st.entries[ed.target]; !ok {
				continue // edge to a record that is gone (or not of this namespace)
			}
			if b := best[ed.target]; b != nil && level <= b.level {
				continue
			}
			path := append(slices.Clone(it.path), ed.target)
			best[ed.target] = &activated{id: ed.target, level: level, path: path, edge: ed.typ, hop: it.hop + 1}
			queue = append(queue, item{ed.target, level, path, it.hop + 1})
		}
	}
	out := make([]activated, 0, len(best))
	for _, a := range best {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b activated) int { return byScoreThenID(a.level, b.level, a.id, b.id) })
	return out
}

// lockRecords takes the striped locks of every id (in stripe order, so two
// callers cannot deadlock) and returns their unlock.
func (e *Engine) lockRecords(ids []memory.ID) func() {
	var take [len(e.locks)]bool
	for _, id := range ids {
		take[e.stripe(id)] = true
	}
	for s, ok := range take {
		if ok {
			e.locks[s].Lock()
		}
	}
	return func() {
		for s, ok := range take {
			if ok {
				e.locks[s].Unlock()
			}
		}
	}
}
