package archive

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// Both fuzz targets bound the input (1 MiB of plaintext, 64 KiB lines,
// Argon2 at its 8 KiB minimum) so memory stays small and executions fast,
// and check three promises:
// no panic, every error wraps a documented sentinel, and whatever reads
// cleanly can be written back and read again.

const fuzzPass = "fuzz"

// fuzzKDF is the cheapest Argon2id there is.
func fuzzKDF() KDFParams { return KDFParams{MemoryKiB: 8, Iterations: 1, Parallelism: 1} }

func fuzzOptions() ReaderOptions {
	return ReaderOptions{
		Passphrase:  []byte(fuzzPass),
		MaxSize:     1 << 20,
		MaxLineSize: 64 << 10,
		KDFLimit:    KDFParams{MemoryKiB: 16, Iterations: 1, Parallelism: 2},
		LegacyKDF:   fuzzKDF(),
		Now:         func() time.Time { return exportTime },
	}
}

func addFiles(f *testing.F, pattern string) {
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files match %s: %v", pattern, err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzReader(f *testing.F) {
	addFiles(f, "testdata/*.cma")
	addFiles(f, "testdata/corrupt/*")
	f.Add([]byte("{\"version\":\"2.0\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o := fuzzOptions()
		o.Passphrase = nil
		fuzzRead(t, data, o)
	})
}

func FuzzEncryptedReader(f *testing.F) {
	// Seeds stay small (a few KiB): the fuzzer minimises every new
	// input it finds, and that costs time in proportion to its size.
	plain, _ := writeArchive(f, Version2, []*memory.MemoryRecord{goldenRecord()}, []*memory.RawJournalRecord{goldenRaw()}, WriterOptions{})
	enc := func(payload []byte, chunk int) []byte {
		var buf bytes.Buffer
		ew, err := NewEncryptWriter(&buf, EncryptOptions{Passphrase: []byte(fuzzPass), KDF: fuzzKDF(), ChunkSize: chunk, Rand: &countingRand{}})
		if err != nil {
			f.Fatal(err)
		}
		if _, err := ew.Write(payload); err != nil {
			f.Fatal(err)
		}
		if err := ew.Close(); err != nil {
			f.Fatal(err)
		}
		return buf.Bytes()
	}
	small, _ := writeArchive(f, Version1, []*memory.MemoryRecord{goldenRecord()}, nil, WriterOptions{})
	full := enc(plain, 1024)
	f.Add(full)
	f.Add(full[:len(full)/2])
	f.Add(enc(small, 1024))
	f.Add(enc(nil, 1024))
	f.Add(enc([]byte("not an archive\n"), 1024))
	f.Add(buildLegacy(f, fuzzPass, []byte("0123456789abcdef"), make([]byte, 12), small, fuzzKDF()))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, data, fuzzOptions())
	})
}

func fuzzRead(t *testing.T, data []byte, o ReaderOptions) {
	r, err := NewReader(bytes.NewReader(data), o)
	if err != nil {
		checkSentinel(t, err)
		return
	}
	var recs []*memory.MemoryRecord
	var raws []*memory.RawJournalRecord
	for range len(data) + 1 {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			rewrite(t, r.Header(), recs, raws, o)
			return
		}
		if err != nil {
			checkSentinel(t, err)
			return
		}
		switch {
		case e.Kind == KindRecord && e.Record != nil && e.Raw == nil:
			recs = append(recs, e.Record)
		case e.Kind == KindRaw && e.Raw != nil && e.Record == nil:
			raws = append(raws, e.Raw)
		default:
			t.Fatalf("malformed entry %+v", e)
		}
	}
	t.Fatal("Next did not reach the end of the input")
}

func checkSentinel(t *testing.T, err error) {
	for _, s := range []error{ErrNotArchive, ErrNeedKey, ErrWrongKey, ErrCorrupt, ErrTooLarge, ErrUnsupported} {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("error %q wraps no sentinel", err)
}

// rewrite writes what was read into a new archive and reads it back.
func rewrite(t *testing.T, h Header, recs []*memory.MemoryRecord, raws []*memory.RawJournalRecord, o ReaderOptions) {
	if len(recs) != h.Curated || len(raws) != h.Raw {
		t.Fatalf("read %d+%d entries, header declares %d+%d", len(recs), len(raws), h.Curated, h.Raw)
	}
	var buf bytes.Buffer
	if err := writeTo(&buf, h.Version, recs, raws, WriterOptions{}); err != nil {
		t.Fatalf("rewrite what was read: %v", err)
	}
	o.Passphrase = nil
	o.MaxSize, o.MaxLineSize = 0, 0
	if _, err := Verify(&buf, o); err != nil {
		t.Fatalf("read back the rewritten archive: %v", err)
	}
}
