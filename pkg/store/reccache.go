package store

import (
	"bytes"
	"sync"

	"memsvc.dev/memsvc/pkg/memory"
)

// The record cache keeps recently read curated records decoded, so a
// recall's answer (ten records, read again and again by similar
// questions) costs a map lookup and a copy per record instead of a
// pebble read and a decode. It sits under GetRecord and is kept coherent
// by the commits themselves: a batch notes every curated-record key it
// writes or deletes (Set, Delete) and whether it deletes a range (which
// may hold records), and its commit keeps those keys, or every key, out
// of the cache while pebble applies it. Every write of the store
// goes through a Batch (the engine's writes, imports, drops, the recall
// write-behind), except the encryption migration, which rewrites sealed
// values with unchanged plaintext and holds the whole cache out around
// each chunk anyway.
//
// A commit holds the keys it writes out of the cache while pebble applies
// it: before, it drops them and marks their shards busy; after, it
// clears the marks. A read that misses takes its shard's generation
// (which both steps advance) before it reads pebble, and keeps what it
// decoded only if the shard is not busy and the generation has not
// moved: a value read before or during a commit is never cached, so once
// one reader has seen a commit's value no reader gets an older one.
//
// GetRecord hands out copies (memory.CloneRecord) the caller may change; the
// cache's own copy is never seen outside it.

// DefaultRecordCacheBytes is the default size of the decoded-record cache:
// the answers of a few hundred recent recalls with 384-dimension
// embeddings, about 84 B per record at 100,000 records.
const DefaultRecordCacheBytes = 8 << 20

const recordCacheShards = 16

// recordCache is the decoded-record cache; nil (a size below 0) is off.
type recordCache struct {
	shards [recordCacheShards]cacheShard
}

// cacheShard is one part of the cache with its own lock, byte budget and
// least-recently-used order.
type cacheShard struct {
	mu    sync.Mutex
	gen   uint64 // advanced when a commit starts or ends here
	busy  int    // commits under way that write here
	m     map[string]*cachedRecord
	lru   cachedRecord // sentinel: lru.next is the most recently used
	bytes int64
	limit int64
}

// cachedRecord is a cached record in its shard's LRU list.
type cachedRecord struct {
	key        string
	rec        *memory.MemoryRecord
	size       int64
	prev, next *cachedRecord
}

// newRecordCache returns a cache of about limit bytes; nil when limit is
// not positive.
func newRecordCache(limit int64) *recordCache {
	if limit <= 0 {
		return nil
	}
	c := &recordCache{}
	for i := range c.shards {
		s := &c.shards[i]
		s.m = map[string]*cachedRecord{}
		s.lru.next, s.lru.prev = &s.lru, &s.lru
		s.limit = limit / recordCacheShards
	}
	return c
}

// shard returns the shard of a record key: by the last byte of the id,
// which is random in memsvc's ids.
func (c *recordCache) shard(key []byte) *cacheShard {
	return &c.shards[key[len(key)-1]%recordCacheShards]
}

// get returns a copy of the record cached under key; on a miss it
// returns the shard's generation to pass to put.
func (c *recordCache) get(key []byte) (*memory.MemoryRecord, uint64, bool) {
	s := c.shard(key)
	s.mu.Lock()
	e, ok := s.m[string(key)]
	if !ok {
		gen := s.gen
		s.mu.Unlock()
		return nil, gen, false
	}
	s.unlink(e)
	s.pushFront(e)
	rec := e.rec
	s.mu.Unlock()
	// The cached copy never changes (put stores a private one and
	// invalidation replaces it), so it may be copied outside the lock.
	return memory.CloneRecord(rec), 0, true
}

