package archive

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

const benchRecordCount = 10_000

// benchRecords are typical agent memories: a few hundred bytes of text
// and a 64-dimension embedding (about 2 KiB per entry line).
func benchRecords(n int) []*memory.MemoryRecord {
	recs := make([]*memory.MemoryRecord, n)
	for i := range n {
		r := goldenRecord()
		binary.BigEndian.PutUint64(r.ID[8:], uint64(i)|0x8000_0000_0000_0000)
		emb := make([]float32, 64)
		for j := range emb {
			emb[j] = float32((i*31+j*17)%1000)/1000 - 0.5
		}
		text := fmt.Sprintf("memory %d: %s", i, strings.Repeat("the build broke after the dependency bump; ", 5))
		r.Content = memory.MemoryContent{Blocks: []memory.ContentBlock{{Modality: memory.ModalityText, Format: "text/plain", Data: memory.Bytes(text), Embedding: emb}}}
		recs[i] = r
	}
	return recs
}

func benchOptions(encrypted bool) WriterOptions {
	if !encrypted {
		return WriterOptions{}
	}
	// Tiny Argon2 parameters: the benchmark measures the stream, not the
	// one-off key derivation (see BenchmarkDefaultKDF for that).
	return WriterOptions{Encryption: &EncryptOptions{Passphrase: []byte(testPass), KDF: tinyKDF()}}
}

func BenchmarkWrite(b *testing.B) {
	recs := benchRecords(benchRecordCount)
	plain, _ := writeArchive(b, Version1, recs, nil, WriterOptions{})
	for _, enc := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "encrypted"}[enc], func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				if err := writeTo(io.Discard, Version1, recs, nil, benchOptions(enc)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkRead(b *testing.B) {
	recs := benchRecords(benchRecordCount)
	plain, _ := writeArchive(b, Version1, recs, nil, WriterOptions{})
	for _, enc := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "encrypted"}[enc], func(b *testing.B) {
			data, _ := writeArchive(b, Version1, recs, nil, benchOptions(enc))
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				sum, err := Verify(bytes.NewReader(data), withPass(testPass))
				if err != nil || sum.Header.Curated != benchRecordCount {
					b.Fatalf("verify: %+v, %v", sum, err)
				}
			}
		})
	}
}

// BenchmarkDefaultKDF is the fixed cost of opening or writing an encrypted
// archive with the default Argon2id parameters (64 MiB, 3 passes).
func BenchmarkDefaultKDF(b *testing.B) {
	salt := make([]byte, saltSize)
	for b.Loop() {
		DefaultKDF().key([]byte(testPass), salt)
	}
}
