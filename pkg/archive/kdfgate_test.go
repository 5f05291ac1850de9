package archive

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostileHeader is the 271-byte attack of the hardening report: a valid
// envelope header whose KDF fields ask for Argon2 work far beyond what any
// memsvc writes, followed by 200 bytes of chunk data.
func hostileHeader(memKiB, iterations uint32, lanes uint8) []byte {
	b := make([]byte, 271)
	copy(b, magic)
	b[offVersion] = envelopeVersion
	b[offKDF] = kdfArgon2id
	binary.BigEndian.PutUint32(b[offMemory:], memKiB)
	binary.BigEndian.PutUint32(b[offIterations:], iterations)
	b[offParallelism] = lanes
	b[offChunkShift] = 16
	for i := offSalt; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	return b
}

// TestHostileKDFHeader: a header asking for more than the writer's own
// parameters is refused with ErrTooLarge before any key derivation, each
// field on its own; the parameters memsvc writes are derived as usual.
func TestHostileKDFHeader(t *testing.T) {
	w := DefaultKDF()
	for _, tc := range []struct {
		name   string
		header []byte
	}{
		{"the largest parameters accepted before (256 MiB, 16 passes, 16 lanes)", hostileHeader(256<<10, 16, 16)},
		{"4 GiB of memory", hostileHeader(0xffffffff, 1, 1)},
		{"one KiB over the memory", hostileHeader(w.MemoryKiB+1, w.Iterations, w.Parallelism)},
		{"one pass too many", hostileHeader(w.MemoryKiB, w.Iterations+1, w.Parallelism)},
		{"one lane too many", hostileHeader(w.MemoryKiB, w.Iterations, w.Parallelism+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.header) != 271 {
				t.Fatalf("attack of %d bytes", len(tc.header))
			}
			var derivations atomic.Int32
			o := withPass(testPass)
			o.KDFSlot = func() (func(), error) { derivations.Add(1); return func() {}, nil }
			_, err := NewReader(bytes.NewReader(tc.header), o)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("NewReader: %v, want ErrTooLarge", err)
			}
			if n := derivations.Load(); n != 0 {
				t.Fatalf("%d key derivations ran for a refused header", n)
			}
		})
	}
	// The writer refuses the same parameters, so nothing it writes is
	// refused by a reader.
	if _, err := NewEncryptWriter(&bytes.Buffer{}, EncryptOptions{Passphrase: []byte("x"), KDF: KDFParams{MemoryKiB: w.MemoryKiB, Iterations: w.Iterations + 1, Parallelism: 1}}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("writer above the limit: %v", err)
	}
	// Within the limit, the derivation runs (once) and the wrong key is
	// found by the key check.
	var derivations atomic.Int32
	o := withPass("not the passphrase")
	o.KDFSlot = func() (func(), error) { derivations.Add(1); return func() {}, nil }
	if _, err := NewReader(bytes.NewReader(hostileHeader(64, 1, 1)), o); !errors.Is(err, ErrWrongKey) || derivations.Load() != 1 {
		t.Errorf("small parameters: %v after %d derivations", err, derivations.Load())
	}
}

// TestKDFGate: at most n holders at once; a waiter enters when a slot is
// freed and gives up when its context ends; the gate is used by readers
// and writers of encrypted archives, including legacy ones.
func TestKDFGate(t *testing.T) {
	g := NewKDFGate(2)
	ctx := t.Context()
	r1, err := g.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := g.Enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := g.Enter(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third holder entered a gate of two: %v", err)
	}
	entered := make(chan func(), 1)
	go func() {
		r, err := g.Enter(ctx)
		if err != nil {
			t.Error(err)
			r = func() {}
		}
		entered <- r
	}()
	r1()
	var r3 func()
	select {
	case r3 = <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("a freed slot did not admit the waiter")
	}
	r2()
	r3()

	// Many concurrent openings of encrypted archives: never more than two
	// derivations at once, and all of them run.
	enc, _ := encryptedSample(t)
	var inside, most, total atomic.Int32
	gate := NewKDFGate(MaxConcurrentKDF)
	slot := func() (func(), error) {
		release, err := gate.Enter(ctx)
		if err != nil {
			return nil, err
		}
		n := inside.Add(1)
		total.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		return func() { inside.Add(-1); release() }, nil
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := withPass(testPass)
			o.KDFSlot = slot
			if _, err := Verify(bytes.NewReader(enc), o); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if most.Load() > MaxConcurrentKDF || total.Load() != 8 {
		t.Errorf("%d derivations at most at once (limit %d), %d in all", most.Load(), MaxConcurrentKDF, total.Load())
	}
	// Legacy archives go through the slot too (both spellings of their
	// domain strings may be derived).
	total.Store(0)
	salt, nonce := bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 12)
	blob := buildLegacy(t, testPass, salt, nonce, []byte("x"), tinyKDF())
	o := ReaderOptions{Passphrase: []byte("wrong"), LegacyKDF: tinyKDF(), KDFSlot: slot}
	if _, err := Verify(bytes.NewReader(blob), o); !errors.Is(err, ErrWrongKey) || total.Load() != 2 {
		t.Errorf("legacy: %v after %d derivations, want ErrWrongKey after 2", err, total.Load())
	}
}
