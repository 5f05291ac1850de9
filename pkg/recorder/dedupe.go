package recorder

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"memsvc.dev/memsvc/pkg/spool"
)

// DefaultDedupeWindow is how many recent event identities are remembered.
const DefaultDedupeWindow = 512

// Names of the recent-events state file and its lock in the spool
// directory.
const (
	recentFile   = "recent-events"
	recentHeader = "memsvc-recorder recent-events v1"
	recentLock   = "recent-events"
	// recentLockWait bounds the wait for another recorder's update; after
	// it the cross-process check is skipped (duplicates are then caught
	// only within this run).
	recentLockWait = 2 * time.Second
)

// window remembers the last size keys, oldest evicted first.
type window struct {
	size int
	ring []dedupeKey
	next int
	set  map[dedupeKey]struct{}
}

func newWindow(size int) *window {
	return &window{size: size, set: make(map[dedupeKey]struct{}, size)}
}

func (w *window) has(k dedupeKey) bool {
	_, ok := w.set[k]
	return ok
}

func (w *window) add(k dedupeKey) {
	if w.has(k) || w.size <= 0 {
		return
	}
	if len(w.ring) < w.size {
		w.ring = append(w.ring, k)
	} else {
		delete(w.set, w.ring[w.next])
		w.ring[w.next] = k
		w.next = (w.next + 1) % w.size
	}
	w.set[k] = struct{}{}
}

// keys returns the keys oldest first.
func (w *window) keys() []dedupeKey {
	out := make([]dedupeKey, 0, len(w.ring))
	out = append(out, w.ring[w.next:]...)
	return append(out, w.ring[:w.next]...)
}

// parseRecent reads the recent-events file into a window. The file is a
// cache: anything unexpected in it is skipped.
func parseRecent(data []byte, size int) *window {
	w := newWindow(size)
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || sc.Text() != recentHeader {
		return w
	}
	for sc.Scan() {
		var k dedupeKey
		if b := sc.Bytes(); len(b) == 2*len(k) {
			if _, err := hex.Decode(k[:], b); err == nil {
				w.add(k)
			}
		}
	}
	return w
}

func formatRecent(w *window) []byte {
	var b bytes.Buffer
	b.WriteString(recentHeader + "\n")
	for _, k := range w.keys() {
		b.WriteString(k.String() + "\n")
	}
	return b.Bytes()
}

// claim records the identities of entries in the spool directory's
// recent-events file, under its lock, and returns the entries that another
// recorder process had not recorded already (entries without an identity
// always pass). It is what makes duplicate dropping work across the
// one-process-per-event hook invocations.
func claim(ctx context.Context, d *spool.Dir, size int, entries []entry) ([]entry, int, error) {
	found := false
	for i := range entries {
		found = found || entries[i].key != (dedupeKey{})
	}
	if !found {
		return entries, 0, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recentLockWait)
	defer cancel()
	unlock, err := d.Lock(ctx, recentLock)
	if err != nil {
		return entries, 0, err
	}
	defer unlock()
	data, err := d.ReadState(recentFile)
	if err != nil {
		return entries, 0, err
	}
	w := parseRecent(data, size)
	kept := entries[:0:0]
	dropped := 0
	for _, e := range entries {
		if e.key != (dedupeKey{}) {
			if w.has(e.key) {
				dropped++
				continue
			}
			w.add(e.key)
		}
		kept = append(kept, e)
	}
	if err := d.WriteCache(recentFile, formatRecent(w)); err != nil { // a cache: a crash may only forget identities
		return kept, dropped, fmt.Errorf("update %s: %w", recentFile, err)
	}
	return kept, dropped, nil
}
