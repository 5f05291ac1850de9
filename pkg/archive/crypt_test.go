package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"

	"memsvc.dev/memsvc/pkg/memory"
)

const testPass = "correct horse battery staple"

// smallChunks encrypts with 1 KiB chunks so a small archive spans many.
func smallChunks() *EncryptOptions {
	return &EncryptOptions{Passphrase: []byte(testPass), KDF: tinyKDF(), ChunkSize: 1024}
}

func withPass(p string) ReaderOptions { return ReaderOptions{Passphrase: []byte(p)} }

// countingRand is a deterministic Rand: 0, 1, 2, ...
type countingRand struct{ next byte }

func (r *countingRand) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.next
		r.next++
	}
	return len(p), nil
}

// encryptedSample writes the sample records encrypted with 1 KiB chunks
// and returns the archive and its plaintext.
func encryptedSample(t testing.TB) (enc, plain []byte) {
	t.Helper()
	plain, _ = writeArchive(t, Version2, sampleRecords(), sampleRaw(), WriterOptions{})
	enc, _ = writeArchive(t, Version2, sampleRecords(), sampleRaw(), WriterOptions{Encryption: smallChunks()})
	return enc, plain
}

func TestEncryptedRoundTrip(t *testing.T) {
	recs, raws := sampleRecords(), sampleRaw()
	for _, tc := range []struct {
		name    string
		version string
		raws    []*memory.RawJournalRecord
		chunk   int
	}{
		{"v1 1KiB chunks", Version1, nil, 1024},
		{"v2 1KiB chunks", Version2, raws, 1024},
		{"v2 default chunks", Version2, raws, 0},
		{"v2 1MiB chunks", Version2, raws, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain, psum := writeArchive(t, tc.version, recs, tc.raws, WriterOptions{})
			eo := &EncryptOptions{Passphrase: []byte(testPass), KDF: tinyKDF(), ChunkSize: tc.chunk}
			enc, esum := writeArchive(t, tc.version, recs, tc.raws, WriterOptions{Encryption: eo})

			chunk := tc.chunk
			if chunk == 0 {
				chunk = 64 << 10
			}
			chunks := (len(plain) + chunk - 1) / chunk
			if want := headerSize + len(plain) + chunks*tagSize; len(enc) != want {
				t.Errorf("encrypted size %d, want %d (%d chunks)", len(enc), want, chunks)
			}
			if esum.Checksum != psum.Checksum || esum.Format != FormatEncrypted || esum.Size != int64(len(enc)) {
				t.Errorf("summary %+v; plaintext checksum %s, size %d", esum, psum.Checksum, len(enc))
			}
			if !IsEncrypted(enc) || bytes.Contains(enc, []byte("café")) {
				t.Error("output does not look encrypted")
			}

			entries, rsum, err := readAll(enc, withPass(testPass))
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			checkEntries(t, entries, recs, tc.raws)
			if rsum != esum {
				t.Errorf("reader summary %+v, writer summary %+v", rsum, esum)
			}

			// The envelope holds exactly the plaintext archive.
			d, err := NewDecryptReader(bytes.NewReader(enc), withPass(testPass))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(d)
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("decrypted payload differs from the plaintext archive (err %v)", err)
			}
		})
	}
}

