package archive

import (
	"crypto/sha256"
	"fmt"
	"io"

	"golang.org/x/crypto/chacha20poly1305"
)

// Legacy (upstream) envelope constants: salt ‖ nonce ‖ ciphertext ‖ tag.
const (
	legacySaltSize  = 16
	legacyNonceSize = chacha20poly1305.NonceSize
	legacyOverhead  = legacySaltSize + legacyNonceSize + chacha20poly1305.Overhead
)

// legacyNames are the domain strings of the legacy key derivation: the
// memsvc spelling the reference prescribes, then the one upstream builds
// really use, so archives exported by upstream open as well.
func legacyNames() [2][2]string {
	return [2][2]string{
		{"memsvc-archive-v2", "memsvc-archive-key-v2"},
		{"cerememory-archive-v2", "cerememory-archive-key-v2"},
	}
}

// legacyKDF returns the fixed parameters of the legacy envelope.
func legacyKDF() KDFParams { return KDFParams{MemoryKiB: 64 << 10, Iterations: 3, Parallelism: 1} }

// legacyBaseKey is Argon2id over the passphrase with a fixed salt string.
func legacyBaseKey(passphrase []byte, salt string, p KDFParams) []byte {
	return p.key(passphrase, []byte(salt))
}

// legacyArchiveKey diversifies the base key with the archive's salt:
// SHA-256(SHA-256(salt ‖ base) ‖ label ‖ 0x01).
func legacyArchiveKey(base, salt []byte, label string) [32]byte {
	h := sha256.New()
	h.Write(salt)
	h.Write(base)
	var inner [32]byte
	h.Sum(inner[:0])
	h.Reset()
	h.Write(inner[:])
	h.Write([]byte(label))
	h.Write([]byte{1})
	var key [32]byte
	h.Sum(key[:0])
	clear(inner[:])
	return key
}

// openLegacy reads a whole legacy blob (at most maxPlain bytes of
// plaintext) and decrypts it, trying each spelling of the domain strings.
// The plaintext goes to a separate buffer because a failed attempt wipes
// its output, so the peak is twice the blob.
func openLegacy(r io.Reader, passphrase []byte, p KDFParams, maxPlain int64, slot func() (func(), error)) ([]byte, error) {
	blob, err := io.ReadAll(io.LimitReader(r, maxPlain+legacyOverhead+1))
	if err != nil {
		return nil, fmt.Errorf("read archive: %w", err)
	}
	if int64(len(blob)) > maxPlain+legacyOverhead {
		return nil, fmt.Errorf("%w: legacy encrypted archive exceeds %d bytes", ErrSizeLimit, maxPlain+legacyOverhead)
	}
	if len(blob) < legacyOverhead {
		return nil, fmt.Errorf("%w: %d bytes is too short for a legacy encrypted archive", ErrNotArchive, len(blob))
	}
	salt := blob[:legacySaltSize]
	nonce := blob[legacySaltSize : legacySaltSize+legacyNonceSize]
	ct := blob[legacySaltSize+legacyNonceSize:]
	out := make([]byte, 0, len(ct)-chacha20poly1305.Overhead)
	for _, names := range legacyNames() {
		base, err := deriveIn(slot, func() []byte { return legacyBaseKey(passphrase, names[0], p) })
		if err != nil {
			return nil, err
		}
		key := legacyArchiveKey(base, salt, names[1])
		clear(base)
		aead, err := chacha20poly1305.New(key[:])
		clear(key[:])
		if err != nil {
			return nil, fmt.Errorf("legacy key: %w", err)
		}
		if plain, err := aead.Open(out, nonce, ct, nil); err == nil {
			return plain, nil
		}
	}
	return nil, fmt.Errorf("%w, or damaged data, or not an archive: legacy envelope failed to authenticate", ErrWrongKey)
}