// put caches a private copy of rec under key, unless a commit dropped
// something from the shard since get returned gen.
func (c *recordCache) put(key []byte, gen uint64, rec *memory.MemoryRecord) {
	size := recordSize(rec)
	s := c.shard(key)
	if size > s.limit {
		return
	}
	own := memory.CloneRecord(rec)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen || s.busy > 0 {
		return
	}
	if old, ok := s.m[string(key)]; ok {
		s.remove(old)
	}
	e := &cachedRecord{key: string(key), rec: own, size: size}
	s.m[e.key] = e
	s.pushFront(e)
	s.bytes += size
	for s.bytes > s.limit {
		s.remove(s.lru.prev)
	}
}

// hold drops the records under keys (every record when all is set) and
// keeps them out of the cache until release is called: around a commit
// that writes them. With the cache off (c nil) or nothing to hold it does
// nothing.
func (c *recordCache) hold(keys [][]byte, all bool) (release func()) {
	if c == nil || (!all && len(keys) == 0) {
		return func() {}
	}
	if all {
		for i := range c.shards {
			c.shards[i].enter(nil, true)
		}
		return func() {
			for i := range c.shards {
				c.shards[i].leave()
			}
		}
	}
	for _, k := range keys {
		c.shard(k).enter(k, false)
	}
	return func() {
		for _, k := range keys {
			c.shard(k).leave()
		}
	}
}

// enter starts a commit that writes key (every key when all is set).
func (s *cacheShard) enter(key []byte, all bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy++
	s.gen++
	if all {
		clear(s.m)
		s.lru.next, s.lru.prev = &s.lru, &s.lru
		s.bytes = 0
	} else if e, ok := s.m[string(key)]; ok {
		s.remove(e)
	}
}

// leave ends a commit that entered the shard.
func (s *cacheShard) leave() {
	s.mu.Lock()
	s.busy--
	s.gen++
	s.mu.Unlock()
}

// len returns the number of cached records (tests).
func (c *recordCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

func (s *cacheShard) unlink(e *cachedRecord) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (s *cacheShard) pushFront(e *cachedRecord) {
	e.prev, e.next = &s.lru, s.lru.next
	s.lru.next.prev = e
	s.lru.next = e
}

func (s *cacheShard) remove(e *cachedRecord) {
	s.unlink(e)
	delete(s.m, e.key)
	s.bytes -= e.size
}

// isRecordKey reports whether key is the key of a curated record (see
// recordKey) in any namespace.
func isRecordKey(key []byte) bool {
	switch len(key) {
	case 18:
		return key[0] == kindCurated
	case 23:
		return key[0] == kindNamespaced && key[5] == kindCurated
	}
	return false
}

// noteWrite remembers a curated-record key the batch writes or deletes,
// for the cache to drop when the batch commits.
func (b *Batch) noteWrite(key []byte) {
	if b.db.recs != nil && isRecordKey(key) {
		b.recKeys = append(b.recKeys, bytes.Clone(key))
	}
}

// holdCached keeps what the batch writes out of the record cache until
// the returned release is called, after the commit.
func (b *Batch) holdCached() (release func()) {
	return b.db.recs.hold(b.recKeys, b.rangeDeleted)
}

// recordSize estimates the heap bytes of a decoded record.
func recordSize(rec *memory.MemoryRecord) int64 {
	n := 512 + 64*len(rec.Associations) + len(rec.Metadata)
	for i := range rec.Content.Blocks {
		b := &rec.Content.Blocks[i]
		n += 64 + len(b.Format) + len(b.Data) + 4*len(b.Embedding)
	}
	if s := rec.Content.Summary; s != nil {
		n += len(*s)
	}
	m := &rec.Meta
	n += 24 * (len(m.Goals) + len(m.Assumptions) + len(m.Tags))
	for _, list := range [3][]string{m.Goals, m.Assumptions, m.Tags} {
		for _, s := range list {
			n += len(s)
		}
	}
	n += 128*(len(m.Evidence)+len(m.Alternatives)+len(m.ContextEdges)) + 16*(len(m.SourceRecordIDs)+len(m.ParentMetaIDs))
	return int64(n)
}