// TestEnvelopeLayout pins the header bytes for fixed randomness.
func TestEnvelopeLayout(t *testing.T) {
	var buf bytes.Buffer
	ew, err := NewEncryptWriter(&buf, EncryptOptions{Passphrase: []byte(testPass), KDF: tinyKDF(), Rand: &countingRand{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ew.Close(); err != nil {
		t.Fatal(err)
	}
	h := buf.Bytes()
	want := "4d454d5356432d434d4100" + // magic "MEMSVC-CMA\x00"
		"01" + "01" + // version, kdf
		"00000040" + "00000001" + "01" + // m=64 KiB, t=1, p=1
		"10" + // chunk shift 16
		"000102030405060708090a0b0c0d0e0f" + // salt
		"101112131415161718191a1b1c1d1e1f" // nonce prefix
	if got := hex.EncodeToString(h[:offKeyCheck]); got != want {
		t.Errorf("header\n got %s\nwant %s", got, want)
	}
	// Key check: HKDF-SHA256 of the Argon2id master key, computed here
	// from the primitives.
	master := argon2.IDKey([]byte(testPass), h[offSalt:offSalt+saltSize], 1, 64, 1, 32)
	kc := hkdfSHA256(master, "memsvc-cma v1 key check", 16)
	if !bytes.Equal(h[offKeyCheck:headerSize], kc) {
		t.Errorf("key check %x, want %x", h[offKeyCheck:headerSize], kc)
	}
	// An empty payload is one sealed empty chunk: just a tag, opened with
	// counter 0, the last flag and the header as associated data.
	if len(h) != headerSize+tagSize {
		t.Fatalf("empty envelope is %d bytes, want %d", len(h), headerSize+tagSize)
	}
	aead, err := chacha20poly1305.NewX(hkdfSHA256(master, "memsvc-cma v1 payload key", 32))
	if err != nil {
		t.Fatal(err)
	}
	nonce := append(append([]byte{}, h[offNoncePrefix:offNoncePrefix+16]...), make([]byte, 8)...)
	ad := append(append([]byte{}, h[:headerSize]...), 1)
	if _, err := aead.Open(nil, nonce, h[headerSize:], ad); err != nil {
		t.Errorf("final chunk does not open as documented: %v", err)
	}
}

// hkdfSHA256 is RFC 5869 with an empty salt, written out so the test does
// not share code with the implementation.
func hkdfSHA256(secret []byte, info string, n int) []byte {
	prk := hmacSHA256(make([]byte, sha256.Size), secret)
	var out, prev []byte
	for i := byte(1); len(out) < n; i++ {
		prev = hmacSHA256(prk, append(append(append([]byte{}, prev...), info...), i))
		out = append(out, prev...)
	}
	return out[:n]
}

func hmacSHA256(key, msg []byte) []byte {
	var ipad, opad [64]byte
	copy(ipad[:], key)
	copy(opad[:], key)
	for i := range ipad {
		ipad[i] ^= 0x36
		opad[i] ^= 0x5c
	}
	inner := sha256.Sum256(append(ipad[:], msg...))
	outer := sha256.Sum256(append(opad[:], inner[:]...))
	return outer[:]
}

func TestEncryptWriterSizes(t *testing.T) {
	for _, n := range []int{0, 1, 1023, 1024, 1025, 2048, 5000} {
		payload := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		var buf bytes.Buffer
		ew, err := NewEncryptWriter(&buf, *smallChunks())
		if err != nil {
			t.Fatal(err)
		}
		// Odd write sizes cross chunk boundaries in every way.
		for p := payload; len(p) > 0; {
			k := min(len(p), 333)
			if _, err := ew.Write(p[:k]); err != nil {
				t.Fatal(err)
			}
			p = p[k:]
		}
		if err := ew.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := ew.Write([]byte("x")); err == nil {
			t.Error("write after Close succeeded")
		}
		chunks := max(1, (n+1023)/1024)
		if want := headerSize + n + chunks*tagSize; buf.Len() != want {
			t.Errorf("%d bytes: envelope %d bytes, want %d", n, buf.Len(), want)
		}
		d, err := NewDecryptReader(&buf, withPass(testPass))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(d)
		if err != nil || !bytes.Equal(got, payload) {
			t.Errorf("%d bytes: round trip failed: %v", n, err)
		}
	}
}

func TestEncryptOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    EncryptOptions
		want error
	}{
		{"empty passphrase", EncryptOptions{KDF: tinyKDF()}, ErrEmptyPassphrase},
		{"zero iterations", EncryptOptions{Passphrase: []byte("x"), KDF: KDFParams{MemoryKiB: 64, Parallelism: 1}}, nil},
		{"memory below 8p", EncryptOptions{Passphrase: []byte("x"), KDF: KDFParams{MemoryKiB: 8, Iterations: 1, Parallelism: 2}}, nil},
		{"above the default limit", EncryptOptions{Passphrase: []byte("x"), KDF: KDFParams{MemoryKiB: 1 << 30, Iterations: 1, Parallelism: 1}}, ErrTooLarge},
		{"chunk not a power of two", EncryptOptions{Passphrase: []byte("x"), KDF: tinyKDF(), ChunkSize: 1000}, nil},
		{"chunk too small", EncryptOptions{Passphrase: []byte("x"), KDF: tinyKDF(), ChunkSize: 512}, nil},
		{"chunk too big", EncryptOptions{Passphrase: []byte("x"), KDF: tinyKDF(), ChunkSize: 2 << 20}, nil},
	} {
		_, err := NewEncryptWriter(io.Discard, tc.o)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	_, err := NewWriter(io.Discard, Header{Version: Version1, Timestamp: exportTime}, WriterOptions{Encryption: &EncryptOptions{}})
	if !errors.Is(err, ErrEmptyPassphrase) {
		t.Errorf("NewWriter with an empty passphrase: %v", err)
	}
}

func TestEncryptedKeys(t *testing.T) {
	enc, _ := encryptedSample(t)
	for _, tc := range []struct {
		name string
		pass string
		want error
	}{
		{"no passphrase", "", ErrNeedKey},
		{"wrong passphrase", "Correct horse battery staple", ErrWrongKey},
		{"passphrase is not trimmed", testPass + " ", ErrWrongKey},
		{"passphrase prefix", testPass[:5], ErrWrongKey},
	} {
		_, err := Verify(bytes.NewReader(enc), withPass(tc.pass))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		for _, other := range []error{ErrCorrupt, ErrNotArchive} {
			if errors.Is(err, other) {
				t.Errorf("%s: %v must not also be %v", tc.name, err, other)
			}
		}
	}
	// A plaintext archive is read even when a passphrase is given; the
	// caller learns the format.
	plain, _ := writeArchive(t, Version1, nil, nil, WriterOptions{})
	r, err := NewReader(bytes.NewReader(plain), withPass(testPass))
	if err != nil || r.Format() != FormatPlain {
		t.Errorf("plaintext with a passphrase: %v, format %v", err, r.Format())
	}
}

// chunkOffset is where chunk i starts in an envelope with 1 KiB chunks.
func chunkOffset(i int) int { return headerSize + i*(1024+tagSize) }

func TestEncryptedTruncation(t *testing.T) {
	enc, _ := encryptedSample(t)
	n := (len(enc) - headerSize + 1024 + tagSize - 1) / (1024 + tagSize)
	if n < 4 {
		t.Fatalf("sample spans %d chunks; the test wants at least 4", n)
	}
	type cut struct {
		at       int
		want     error
		mentions string
	}
	var cuts []cut
	for at := 1; at < len(magic); at++ {
		cuts = append(cuts, cut{at, ErrTruncated, "envelope header"})
	}
	for at := len(magic); at <= headerSize; at++ {
		cuts = append(cuts, cut{at, ErrTruncated, "envelope header"})
	}
	for i := 1; i < n; i++ {
		b := chunkOffset(i)
		cuts = append(cuts,
			cut{b, ErrTruncated, fmt.Sprintf("input ends after chunk %d", i-1)},
			cut{b + 1, ErrTruncated, fmt.Sprintf("input ends after chunk %d", i-1)},
			cut{b + tagSize - 1, ErrTruncated, fmt.Sprintf("input ends after chunk %d", i-1)},
			cut{b + tagSize, ErrCorrupt, fmt.Sprintf("chunk %d ", i)},
			cut{b + 500, ErrCorrupt, fmt.Sprintf("chunk %d ", i)},
			cut{b - 1, ErrCorrupt, fmt.Sprintf("chunk %d ", i-1)},
		)
	}
	cuts = append(cuts, cut{len(enc) - 1, ErrCorrupt, fmt.Sprintf("chunk %d ", n-1)})
	for _, c := range cuts {
		if c.at >= len(enc) {
			continue // past the end of a short final chunk
		}
		if c.at == headerSize {
			c.mentions = "no chunks"
		}
		_, err := Verify(bytes.NewReader(enc[:c.at]), withPass(testPass))
		if !errors.Is(err, ErrCorrupt) || !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.mentions) {
			t.Errorf("cut at %d: %v; want %v mentioning %q", c.at, err, c.want, c.mentions)
		}
		if c.want == ErrCorrupt && errors.Is(err, ErrTruncated) {
			t.Errorf("cut at %d inside a chunk: %v claims a clean truncation", c.at, err)
		}
	}
	// Trailing bytes after the final chunk.
	_, err := Verify(bytes.NewReader(append(append([]byte{}, enc...), 0)), withPass(testPass))
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: %v, want ErrCorrupt", err)
	}
}

