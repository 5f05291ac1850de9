package store

import (
	"bytes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"
)

// Encryption at rest. The formats are described in the package comment
// ("Encryption at rest"); the constants below are their bytes.

// Errors of encryption at rest.
var (
	// ErrEncrypted is returned when an encrypted value is read from a
	// database opened without a passphrase, and when records are to be
	// written there (they would be plaintext in an encrypted directory).
	// It is a server configuration problem, not an authentication failure
	// of the client: transports must not answer it with 401.
	ErrEncrypted = errors.New("record is encrypted; configure security.store_encryption_passphrase")
	// ErrWrongPassphrase means the passphrase does not match the one the
	// data directory was encrypted with. Open returns it as a
	// *WrongPassphraseError.
	ErrWrongPassphrase = errors.New("store passphrase does not match the one the data directory was encrypted with")
	// ErrNoPassphrase is returned by MigrateEncryption when the database was
	// opened without a passphrase.
	ErrNoPassphrase = errors.New("no store passphrase configured; set security.store_encryption_passphrase")
	// ErrDecrypt means an encrypted value does not authenticate under the
	// directory's key: it was written under another key, copied from
	// another record's key, or damaged. It matches ErrCorrupt.
	ErrDecrypt = fmt.Errorf("%w: encrypted value does not authenticate (other key, moved from another record, or damaged)", ErrCorrupt)
)

// WrongPassphraseError names the directory whose key check failed. It
// matches ErrWrongPassphrase.
type WrongPassphraseError struct{ Dir string }

func (e *WrongPassphraseError) Error() string {
	return fmt.Sprintf("data directory %s: the configured store passphrase (security.store_encryption_passphrase) "+
		"does not match the one the directory was encrypted with", e.Dir)
}

func (e *WrongPassphraseError) Is(target error) bool { return target == ErrWrongPassphrase }

// EncryptionState says whether a database encrypts and can decrypt.
type EncryptionState uint8

// Encryption states.
const (
	// EncryptionOff: no header and no passphrase; values are written in
	// plaintext.
	EncryptionOff EncryptionState = iota
	// EncryptionLocked: the directory has an encryption header but was
	// opened without a passphrase. Plaintext values are readable; reading
	// an encrypted one, or committing a batch that writes records, returns
	// ErrEncrypted.
	EncryptionLocked
	// EncryptionOn: opened with the directory's passphrase; new values are
	// encrypted and every value is readable.
	EncryptionOn
)

func (s EncryptionState) String() string {
	switch s {
	case EncryptionOff:
		return "off"
	case EncryptionLocked:
		return "locked"
	case EncryptionOn:
		return "on"
	}
	return fmt.Sprintf("EncryptionState(%d)", uint8(s))
}

// Header and envelope bytes.
const (
	headerVersion = 1
	kdfArgon2id   = 1 // Argon2id, version 0x13
	aeadXChaCha   = 1 // XChaCha20-Poly1305

	saltSize     = 32
	keyCheckSize = 32
	headerSize   = 12 + saltSize + keyCheckSize + 4
	offSalt      = 12
	offCheck     = offSalt + saltSize
	offCRC       = offCheck + keyCheckSize

	// formatSealed leads an encrypted value. Plaintext formats are small
	// numbers (0x01 today); 0xE0-0xEF are reserved for envelopes.
	formatSealed byte = 0xE1
	nonceSize         = chacha20poly1305.NonceSizeX
	sealOverhead      = 1 + nonceSize + chacha20poly1305.Overhead

	sessionTagSize = 16

	infoRecordKey  = "memsvc store v1 record key"
	infoSessionKey = "memsvc store v1 session index key"
	infoKeyCheck   = "memsvc store v1 key check"
)

