package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"memsvc.dev/memsvc/pkg/engine/searchindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// Index snapshots. Building a namespace's full-text indexes from its
// records at start costs a decode and an analysis of every record; a
// snapshot of the indexes saved in the data directory (store derived
// files) is loaded instead when it is known to hold exactly what the
// records say.
//
// That is decided by a change counter per namespace, kept in the
// namespace's metadata (indexChangesKey): every commit that changes what
// the indexes hold of durable data takes a fresh number and writes it in
// the same batch as its records (txn.stampIndexes), so the counter in
// the database names the last such commit. A snapshot is labelled with
// the number of the last change it holds, captured while no commit is
// between taking its number and applying its change to the indexes
// (snapState.mu); a synced write of the counter at that moment makes
// every change it holds durable. At start, a snapshot whose label equals
// the counter in the database holds exactly the committed changes; any
// other (older, newer after a crash lost unsynced writes, damaged, of
// another format or configuration) is deleted and the indexes are built
// from the records, and numbering resumes above both the counter and the
// label, so a label is never given to two different states.
// Working-store records, which do not survive a restart, are dropped
// from a loaded index.
//
// Snapshots are written in the background once enough changes piled up
// since the last one (snapshotEvery), and at Close. They hold derived
// text, so they are written only where that may reach the disk: with
// Options.PersistIndexes, or sealed under the record key when the store
// is encrypted (store.WriteDerived seals them; no plaintext is written),
// and never with Options.NoIndexSnapshots (the configuration forbade
// search indexes on disk explicitly). Otherwise any snapshot left by an
// earlier configuration is deleted at start.

// indexChangesKey is the namespace metadata key of the change counter.
const indexChangesKey = "index_changes"

// snapshotMagic and snapshotFormat open an index snapshot file: then
// uvarint label, uvarint length and the curated index snapshot, uvarint
// length and the raw index snapshot (each checksummed by searchindex).
const (
	snapshotMagic  = "msvcnsix"
	snapshotFormat = 1
)

// snapshotEvery is the number of changes after which a namespace's
// indexes are saved in the background: at least snapshotMinChanges, and
// an eighth of its documents, so the cost of writing snapshots stays a
// small share of the cost of the changes.
const snapshotMinChanges = 2000

// snapState is a namespace's snapshot bookkeeping.
type snapState struct {
	// mu is held shared by a commit from taking its change number until
	// its change is applied to the indexes, and exclusively while a
	// snapshot is captured.
	mu      sync.RWMutex
	changes atomic.Uint64 // last change number taken
	saved   atomic.Uint64 // label of the snapshot on disk, or noSnapshot
}

// noSnapshot is snapState.saved when no snapshot of the indexes is known
// to be on disk.
const noSnapshot = ^uint64(0)

// snapshotName is the derived file name of namespace ns's indexes.
func snapshotName(ns store.NS) string { return "index-" + strconv.FormatUint(uint64(ns), 10) }

// snapshotsAllowed reports whether index snapshots may be written.
func (e *Engine) snapshotsAllowed() bool {
	return !e.opts.NoIndexSnapshots && (e.opts.PersistIndexes || e.db.Encryption() == store.EncryptionOn)
}

// stampIndexes takes a change number for every namespace whose indexes
// the change alters durably, writes it into the batch, and holds those
// namespaces' snapshot locks shared until the returned function is
// called (after the change was applied to the indexes).
func (t *txn) stampIndexes() func() {
	var spaces []*nsState
	for i := range t.changes {
		if c := &t.changes[i]; c.durable && !slices.Contains(spaces, c.ns) {
			spaces = append(spaces, c.ns)
		}
	}
	if len(spaces) == 0 {
		return func() {}
	}
	slices.SortFunc(spaces, func(a, b *nsState) int { return int(a.id) - int(b.id) })
	for _, ns := range spaces {
		ns.snap.mu.RLock()
		n := ns.snap.changes.Add(1)
		t.b.PutNSMeta(ns.id, indexChangesKey, uint64Bytes(n))
	}
	return func() {
		for _, ns := range spaces {
			ns.snap.mu.RUnlock()
		}
		for _, ns := range spaces {
			t.e.maybeSnapshot(ns)
		}
	}
}