func TestEncryptedFlips(t *testing.T) {
	enc, _ := encryptedSample(t)
	last := (len(enc) - headerSize - 1) / (1024 + tagSize)
	for _, tc := range []struct {
		name     string
		off      int
		mask     byte
		want     error
		mentions string
	}{
		{"magic", 0, 0x01, ErrCorrupt, "magic"},
		{"magic, two bytes", 5, 0x01, ErrCorrupt, "magic"}, // with the next case applied too
		{"version", offVersion, 0x02, ErrUnsupported, "envelope version 3"},
		{"kdf id", offKDF, 0x04, ErrUnsupported, "KDF 5"},
		{"memory, high byte", offMemory, 0x80, ErrTooLarge, "exceed the limit"},
		{"memory, low byte", offMemory + 3, 0x01, ErrWrongKey, "key check"},
		{"iterations to zero", offIterations + 3, 0x01, ErrCorrupt, "invalid KDF parameters"},
		{"parallelism", offParallelism, 0x02, ErrTooLarge, "exceed the limit"},
		{"chunk shift", offChunkShift, 0x01, ErrCorrupt, "chunk 0 "},
		{"chunk shift out of range", offChunkShift, 0x40, ErrCorrupt, "chunk shift"},
		{"salt", offSalt + 7, 0x10, ErrWrongKey, "key check"},
		{"nonce prefix", offNoncePrefix + 3, 0x01, ErrCorrupt, "chunk 0 "},
		{"key check", offKeyCheck + 15, 0x01, ErrWrongKey, "key check"},
		{"first chunk", headerSize, 0x01, ErrCorrupt, "chunk 0 "},
		{"first tag", headerSize + 1024 + 3, 0x01, ErrCorrupt, "chunk 0 "},
		{"second chunk", chunkOffset(1) + 100, 0x01, ErrCorrupt, "chunk 1 "},
		{"last chunk", chunkOffset(last) + 1, 0x01, ErrCorrupt, fmt.Sprintf("chunk %d ", last)},
		{"last tag", len(enc) - 1, 0x01, ErrCorrupt, fmt.Sprintf("chunk %d ", last)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := append([]byte{}, enc...)
			bad[tc.off] ^= tc.mask
			if tc.name == "magic, two bytes" {
				bad[6] ^= 0x01
			}
			_, err := Verify(bytes.NewReader(bad), withPass(testPass))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.mentions) {
				t.Fatalf("%v; want %v mentioning %q", err, tc.want, tc.mentions)
			}
		})
	}
}