// KDFParams are the Argon2id parameters of a directory's key derivation,
// chosen when its encryption header is created (the first Open with a
// passphrase) and read back from the header afterwards: changing
// Options.KDF later does not change an existing directory's.
type KDFParams struct {
	MemoryKiB   uint32 // memory, in KiB
	Iterations  uint32 // passes over the memory
	Parallelism uint8  // lanes
}

// DefaultKDF is the setting new directories get unless Options.KDF says
// otherwise: the Argon2id configuration the OWASP Password Storage Cheat
// Sheet recommends, 19 MiB, 2 passes, 1 lane. Deriving takes about 30 ms
// of one core, paid by every Open with the passphrase (every embedded
// CLI command). Directories created before it was the default keep the 64
// MiB, 3 passes, 4 lanes (RFC 9106's second recommendation) their header
// names.
func DefaultKDF() KDFParams { return KDFParams{MemoryKiB: 19 << 10, Iterations: 2, Parallelism: 1} }

// Limits for parameters read from a header, so a damaged header cannot make
// Open allocate unbounded memory or spin for hours.
const (
	maxKDFMemoryKiB  = 1 << 20 // 1 GiB
	maxKDFIterations = 64
	maxKDFLanes      = 64
)

func (p KDFParams) String() string {
	return fmt.Sprintf("argon2id m=%dKiB t=%d p=%d", p.MemoryKiB, p.Iterations, p.Parallelism)
}

// Check reports parameters Open refuses in Options.KDF when it writes a
// new header, and in a header it reads: every lane needs at least 8 KiB,
// and memory, passes and lanes are bounded (1 GiB, 64, 64).
func (p KDFParams) Check() error {
	if p.Iterations < 1 || p.Iterations > maxKDFIterations ||
		p.Parallelism < 1 || p.Parallelism > maxKDFLanes ||
		p.MemoryKiB < 8*uint32(p.Parallelism) || p.MemoryKiB > maxKDFMemoryKiB {
		return fmt.Errorf("KDF parameters out of range (%s)", p)
	}
	return nil
}

// header is the decoded encryption header.
type header struct {
	kdf   KDFParams
	salt  [saltSize]byte
	check [keyCheckSize]byte
}

// marshal returns the header bytes; check must already be set.
func (h *header) marshal() []byte {
	b := h.signed()
	b = append(b, h.check[:]...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable()))
}

// signed returns the bytes the key check authenticates: everything before
// it.
func (h *header) signed() []byte {
	b := make([]byte, 0, headerSize)
	b = append(b, headerVersion, kdfArgon2id, aeadXChaCha, h.kdf.Parallelism)
	b = binary.BigEndian.AppendUint32(b, h.kdf.MemoryKiB)
	b = binary.BigEndian.AppendUint32(b, h.kdf.Iterations)
	return append(b, h.salt[:]...)
}

func crcTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// parseHeader decodes and checks the framing of a header. It does not need
// the passphrase.
func parseHeader(b []byte) (*header, error) {
	if len(b) < 1 {
		return nil, fmt.Errorf("%w: empty encryption header", ErrCorrupt)
	}
	if b[0] > headerVersion {
		return nil, fmt.Errorf("encryption header version %d is newer than this memsvc supports (%d); upgrade memsvc", b[0], headerVersion)
	}
	if len(b) != headerSize {
		return nil, fmt.Errorf("%w: encryption header is %d bytes, want %d", ErrCorrupt, len(b), headerSize)
	}
	if got, want := binary.BigEndian.Uint32(b[offCRC:]), crc32.Checksum(b[:offCRC], crcTable()); got != want {
		return nil, fmt.Errorf("%w: encryption header checksum mismatch", ErrCorrupt)
	}
	if b[0] != headerVersion || b[1] != kdfArgon2id || b[2] != aeadXChaCha {
		return nil, fmt.Errorf("%w: encryption header names unknown version %d, KDF %d or cipher %d", ErrCorrupt, b[0], b[1], b[2])
	}
	h := &header{kdf: KDFParams{
		Parallelism: b[3],
		MemoryKiB:   binary.BigEndian.Uint32(b[4:]),
		Iterations:  binary.BigEndian.Uint32(b[8:]),
	}}
	if err := h.kdf.Check(); err != nil {
		return nil, fmt.Errorf("%w: encryption header: %w", ErrCorrupt, err)
	}
	copy(h.salt[:], b[offSalt:])
	copy(h.check[:], b[offCheck:])
	return h, nil
}

