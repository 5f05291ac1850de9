package memory

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ID identifies a memory record, a raw journal entry or an archive. On the
// wire it is the lowercase hyphenated UUID form; on disk it is the 16 raw
// bytes, so key order is creation order for server-generated (version 7) ids.
// The zero ID, ID{}, is the all-zero (nil) UUID; it never names a record.
type ID [16]byte

// ParseID accepts every common UUID spelling: hyphenated, 32 hex digits,
// braced and urn:uuid: prefixed, in any letter case.
func ParseID(s string) (ID, error) {
	var id ID
	t := strings.TrimSpace(s)
	if len(t) > 9 && strings.EqualFold(t[:9], "urn:uuid:") {
		t = t[9:]
	}
	if len(t) == 38 && t[0] == '{' && t[37] == '}' {
		t = t[1:37]
	}
	switch len(t) {
	case 36:
		if t[8] != '-' || t[13] != '-' || t[18] != '-' || t[23] != '-' {
			return id, badUUID(s)
		}
		t = t[0:8] + t[9:13] + t[14:18] + t[19:23] + t[24:]
	case 32:
	default:
		return id, badUUID(s)
	}
	if _, err := hex.Decode(id[:], []byte(t)); err != nil {
		return ID{}, badUUID(s)
	}
	return id, nil
}

// badUUID is a validation error: ids come from clients.
func badUUID(s string) error {
	return &Error{Code: CodeValidation, Message: fmt.Sprintf("invalid UUID %s: want the form 01890a5d-ac96-774b-bcce-b302099a8057", Quote(s))}
}

// MustParseID is ParseID for constants in tests and examples; it panics on
// bad input.
func MustParseID(s string) ID {
	id, err := ParseID(s)
	if err != nil {
		panic(err)
	}
	return id
}

// String returns the lowercase hyphenated form.
func (id ID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:], id[10:])
	return string(b[:])
}

// IsNil reports whether id is the nil UUID.
func (id ID) IsNil() bool { return id == ID{} }

// Time returns the creation time embedded in a version 7 id, and false for
// other versions.
func (id ID) Time() (time.Time, bool) {
	if id[6]>>4 != 7 {
		return time.Time{}, false
	}
	ms := int64(id[0])<<40 | int64(id[1])<<32 | int64(id[2])<<24 | int64(id[3])<<16 | int64(id[4])<<8 | int64(id[5])
	return time.UnixMilli(ms).UTC(), true
}

// MarshalText implements encoding.TextMarshaler (and so JSON strings).
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// IDSource makes version 7 UUIDs: 48 bits of Unix milliseconds, then a
// 12-bit counter that keeps ids made within one millisecond increasing, then
// 62 random bits. It is safe for concurrent use.
type IDSource struct {
	now  func() time.Time
	rand io.Reader

	mu     sync.Mutex
	lastMS int64
	seq    uint16
}

// NewIDSource returns a source reading time from now and randomness from r.
// Nil arguments select time.Now and crypto/rand.
func NewIDSource(now func() time.Time, r io.Reader) *IDSource {
	if now == nil {
		now = time.Now
	}
	if r == nil {
		r = rand.Reader
	}
	return &IDSource{now: now, rand: r}
}

// New returns a fresh version 7 id.
func (s *IDSource) New() ID {
	var id ID
	if _, err := io.ReadFull(s.rand, id[6:]); err != nil {
		// crypto/rand does not fail on supported platforms; a broken
		// reader in a test is a programming error.
		panic(errors.New("memory: id randomness unavailable: " + err.Error()))
	}
	s.mu.Lock()
	ms := s.now().UnixMilli()
	if ms <= s.lastMS {
		// Same (or an earlier) millisecond: stay on the last one and
		// count up so ids keep increasing.
		ms = s.lastMS
		s.seq++
		if s.seq > 0x0fff {
			ms++
			s.seq = 0
		}
	} else {
		s.seq = uint16(id[6])<<8 | uint16(id[7])
		s.seq &= 0x07ff // leave headroom for the counter
	}
	s.lastMS = ms
	seq := s.seq
	s.mu.Unlock()

	id[0] = byte(ms >> 40)
	id[1] = byte(ms >> 32)
	id[2] = byte(ms >> 24)
	id[3] = byte(ms >> 16)
	id[4] = byte(ms >> 8)
	id[5] = byte(ms)
	id[6] = 0x70 | byte(seq>>8)&0x0f
	id[7] = byte(seq)
	id[8] = 0x80 | id[8]&0x3f
	return id
}