func TestEncryptedReorder(t *testing.T) {
	enc, _ := encryptedSample(t)
	chunk := func(b []byte, i int) []byte { return b[chunkOffset(i):chunkOffset(i+1)] }
	swap := func(i, j int) func(b []byte) []byte {
		return func(b []byte) []byte {
			ci := append([]byte{}, chunk(b, i)...)
			copy(chunk(b, i), chunk(b, j))
			copy(chunk(b, j), ci)
			return b
		}
	}
	for _, tc := range []struct {
		name     string
		edit     func(b []byte) []byte
		mentions string
	}{
		{"swap 0 and 1", swap(0, 1), "chunk 0 "},
		{"swap 1 and 2", swap(1, 2), "chunk 1 "},
		{"repeat 1 as 2", func(b []byte) []byte {
			copy(chunk(b, 2), chunk(b, 1))
			return b
		}, "chunk 2 "},
		{"drop 1", func(b []byte) []byte {
			return append(b[:chunkOffset(1)], b[chunkOffset(2):]...)
		}, "chunk 1 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.edit(append([]byte{}, enc...))
			_, err := Verify(bytes.NewReader(bad), withPass(testPass))
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.mentions) {
				t.Fatalf("%v; want ErrCorrupt mentioning %q", err, tc.mentions)
			}
		})
	}
	// Another archive's chunk under the same passphrase does not fit
	// either: its key and nonce prefix differ.
	other, _ := encryptedSample(t)
	bad := append([]byte{}, enc...)
	copy(bad[chunkOffset(1):chunkOffset(2)], other[chunkOffset(1):chunkOffset(2)])
	if _, err := Verify(bytes.NewReader(bad), withPass(testPass)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("chunk from another archive: %v", err)
	}
}

