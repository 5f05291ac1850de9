package archive

import (
	"context"
	"fmt"
)

// MaxConcurrentKDF is how many key derivations a server runs at once: each
// takes DefaultKDF's 64 MiB and a fraction of a second of one core, so two
// bound an import flood to 128 MiB of Argon2 memory.
const MaxConcurrentKDF = 2

// KDFGate bounds how many key derivations run at once; the others wait
// their turn. One gate serves a whole process (the engine holds it). A nil
// *KDFGate admits everyone at once.
type KDFGate struct {
	slots chan struct{}
}

// NewKDFGate returns a gate for n derivations at a time (at least one).
func NewKDFGate(n int) *KDFGate {
	return &KDFGate{slots: make(chan struct{}, max(n, 1))}
}

// Enter waits for a free slot, or until ctx ends (then it returns ctx's
// error wrapped); call the returned function to free the slot.
func (g *KDFGate) Enter(ctx context.Context) (release func(), err error) {
	if g == nil {
		return func() {}, nil
	}
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for a key derivation slot: %w", ctx.Err())
	}
}

// Slot returns a function for EncryptOptions.KDFSlot and
// ReaderOptions.KDFSlot that enters the gate with ctx.
func (g *KDFGate) Slot(ctx context.Context) func() (func(), error) {
	return func() (func(), error) { return g.Enter(ctx) }
}

// deriveIn runs derive inside a slot when slot is not nil.
func deriveIn(slot func() (func(), error), derive func() []byte) ([]byte, error) {
	if slot == nil {
		return derive(), nil
	}
	release, err := slot()
	if err != nil {
		return nil, err
	}
	defer release()
	return derive(), nil
}
