package engine

import (
	"context"
	"fmt"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Namespaces lists every namespace that exists (the default one always;
// another once something was written to it and until it is dropped), by
// name, with its record counts. It is not scoped by the context's
// namespace: transports show a caller only the namespaces it may use.
func (e *Engine) Namespaces(ctx context.Context) (*memory.NamespacesResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	resp := &memory.NamespacesResponse{Namespaces: []memory.NamespaceInfo{}}
	spaces := e.allSpaces()
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, ns := range spaces {
		info := memory.NamespaceInfo{Name: ns.name, RecordsByStore: make(map[string]uint32, len(memory.AllStores())), RawJournalRecords: ns.raw.total}
		for _, st := range memory.AllStores() {
			n := ns.st.count[st]
			info.RecordsByStore[st.String()] = n
			info.TotalRecords += n
		}
		resp.Namespaces = append(resp.Namespaces, info)
	}
	return resp, nil
}

// DropNamespace deletes namespace req.Name with every record, raw entry,
// index and setting in it, permanently and in one atomic commit, and logs
// it. Confirm must be true. The name is free again afterwards: writing to
// it creates a new, empty namespace. The default namespace cannot go away:
// dropping it empties it and resets its settings. It is not scoped by the
// context's namespace: transports check that the caller may use req.Name.
func (e *Engine) DropNamespace(ctx context.Context, req *memory.DropNamespaceRequest) (*memory.DropNamespaceResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := memory.ValidateNamespace(req.Name); err != nil {
		return nil, err
	}
	if !req.Confirm {
		return nil, memory.Invalid("confirm", "dropping namespace %s deletes every record, raw entry and setting in it permanently: set confirm to true to proceed", memory.Quote(req.Name))
	}
	// Everything that writes holds big, and background work checks
	// whether its namespace was dropped once it holds big.
	e.big.Lock()
	defer e.big.Unlock()
	if err := e.flushRecalls(); err != nil {
		return nil, err
	}
	e.mu.RLock()
	ns := e.spaces[req.Name]
	var resp memory.DropNamespaceResponse
	if ns != nil {
		resp = memory.DropNamespaceResponse{Name: ns.name, RawEntriesDeleted: ns.raw.total}
		for _, st := range memory.AllStores() {
			resp.RecordsDeleted += ns.st.count[st]
		}
	}
	e.mu.RUnlock()
	if ns == nil {
		return nil, memory.Errorf(memory.CodeNotFound, "namespace %s does not exist; GET /v1/namespaces lists those that do", memory.Quote(req.Name))
	}

	t := e.begin(ns)
	defer t.close()
	t.b.DropNamespace(ns.id)
	if ns.id == store.DefaultNS {
		// The default namespace stays: its settings are reset and its
		// indexes emptied, in place.
		for _, name := range nsSettings() {
			t.b.DeleteNSMeta(ns.id, name)
		}
		t.clear(ns.text)
		t.clear(ns.rawText)
	}
	t.audit(audit.OpNamespaceDrop, nil, nil, map[string]any{
		"records_deleted": resp.RecordsDeleted, "raw_entries_deleted": resp.RawEntriesDeleted,
	})
	if err := t.commit(); err != nil {
		return nil, fmt.Errorf("drop namespace %s: %w", ns.name, err)
	}
	e.mu.Lock()
	if ns.id == store.DefaultNS {
		ns.resetLocked()
		ns.resetSettings()
	} else {
		ns.dropped = true
		delete(e.spaces, ns.name)
	}
	e.mu.Unlock()
	if ns.id != store.DefaultNS {
		// Under snapWrite: a background snapshot of ns either finished
		// writing or will see the namespace dropped.
		e.snapWrite.Lock()
		err := e.db.RemoveDerived(snapshotName(ns.id))
		e.snapWrite.Unlock()
		if err != nil {
			e.log.Warn("remove index snapshot", "namespace", ns.name, "err", err)
		}
	}
	e.log.Info("namespace dropped", "namespace", ns.name, "records", resp.RecordsDeleted, "raw_entries", resp.RawEntriesDeleted)
	return &resp, nil
}
