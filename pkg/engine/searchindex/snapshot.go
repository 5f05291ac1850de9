package searchindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"memsvc.dev/memsvc/pkg/memory"
)

// snapshotMagic starts every snapshot.
const snapshotMagic = "msvcsidx"

// snapshotVersion is the snapshot format version. Bump it whenever the
// format changes; LoadSnapshot refuses other versions with ErrStale.
const snapshotVersion = 2

// Snapshot errors.
var (
	// ErrCorrupt means the bytes are not an intact snapshot: not one at
	// all, cut short, or damaged (the checksum or the structure is
	// wrong). Rebuild the index from the documents.
	ErrCorrupt = errors.New("search index snapshot is damaged")
	// ErrStale means the snapshot is intact but was written by another
	// format version, analyzer version or configuration. Rebuild the
	// index from the documents.
	ErrStale = errors.New("search index snapshot is stale")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Snapshot is a consistent view of an index at one moment, to be
// serialised with AppendTo while the index goes on changing.
type Snapshot struct {
	cfg Config
	v   *view
}

// Snapshot captures the index as it is now. It costs a copy of one bit
// per document; the documents themselves are shared (they never change).
func (ix *Index) Snapshot() *Snapshot {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return &Snapshot{cfg: ix.cfg, v: ix.c.capture()}
}

// AppendTo appends the snapshot's serialised form to dst and returns the
// result. label is the caller's (for example the change counter of the
// documents the index holds); LoadSnapshot returns it.
//
// The format (integers are uvarints unless said otherwise, strings and
// byte strings a uvarint length and the bytes, float64 little-endian IEEE
// 754 bits):
//
//	magic "msvcsidx", version, analyzer version, k1 (float64),
//	field count, then per field: name, weight (float64), b (float64),
//	  flags (1 verbatim),
//	label,
//	term count, then every term (term ids are 1, 2, ... in this order),
//	document count, then per document: id (16 bytes), Attrs.Tag,
//	  Attrs.Time (zig-zag varint), Attrs.Group (8 bytes little-endian),
//	  per field its number of terms, then the term sequence (a byte
//	  string of uvarint term ids, 0 between two texts of a field),
//	CRC-32C (Castagnoli) of everything before it, 4 bytes little-endian.
//
// Deleted documents are left out and the terms are renumbered in order
// of first use; postings and statistics are not stored (LoadSnapshot
// derives them from the term sequences).
func (s *Snapshot) AppendTo(dst, label []byte) []byte {
	v := s.v
	start := len(dst)
	dst = append(dst, snapshotMagic...)
	dst = binary.AppendUvarint(dst, snapshotVersion)
	dst = appendString(dst, s.cfg.AnalyzerVersion)
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(s.cfg.K1))
	dst = binary.AppendUvarint(dst, uint64(len(s.cfg.Fields)))
	for _, f := range s.cfg.Fields {
		dst = appendString(dst, f.Name)
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f.Weight))
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f.B))
		dst = binary.AppendUvarint(dst, fieldFlags(f))
	}
	dst = appendString(dst, string(label))

	// Documents go to a side buffer first: the terms precede them but
	// are only known once every sequence is renumbered.
	var docs, seq []byte
	remap := make([]uint32, len(v.texts))
	var terms []string
	ndocs := 0
	for i := range v.docs {
		if v.isDead(uint32(i)) {
			continue
		}
		ndocs++
		d := &v.docs[i]
		docs = append(docs, d.id[:]...)
		docs = binary.AppendUvarint(docs, uint64(d.tag))
		docs = binary.AppendVarint(docs, d.time)
		docs = binary.LittleEndian.AppendUint64(docs, d.group)
		for f := range v.nf {
			docs = binary.AppendUvarint(docs, uint64(v.lensOf(uint32(i))[f]))
		}
		seq = seq[:0]
		r := seqReader{b: v.seq(d), lens: lensArray(v.lensOf(uint32(i)))}
		for {
			t, _, ok := r.next()
			if !ok {
				break
			}
			if t != gapTerm {
				if remap[t] == 0 {
					terms = append(terms, v.texts[t])
					remap[t] = uint32(len(terms))
				}
				t = remap[t]
			}
			seq = binary.AppendUvarint(seq, uint64(t))
		}
		docs = binary.AppendUvarint(docs, uint64(len(seq)))
		docs = append(docs, seq...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(terms)))
	for _, t := range terms {
		dst = appendString(dst, t)
	}
	dst = binary.AppendUvarint(dst, uint64(ndocs))
	dst = append(dst, docs...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// Docs returns the number of documents in the snapshot.
func (s *Snapshot) Docs() int {
	n := 0
	for i := range s.v.docs {
		if !s.v.isDead(uint32(i)) {
			n++
		}
	}
	return n
}

// flagVerbatim marks a verbatim field in a snapshot's configuration.
const flagVerbatim = 1

func fieldFlags(f Field) uint64 {
	if f.Verbatim {
		return flagVerbatim
	}
	return 0
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// LoadSnapshot rebuilds an index from data written by Snapshot.AppendTo
// and returns it with the snapshot's label. It refuses data that is not
// an intact snapshot (ErrCorrupt) or that another format version,
// analyzer version or configuration wrote (ErrStale). data is not
// retained.
func LoadSnapshot(cfg Config, data []byte) (*Index, []byte, error) {
	ix, err := New(cfg)
	if err != nil {
		return nil, nil, err
	}
	if len(data) < len(snapshotMagic)+4 || string(data[:len(snapshotMagic)]) != snapshotMagic {
		return nil, nil, fmt.Errorf("%w: not a search index snapshot", ErrCorrupt)
	}
	body := data[:len(data)-4]
	if got, want := binary.LittleEndian.Uint32(data[len(body):]), crc32.Checksum(body, castagnoli); got != want {
		return nil, nil, fmt.Errorf("%w: checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	d := decoder{b: body[len(snapshotMagic):]}
	if ver := d.uvarint(); d.err == nil && ver != snapshotVersion {
		return nil, nil, fmt.Errorf("%w: format version %d, this build reads %d", ErrStale, ver, snapshotVersion)
	}
	if av := d.string(); d.err == nil && av != ix.cfg.AnalyzerVersion {
		return nil, nil, fmt.Errorf("%w: analyzer %.40q, want %.40q", ErrStale, av, ix.cfg.AnalyzerVersion)
	}
	if err := d.checkConfig(&ix.cfg); err != nil {
		return nil, nil, err
	}
	label := []byte(d.string())
	c, err := d.core(ix.cfg.Fields)
	if err != nil {
		return nil, nil, err
	}
	ix.c = c
	return ix, label, nil
}

// decoder reads a snapshot body; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s", ErrCorrupt, what)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("length")
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }

func (d *decoder) float() float64 {
	b := d.bytes(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

func (d *decoder) checkConfig(cfg *Config) error {
	k1 := d.float()
	nf := d.uvarint()
	if d.err != nil {
		return d.err
	}
	if k1 != cfg.K1 || nf != uint64(len(cfg.Fields)) {
		return fmt.Errorf("%w: k1 %v and %d fields, want %v and %d", ErrStale, k1, nf, cfg.K1, len(cfg.Fields))
	}
	for _, want := range cfg.Fields {
		f := Field{Name: d.string(), Weight: d.float(), B: d.float()}
		flags := d.uvarint()
		f.Verbatim = flags&flagVerbatim != 0
		if d.err != nil {
			return d.err
		}
		if f != want || flags&^flagVerbatim != 0 {
			return fmt.Errorf("%w: field %.40q (weight %v, b %v, flags %d), want %.40q (weight %v, b %v, flags %d)",
				ErrStale, f.Name, f.Weight, f.B, flags, want.Name, want.Weight, want.B, fieldFlags(want))
		}
	}
	return nil
}

// core decodes the terms and documents and indexes them.
func (d *decoder) core(fields []Field) (*core, error) {
	nf := len(fields)
	c := newCore(fields)
	nt := d.uvarint()
	if nt > uint64(len(d.b)) || nt >= math.MaxUint32 {
		d.fail("term count")
	}
	if d.err != nil {
		return nil, d.err
	}
	// One string holds every term; the terms are substrings of it.
	at := d.b
	spans := make([][2]int, 0, nt)
	size := 0
	for range nt {
		b := d.bytes(d.uvarint())
		if d.err != nil {
			return nil, d.err
		}
		if len(b) == 0 {
			d.fail("empty term")
			return nil, d.err
		}
		spans = append(spans, [2]int{len(at) - len(d.b) - len(b), len(b)})
		size = len(at) - len(d.b)
	}
	all := string(at[:size])
	c.texts = make([]string, 1, nt+1)
	c.termIDs = newTermTable(len(spans))
	for _, s := range spans {
		t := all[s[0] : s[0]+s[1]]
		if _, dup := c.termIDs.find(c.texts, t); dup {
			d.fail("repeated term")
			return nil, d.err
		}
		c.texts = append(c.texts, t)
		c.termIDs.insert(c.texts, uint32(len(c.texts)-1))
	}
	c.mark = make([]uint32, len(c.texts))

	ndocs := d.uvarint()
	// A document takes at least 16+1+1+8+nf+1+1 bytes.
	if ndocs > uint64(len(d.b))/uint64(28+nf) {
		d.fail("document count")
	}
	if d.err != nil {
		return nil, d.err
	}
	c.docs = make([]docEntry, 0, ndocs)
	c.dead = make([]uint64, 0, (ndocs+63)/64)
	c.ids.rehash(nil, int(ndocs))
	for range ndocs {
		var id memory.ID
		copy(id[:], d.bytes(16))
		tag := d.uvarint()
		var a Attrs
		a.Time = d.varint()
		if g := d.bytes(8); g != nil {
			a.Group = binary.LittleEndian.Uint64(g)
		}
		if tag > math.MaxUint32 {
			d.fail("document tag")
		}
		a.Tag = uint32(tag)
		var lens [MaxFields]uint32
		total := uint64(0)
		for f := range nf {
			l := d.uvarint()
			if l > math.MaxUint32 {
				d.fail("field length")
			}
			lens[f] = uint32(l)
			total += l
		}
		seq := d.bytes(d.uvarint())
		if d.err != nil {
			return nil, d.err
		}
		if total == 0 || !validSeq(seq, &lens, uint64(len(c.texts))) {
			d.fail("term sequence")
			return nil, d.err
		}
		if _, dup := c.ids.find(c.docs, id); dup {
			d.fail("repeated document")
			return nil, d.err
		}
		c.appendDoc(id, a, lens[:], seq)
	}
	if len(d.b) != 0 {
		d.fail("trailing data")
		return nil, d.err
	}
	c.buildPostings()
	return c, nil
}

// validSeq reports whether seq holds exactly lens[f] terms of each field,
// every term id below nt, and gaps only between two terms of one field.
func validSeq(seq []byte, lens *[MaxFields]uint32, nt uint64) bool {
	f, left := -1, uint32(0)
	nextField := func() {
		for left == 0 && f < MaxFields-1 {
			f++
			left = lens[f]
		}
	}
	nextField()
	afterTerm := false // the previous token is a term of the current field
	for len(seq) > 0 {
		v, n := binary.Uvarint(seq)
		if n <= 0 {
			return false
		}
		seq = seq[n:]
		if v == gapTerm {
			if !afterTerm {
				return false
			}
			afterTerm = false
			continue
		}
		if v >= nt || left == 0 {
			return false
		}
		left--
		afterTerm = true
		if left == 0 {
			afterTerm = false // a gap may not end a field
			nextField()
		}
	}
	return left == 0 && !afterTerm
}