// loadChangeCounter reads namespace ns's change counter.
func (e *Engine) loadChangeCounter(ns *nsState) error {
	v, err := e.db.GetNSMeta(ns.id, indexChangesKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("index change counter: %w", err)
	case len(v) != 8:
		return fmt.Errorf("index change counter: %w", store.ErrCorrupt)
	}
	ns.snap.changes.Store(binary.LittleEndian.Uint64(v))
	return nil
}

// openSnapshot opens the namespace's index snapshot, or returns nil when
// there is none, when it is sealed and the store has no passphrase, or
// when it cannot be opened (then it is deleted).
func (e *Engine) openSnapshot(ns *nsState) io.ReadCloser {
	name := snapshotName(ns.id)
	r, err := e.db.OpenDerived(name)
	switch {
	case errors.Is(err, store.ErrNoDerived):
		return nil
	case errors.Is(err, store.ErrEncrypted):
		// Sealed, and this start has no passphrase: it cannot read the
		// snapshot, but the next one with the passphrase can. Deleting
		// it would make that start build the indexes.
		return nil
	case err != nil:
		e.dropSnapshot(ns, err)
		return nil
	}
	return r
}

// readSnapshot reads the snapshot r opened (and closes it) and returns
// its indexes when it matches the change counter. A snapshot that does
// not match is deleted (it is not an error), and the counter moves above
// its label. It does not touch the namespace's state, so it may run
// while the records load.
func (e *Engine) readSnapshot(ns *nsState, r io.ReadCloser) (text, raw *searchindex.Index) {
	data, err := io.ReadAll(r)
	_ = r.Close()
	if err == nil {
		text, raw, err = decodeSnapshot(ns.indexConfig, data, ns.snap.changes.Load())
	}
	var stale *staleLabelError
	if errors.As(err, &stale) && stale.label > ns.snap.changes.Load() {
		ns.snap.changes.Store(stale.label)
	}
	if err != nil {
		e.dropSnapshot(ns, err)
		return nil, nil
	}
	return text, raw
}

// dropSnapshot deletes the namespace's snapshot, which is not usable for
// reason.
func (e *Engine) dropSnapshot(ns *nsState, reason error) {
	e.log.Info("index snapshot not usable; building the indexes from the records", "namespace", ns.name, "reason", reason)
	if err := e.db.RemoveDerived(snapshotName(ns.id)); err != nil {
		e.log.Warn("remove index snapshot", "namespace", ns.name, "err", err)
	}
}

// useSnapshot makes the indexes a snapshot held the namespace's, once its
// records are loaded: documents of records that are not (working-store
// records, which do not survive a restart, and records quarantined since)
// are dropped.
func (e *Engine) useSnapshot(ns *nsState, text, raw *searchindex.Index) {
	var gone []memory.ID
	text.Documents(func(id memory.ID, _ searchindex.Attrs) bool {
		if _, ok := ns.st.entries[id]; !ok {
			gone = append(gone, id)
		}
		return true
	})
	for _, id := range gone {
		text.Delete(id)
	}
	ns.text, ns.rawText = text, raw
	ns.snap.saved.Store(ns.snap.changes.Load())
}

// staleLabelError is a snapshot of a change other than the last one.
type staleLabelError struct{ label, want uint64 }

func (e *staleLabelError) Error() string {
	return fmt.Sprintf("snapshot of change %d, the records are at change %d", e.label, e.want)
}

// decodeSnapshot parses an index snapshot file labelled want.
func decodeSnapshot(cfg searchindex.Config, data []byte, want uint64) (text, raw *searchindex.Index, err error) {
	rest, ok := bytes.CutPrefix(data, []byte(snapshotMagic))
	if !ok || len(rest) == 0 || rest[0] != snapshotFormat {
		return nil, nil, errors.New("not an index snapshot of this format")
	}
	rest = rest[1:]
	label, n := binary.Uvarint(rest)
	if n <= 0 {
		return nil, nil, errors.New("bad label")
	}
	if label != want {
		return nil, nil, &staleLabelError{label, want}
	}
	rest = rest[n:]
	wantLabel := strconv.AppendUint(nil, label, 10)
	load := func() (*searchindex.Index, error) {
		l, n := binary.Uvarint(rest)
		if n <= 0 || l > uint64(len(rest)-n) {
			return nil, errors.New("bad length")
		}
		part := rest[n : n+int(l)]
		rest = rest[n+int(l):]
		ix, got, err := searchindex.LoadSnapshot(cfg, part)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(got, wantLabel) {
			return nil, fmt.Errorf("part labelled %.20q in a file labelled %d", got, label)
		}
		return ix, nil
	}
	if text, err = load(); err != nil {
		return nil, nil, err
	}
	if raw, err = load(); err != nil {
		return nil, nil, err
	}
	if len(rest) != 0 {
		return nil, nil, errors.New("trailing bytes")
	}
	return text, raw, nil
}

