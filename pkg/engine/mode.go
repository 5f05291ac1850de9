package engine

import (
	"context"
	"fmt"

	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Recall modes are kept per store and per namespace and persisted, so
// `set-mode perfect --scope semantic` lasts across restarts and applies to
// every recall in the namespace that does not name a mode itself.

const modeKey = "recall_mode"

// loadModes reads the namespace's persisted modes; unset stores are human.
func (e *Engine) loadModes(ns *nsState) error {
	v, ok, err := setting(e.db.GetNSMeta(ns.id, modeKey))
	if !ok {
		return err
	}
	if len(v) != len(ns.mode) {
		return fmt.Errorf("recall modes: %w", store.ErrCorrupt)
	}
	for st := range v {
		if m := memory.RecallMode(v[st]); m.Valid() {
			ns.mode[st] = m
		}
	}
	return nil
}

// modes returns the mode of every store in namespace ns (every store
// human when ns is nil, a namespace that does not exist).
func (e *Engine) modes(ns *nsState) [memory.StoreWorking + 1]memory.RecallMode {
	if ns == nil {
		var out [memory.StoreWorking + 1]memory.RecallMode
		for _, st := range memory.AllStores() {
			out[st] = memory.ModeHuman
		}
		return out
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return ns.mode
}

// SetMode implements memory.Service for the caller's namespace. A nil or
// empty scope sets every store.
func (e *Engine) SetMode(ctx context.Context, req *memory.SetModeRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !req.Mode.Valid() {
		return memory.Invalid("mode", "required: want human or perfect")
	}
	scope := req.Scope
	if len(scope) == 0 {
		scope = memory.AllStores()
	}
	for i, st := range scope {
		if !st.Valid() {
			return memory.Invalid(fmt.Sprintf("scope[%d]", i), "want one of %s", memory.StoreTypeNames())
		}
	}
	e.modeMu.Lock()
	defer e.modeMu.Unlock()
	e.big.RLock()
	defer e.big.RUnlock()
	ns, err := e.spaceFor(ctx)
	if err != nil {
		return err
	}
	next := e.modes(ns)
	for _, st := range scope {
		next[st] = req.Mode
	}
	v := make([]byte, len(next))
	for i, m := range next {
		v[i] = byte(m)
	}
	t := e.begin(ns)
	defer t.close()
	t.b.PutNSMeta(ns.id, modeKey, v)
	names := make([]string, len(scope))
	for i, st := range scope {
		names[i] = st.String()
	}
	t.audit(audit.OpSetMode, nil, scope, map[string]any{"mode": req.Mode.String(), "scope": names})
	if err := t.commit(); err != nil {
		return fmt.Errorf("set mode: %w", err)
	}
	e.mu.Lock()
	ns.mode = next
	e.mu.Unlock()
	return nil
}