// masterKey runs Argon2id over the passphrase. The caller wipes the result.
func (h *header) masterKey(passphrase []byte) []byte {
	return argon2.IDKey(passphrase, h.salt[:], h.kdf.Iterations, h.kdf.MemoryKiB, h.kdf.Parallelism, 32)
}

// subkey derives a 32-byte key for one purpose from the master key.
func (h *header) subkey(master []byte, info string) []byte {
	k, err := hkdf.Key(sha256.New, master, h.salt[:], info, 32)
	if err != nil { // only for lengths HKDF cannot produce
		panic(fmt.Sprintf("store: hkdf: %v", err))
	}
	return k
}

// keyCheck is the value stored in the header for this master key: an HMAC of
// the header fields under a key derived for nothing else, so it reveals
// nothing about the record key and a changed parameter fails the check.
func (h *header) keyCheck(master []byte) [keyCheckSize]byte {
	ck := h.subkey(master, infoKeyCheck)
	defer clear(ck)
	m := hmac.New(sha256.New, ck)
	m.Write(h.signed())
	var out [keyCheckSize]byte
	m.Sum(out[:0])
	return out
}

// newHeader makes a header with a fresh random salt for a new directory and
// returns it with the directory's keys.
func newHeader(passphrase []byte, p KDFParams) (*header, *keyring, error) {
	if err := p.Check(); err != nil {
		return nil, nil, err
	}
	h := &header{kdf: p}
	_, _ = rand.Read(h.salt[:]) // never fails (crypto/rand, Go 1.24+)
	master := h.masterKey(passphrase)
	defer clear(master)
	h.check = h.keyCheck(master)
	k, err := newKeyring(h, master)
	if err != nil {
		return nil, nil, err
	}
	return h, k, nil
}

// unlock derives the keys for passphrase, or fails with ErrWrongPassphrase.
func (h *header) unlock(passphrase []byte) (*keyring, error) {
	master := h.masterKey(passphrase)
	defer clear(master)
	check := h.keyCheck(master)
	if !hmac.Equal(check[:], h.check[:]) {
		return nil, ErrWrongPassphrase
	}
	return newKeyring(h, master)
}

// keyring holds a directory's working keys. A nil *keyring means the
// database has no passphrase.
type keyring struct {
	aead     cipher.AEAD // XChaCha20-Poly1305 under the record key
	indexKey []byte      // HMAC key of protected session index keys
}

func newKeyring(h *header, master []byte) (*keyring, error) {
	rk := h.subkey(master, infoRecordKey)
	defer clear(rk) // the cipher keeps its own copy
	aead, err := chacha20poly1305.NewX(rk)
	if err != nil {
		return nil, fmt.Errorf("record cipher: %w", err)
	}
	return &keyring{aead: aead, indexKey: h.subkey(master, infoSessionKey)}, nil
}

// seal encrypts the plaintext encoding plain stored under key and wipes
// plain.
func (k *keyring) seal(key, plain []byte) []byte {
	out := k.sealKept(key, plain)
	clear(plain)
	return out
}

// sealKept is seal for a plaintext its owner keeps: plain is left as it
// was.
func (k *keyring) sealKept(key, plain []byte) []byte {
	out := make([]byte, 1+nonceSize, len(plain)+sealOverhead)
	out[0] = formatSealed
	_, _ = rand.Read(out[1 : 1+nonceSize])
	return k.aead.Seal(out, out[1:1+nonceSize], plain, sealAAD(key))
}