func TestEnvelopeLimits(t *testing.T) {
	enc, plain := encryptedSample(t)

	// A hostile header asking for 4 GiB of Argon2 memory is refused
	// before any key derivation.
	bad := append([]byte{}, enc...)
	binary.BigEndian.PutUint32(bad[offMemory:], 0xffffffff)
	if _, err := Verify(bytes.NewReader(bad), withPass(testPass)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge KDF memory: %v, want ErrTooLarge", err)
	}
	// The reader's own limit applies.
	o := withPass(testPass)
	o.KDFLimit = KDFParams{MemoryKiB: 32, Iterations: 1, Parallelism: 1}
	if _, err := Verify(bytes.NewReader(enc), o); !errors.Is(err, ErrTooLarge) {
		t.Errorf("KDF above the caller's limit: %v, want ErrTooLarge", err)
	}
	// MaxSize counts decrypted bytes.
	o = withPass(testPass)
	o.MaxSize = int64(len(plain) - 1)
	if _, err := Verify(bytes.NewReader(enc), o); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxSize: %v, want ErrTooLarge", err)
	}
	o.MaxSize = int64(len(plain))
	if _, err := Verify(bytes.NewReader(enc), o); err != nil {
		t.Errorf("MaxSize equal to the size: %v", err)
	}
	// Not an envelope at all.
	if _, err := NewDecryptReader(strings.NewReader("hello"), withPass(testPass)); !errors.Is(err, ErrNotArchive) {
		t.Errorf("NewDecryptReader(hello): %v, want ErrNotArchive", err)
	}
	if _, err := NewDecryptReader(bytes.NewReader(nil), withPass(testPass)); !errors.Is(err, ErrNotArchive) {
		t.Errorf("NewDecryptReader(empty): %v, want ErrNotArchive", err)
	}
}

func TestEncryptionIsRandomised(t *testing.T) {
	a, _ := encryptedSample(t)
	b, _ := encryptedSample(t)
	if bytes.Equal(a[offSalt:offKeyCheck], b[offSalt:offKeyCheck]) || bytes.Equal(a[headerSize:], b[headerSize:]) {
		t.Error("two encryptions share salt, nonce prefix or ciphertext")
	}
	fixed := func() []byte {
		o := smallChunks()
		o.Rand = &countingRand{}
		data, _ := writeArchive(t, Version1, sampleRecords(), nil, WriterOptions{Encryption: o})
		return data
	}
	if !bytes.Equal(fixed(), fixed()) {
		t.Error("same randomness, different output")
	}
}

// buildLegacy follows the reference construction of the upstream envelope
// with x/crypto directly: salt ‖ nonce ‖ ChaCha20-Poly1305(plaintext).
func buildLegacy(t testing.TB, pass string, salt, nonce, plain []byte, p KDFParams) []byte {
	return buildLegacyNamed(t, "memsvc", pass, salt, nonce, plain, p)
}

// buildLegacyNamed uses the domain strings of the given project name:
// "memsvc" or upstream's "cerememory".
func buildLegacyNamed(t testing.TB, project, pass string, salt, nonce, plain []byte, p KDFParams) []byte {
	t.Helper()
	base := argon2.IDKey([]byte(pass), []byte(project+"-archive-v2"), p.Iterations, p.MemoryKiB, p.Parallelism, 32)
	inner := sha256.Sum256(append(append([]byte{}, salt...), base...))
	key := sha256.Sum256(append(append(inner[:], project+"-archive-key-v2"...), 0x01))
	aead, err := chacha20poly1305.New(key[:])
	if err != nil {
		t.Fatal(err)
	}
	return append(append(append([]byte{}, salt...), nonce...), aead.Seal(nil, nonce, plain, nil)...)
}