// saveSnapshot writes the namespace's index snapshot if changes were made
// since the last one. Calls are serialised by e.snapWrite.
func (e *Engine) saveSnapshot(ns *nsState) error {
	e.snapWrite.Lock()
	defer e.snapWrite.Unlock()
	label, text, raw, err := e.captureSnapshot(ns)
	if err != nil || text == nil {
		return err
	}
	lb := strconv.AppendUint(nil, label, 10)
	data := append([]byte(snapshotMagic), snapshotFormat)
	data = binary.AppendUvarint(data, label)
	for _, s := range []*searchindex.Snapshot{text, raw} {
		part := s.AppendTo(nil, lb)
		data = binary.AppendUvarint(data, uint64(len(part)))
		data = append(data, part...)
	}
	err = e.db.WriteDerived(snapshotName(ns.id), len(data), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("write index snapshot: %w", err)
	}
	ns.snap.saved.Store(label)
	e.log.Debug("index snapshot written", "namespace", ns.name, "label", label, "bytes", len(data))
	return nil
}

// captureSnapshot captures the namespace's indexes with no commit in
// flight, and makes the change counter equal to their label and durable
// with a synced write (which makes every earlier write durable too), so
// the snapshot never holds a change the records could lose. It returns
// nil snapshots when nothing changed since the last one.
func (e *Engine) captureSnapshot(ns *nsState) (uint64, *searchindex.Snapshot, *searchindex.Snapshot, error) {
	ns.snap.mu.Lock()
	defer ns.snap.mu.Unlock()
	dropped := e.isDropped(ns)
	label := ns.snap.changes.Load()
	if label == ns.snap.saved.Load() || dropped {
		return 0, nil, nil, nil
	}
	b := e.db.NewBatch()
	defer b.Close()
	b.PutNSMeta(ns.id, indexChangesKey, uint64Bytes(label))
	if err := b.Commit(); err != nil {
		return 0, nil, nil, fmt.Errorf("sync before index snapshot: %w", err)
	}
	return label, ns.text.Snapshot(), ns.rawText.Snapshot(), nil
}

// maybeSnapshot starts a background snapshot of ns when enough changes
// piled up since the last one and none is running.
func (e *Engine) maybeSnapshot(ns *nsState) {
	if !e.snapshotsAllowed() {
		return
	}
	pending := ns.snap.changes.Load() - ns.snap.saved.Load()
	if ns.snap.saved.Load() == noSnapshot {
		pending = ns.snap.changes.Load()
	}
	if pending < snapshotMinChanges || pending < uint64(ns.text.Stats().Docs/8) {
		return
	}
	if !e.snapRunning.CompareAndSwap(false, true) {
		return
	}
	e.snapWG.Add(1)
	go func() {
		defer e.snapWG.Done()
		defer e.snapRunning.Store(false)
		if err := e.saveSnapshot(ns); err != nil {
			e.log.Warn("index snapshot", "namespace", ns.name, "err", err)
		}
	}()
}

// saveSnapshots waits for a background snapshot and writes the snapshot
// of every namespace changed since its last one: at Close.
func (e *Engine) saveSnapshots() error {
	e.snapWG.Wait()
	if !e.snapshotsAllowed() {
		return nil
	}
	var errs []error
	for _, ns := range e.allSpaces() {
		if err := e.saveSnapshot(ns); err != nil {
			errs = append(errs, fmt.Errorf("namespace %s: %w", ns.name, err))
		}
	}
	return errors.Join(errs...)
}

// tidySnapshots deletes the snapshots of namespaces that no longer exist
// and, where derived text may not be written, every snapshot.
func (e *Engine) tidySnapshots() error {
	if e.db.Encryption() == store.EncryptionLocked {
		return nil // sealed; nothing in plaintext, and nothing to write
	}
	names, err := e.db.DerivedNames()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	if e.snapshotsAllowed() {
		for _, ns := range e.spaces {
			keep[snapshotName(ns.id)] = true
		}
	}
	for _, n := range names {
		if !keep[n] {
			if err := e.db.RemoveDerived(n); err != nil {
				return err
			}
		}
	}
	return nil
}
