package engine

import (
	"context"

	"memsvc.dev/memsvc/pkg/memory"
)

// This engine keeps every record and raw entry in one pool: the default
// namespace. Namespaces and DropNamespace say so honestly, so the
// transports, the client and the commands that list and drop namespaces
// can be built and tested against the memory.Service contract while the
// engine learns to keep namespaces apart.

// Namespaces lists the default namespace with the engine's counts.
func (e *Engine) Namespaces(ctx context.Context) (*memory.NamespacesResponse, error) {
	s, err := e.Stats(ctx)
	if err != nil {
		return nil, err
	}
	info := memory.NamespaceInfo{
		Name:              memory.DefaultNamespace,
		TotalRecords:      s.TotalRecords,
		RecordsByStore:    make(map[string]uint32, len(s.RecordsByStore)),
		RawJournalRecords: s.RawJournalRecords,
	}
	for st, n := range s.RecordsByStore {
		info.RecordsByStore[st.String()] = n
	}
	return &memory.NamespacesResponse{Namespaces: []memory.NamespaceInfo{info}}, nil
}

// StatsAll is Stats: the one pool is every namespace there is.
func (e *Engine) StatsAll(ctx context.Context) (*memory.Stats, error) { return e.Stats(ctx) }

// DropNamespace refuses the default namespace and finds no other.
func (e *Engine) DropNamespace(ctx context.Context, req *memory.DropNamespaceRequest) (*memory.DropNamespaceResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := memory.ValidateNamespace(req.Name); err != nil {
		return nil, err
	}
	if !req.Confirm {
		return nil, memory.Errorf(memory.CodeForgetUnconfirmed, "dropping namespace %s deletes everything in it permanently; set confirm to true", memory.Quote(req.Name))
	}
	if req.Name == memory.DefaultNamespace {
		return nil, memory.Invalid("name", "the default namespace cannot be dropped; forget its records instead")
	}
	return nil, memory.Errorf(memory.CodeNotFound, "namespace %s not found", memory.Quote(req.Name))
}