// open decrypts a sealed value stored under key into a new buffer.
func (k *keyring) open(key, v []byte) ([]byte, error) { return k.openTo(nil, key, v) }

// openTo decrypts into dst; v[1+nonceSize:1+nonceSize] decrypts in place.
func (k *keyring) openTo(dst, key, v []byte) ([]byte, error) {
	if len(v) < sealOverhead {
		return nil, fmt.Errorf("%w: encrypted value is truncated", ErrCorrupt)
	}
	plain, err := k.aead.Open(dst, v[1:1+nonceSize], v[1+nonceSize:], sealAAD(key))
	if err != nil {
		return nil, ErrDecrypt
	}
	return plain, nil
}

// sealAAD is the associated data of a value: the envelope byte and the
// value's full key, so a ciphertext only opens under the key it was
// written to.
func sealAAD(key []byte) []byte {
	aad := make([]byte, 0, 1+len(key))
	aad = append(aad, formatSealed)
	return append(aad, key...)
}

// sessionTag is the keyed stand-in for a session id in the protected
// session index.
func (k *keyring) sessionTag(session string) []byte {
	m := hmac.New(sha256.New, k.indexKey)
	m.Write([]byte(session))
	return m.Sum(nil)[:sessionTagSize]
}

// isSealed reports whether a stored value is an encryption envelope.
func isSealed(v []byte) bool { return len(v) > 0 && v[0] == formatSealed }

// plainValue returns the plaintext encoding of the value v stored under
// key. When owned, v belongs to the caller and is decrypted in place. wipe
// reports that the result is decrypted plaintext to clear once decoded.
func (k *keyring) plainValue(key, v []byte, owned bool) (plain []byte, wipe bool, err error) {
	if !isSealed(v) {
		return v, false, nil
	}
	if k == nil {
		return nil, false, ErrEncrypted
	}
	var dst []byte
	if owned && len(v) >= sealOverhead {
		dst = v[1+nonceSize : 1+nonceSize]
	}
	plain, err = k.openTo(dst, key, v)
	return plain, err == nil, err
}

// preparePassphrase trims surrounding white space (as the reference does,
// so a trailing newline from a secret file does not change the key). It
// returns nil for "no encryption" and an error for a blank passphrase.
func preparePassphrase(p []byte) ([]byte, error) {
	if len(p) == 0 {
		return nil, nil
	}
	t := bytes.TrimSpace(p)
	if len(t) == 0 {
		return nil, errors.New("store passphrase is blank: remove security.store_encryption_passphrase or give a non-empty value")
	}
	return t, nil
}

// setupEncryption reads or creates the encryption header and loads the
// keys for o.Passphrase (already trimmed).
func (db *DB) setupEncryption(o Options) error {
	v, err := db.Get([]byte{kindCrypt})
	switch {
	case errors.Is(err, ErrNotFound):
		if len(o.Passphrase) == 0 {
			return nil
		}
		return db.createHeader(o)
	case err != nil:
		return fmt.Errorf("read encryption header: %w", err)
	}
	h, err := parseHeader(v)
	if err != nil {
		return fmt.Errorf("data directory %s: encryption header: %w", db.dir, err)
	}
	db.hasHeader, db.kdf = true, h.kdf
	if len(o.Passphrase) == 0 {
		return nil
	}
	keys, err := h.unlock(o.Passphrase)
	if errors.Is(err, ErrWrongPassphrase) {
		return &WrongPassphraseError{Dir: db.dir}
	}
	if err != nil {
		return err
	}
	db.keys = keys
	return db.notePlainSessions()
}