func TestLegacyEnvelope(t *testing.T) {
	plain, psum := writeArchive(t, Version2, sampleRecords(), sampleRaw(), WriterOptions{})
	salt := []byte("0123456789abcdef")
	nonce := []byte{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0xff, 0xfe}
	blob := buildLegacy(t, testPass, salt, nonce, plain, tinyKDF())
	opts := func(pass string) ReaderOptions {
		return ReaderOptions{Passphrase: []byte(pass), LegacyKDF: tinyKDF()}
	}

	if Detect(blob) != FormatUnknown {
		t.Fatalf("Detect(legacy) = %v, want unknown", Detect(blob))
	}
	r, err := NewReader(bytes.NewReader(blob), opts(testPass))
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	if r.Format() != FormatLegacy {
		t.Errorf("format %v, want legacy", r.Format())
	}
	entries, sum, err := readAll(blob, opts(testPass))
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	checkEntries(t, entries, sampleRecords(), sampleRaw())
	if sum.Checksum != psum.Checksum || sum.Size != int64(len(blob)) || sum.Format != FormatLegacy {
		t.Errorf("summary %+v", sum)
	}

	// An archive made by upstream itself uses its own domain strings.
	upstream := buildLegacyNamed(t, "cerememory", testPass, salt, nonce, plain, tinyKDF())
	if s, err := Verify(bytes.NewReader(upstream), opts(testPass)); err != nil || s.Checksum != psum.Checksum {
		t.Errorf("upstream-named legacy archive: %+v, %v", s, err)
	}
	if _, err := Verify(bytes.NewReader(buildLegacyNamed(t, "other", testPass, salt, nonce, plain, tinyKDF())), opts(testPass)); !errors.Is(err, ErrWrongKey) {
		t.Errorf("unknown domain strings: %v, want ErrWrongKey", err)
	}

	// A salt that starts like JSON still goes to the legacy path: the
	// binary nonce behind it gives it away.
	jsonSalt := []byte(`{"version":"1.0"`)
	blob2 := buildLegacy(t, testPass, jsonSalt, nonce, plain, tinyKDF())
	if _, err := Verify(bytes.NewReader(blob2), opts(testPass)); err != nil {
		t.Errorf("legacy blob with a JSON-looking salt: %v", err)
	}

	tampered := append([]byte{}, blob...)
	tampered[len(tampered)/2] ^= 1
	for _, tc := range []struct {
		name string
		data []byte
		o    ReaderOptions
		want error
	}{
		{"wrong passphrase", blob, opts("wrong"), ErrWrongKey},
		{"tampered", tampered, opts(testPass), ErrWrongKey},
		{"no passphrase", blob, ReaderOptions{}, ErrNotArchive},
		{"too short", blob[:legacyOverhead-1], opts(testPass), ErrNotArchive},
		{"too large", blob, ReaderOptions{Passphrase: []byte(testPass), LegacyKDF: tinyKDF(), MaxSize: int64(len(plain) - 1)}, ErrTooLarge},
		{"not an archive inside", buildLegacy(t, testPass, salt, nonce, []byte("just text\n"), tinyKDF()), opts(testPass), ErrCorrupt},
	} {
		_, err := Verify(bytes.NewReader(tc.data), tc.o)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestLegacyKeyVectors checks the legacy key derivation with its real
// parameters (64 MiB Argon2id) against the reference test vectors, for
// the memsvc and the upstream domain strings.
func TestLegacyKeyVectors(t *testing.T) {
	salt := make([]byte, 16)
	for i := range salt {
		salt[i] = byte(i)
	}
	names := legacyNames()
	for i, want := range [][2]string{
		{"646db8e2a350668d91f01dceee6155e121d4ef6cbeab9f59ad87307d024a4d66", "145321c3fd74e89c5b3aff7c00b80b3d10986691fe5d7195459a99813fcb4787"},
		{"ded74a74e9bd05ac790b16a6e5253dd350e4b91438b7b91a1e0d40152585837b", "7d8b58991ef8ca42f42dcba28f3147ab8aac404094dfde4790ee9a1fbb96f9fc"},
	} {
		base := legacyBaseKey([]byte("test-passphrase"), names[i][0], legacyKDF())
		if got := hex.EncodeToString(base); got != want[0] {
			t.Errorf("%s: base key %s, want %s", names[i][0], got, want[0])
		}
		key := legacyArchiveKey(base, salt, names[i][1])
		if got := hex.EncodeToString(key[:]); got != want[1] {
			t.Errorf("%s: archive key %s, want %s", names[i][1], got, want[1])
		}
	}
}