// createHeader starts encryption in a directory that has no header yet.
// Encrypted values without a header were written under a key whose salt is
// gone; Open refuses them instead of mixing a second key in.
func (db *DB) createHeader(o Options) error {
	for _, p := range db.valuePrefixes() {
		found := false
		err := db.ScanPrefix(p, false, func(_, v []byte) (bool, error) {
			found = isSealed(v)
			return !found, nil
		})
		if err != nil {
			return fmt.Errorf("check for encrypted records: %w", err)
		}
		if found {
			return fmt.Errorf("data directory %s holds encrypted records but no encryption header: "+
				"the key they were written with cannot be derived; restore the directory from a backup: %w",
				db.dir, ErrCorrupt)
		}
	}
	p := o.KDF
	if p == (KDFParams{}) {
		p = DefaultKDF()
	}
	h, keys, err := newHeader(o.Passphrase, p)
	if err != nil {
		return fmt.Errorf("create encryption header: %w", err)
	}
	b := db.NewBatch()
	defer b.Close()
	b.Set([]byte{kindCrypt}, h.marshal())
	if err := b.Commit(); err != nil {
		return fmt.Errorf("write encryption header: %w", err)
	}
	db.hasHeader, db.keys, db.kdf = true, keys, p
	return db.notePlainSessions()
}

// valuePrefixes are the prefixes of every key holding a record value:
// curated records and raw entries of every namespace.
func (db *DB) valuePrefixes() [][]byte {
	var out [][]byte
	for _, ns := range db.spaces() {
		out = append(out, ns.key(kindCurated, 0), ns.key(kindRaw, 0))
	}
	return out
}

// notePlainSessions records whether the plaintext session index of any
// namespace still holds entries.
func (db *DB) notePlainSessions() error {
	for _, ns := range db.spaces() {
		found, err := db.hasPrefix(ns.key(kindSession, 0))
		if err != nil {
			return fmt.Errorf("check session index: %w", err)
		}
		if found {
			db.plainSessions.Store(true)
			return nil
		}
	}
	db.plainSessions.Store(false)
	return nil
}

// KDF returns the key derivation parameters of the directory's encryption
// header, and false when it has none.
func (db *DB) KDF() (KDFParams, bool) { return db.kdf, db.hasHeader }

// Encryption reports the database's encryption state.
func (db *DB) Encryption() EncryptionState {
	switch {
	case db.keys != nil:
		return EncryptionOn
	case db.hasHeader:
		return EncryptionLocked
	}
	return EncryptionOff
}

// forgetPlaintext sets the pebble options of a database opened with a
// passphrase so that old bytes do not outlive the data they belong to:
//
//   - Obsolete write-ahead logs are deleted instead of being kept for reuse.
//     pebble recycles a log by overwriting it from the start, so a recycled
//     log keeps the tail of its old contents (plaintext written before a
//     migration) for as long as it exists.
//   - The MANIFEST, which records the first and last key of every sstable
//     ever made (plaintext session ids and index terms among them), is
//     rewritten as a snapshot of the live tables whenever pebble's rotation
//     rule allows instead of only after 128 MiB, and MigrateEncryption
//     forces two rotations so no manifest from before it survives.
//
// manifests counts the manifests pebble creates.
func forgetPlaintext(o *pebble.Options, manifests *atomic.Int64) {
	o.Cleaner = noRecycleCleaner{}
	o.MaxManifestFileSize = 1
	o.EventListener = &pebble.EventListener{
		ManifestCreated: func(info pebble.ManifestCreateInfo) {
			if info.Err == nil {
				manifests.Add(1)
			}
		},
	}
}

// noRecycleCleaner deletes obsolete files like pebble.DeleteCleaner (its
// Clean and String are the shallower ones) and turns off the recycling of
// write-ahead logs: pebble only recycles logs when its Cleaner does not
// need file contents, which it learns from a marker method that
// pebble.ArchiveCleaner carries and that this type inherits from it. The
// grep test in migrate_test.go fails if a pebble upgrade changes that.
type noRecycleCleaner struct {
	pebble.DeleteCleaner
	archiveMarker
}

type archiveMarker struct{ pebble.ArchiveCleaner }
