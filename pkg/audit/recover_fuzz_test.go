package audit

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"testing"
	"time"
)

// FuzzOpen opens an existing log made of n reference entries, with one
// byte possibly flipped, followed by arbitrary bytes, as a server start
// does, on an in-memory file. Open either refuses it with a *BrokenError
// and leaves the file alone, or it cuts off at most a torn final line
// (bytes after the last LF that begin like an entry or with a zero byte),
// reports the head that verifying the remaining file gives, and the next
// Append continues the chain: the whole file then verifies. A log whose
// complete lines verify and whose tail looks torn is never refused.
func FuzzOpen(f *testing.F) {
	ref := referenceLog(f, 3)
	line := ref[:bytes.IndexByte(ref, '\n')+1]
	f.Add(uint8(3), []byte{}, uint16(0), byte(0), false)
	f.Add(uint8(3), line[:40], uint16(0), byte(0), false)
	f.Add(uint8(2), line[:len(line)-1], uint16(0), byte(0), true)
	f.Add(uint8(1), []byte{0, 0, 0, 0}, uint16(0), byte(0), false)
	f.Add(uint8(0), []byte(`{"version":1,"seq`), uint16(0), byte(0), true)
	f.Add(uint8(3), []byte("garbage"), uint16(0), byte(0), false)
	f.Add(uint8(3), []byte{}, uint16(100), byte(1), false)
	f.Add(uint8(4), []byte("\n"), uint16(0), byte(0), true)
	f.Fuzz(func(t *testing.T, n uint8, tail []byte, pos uint16, flip byte, full bool) {
		if len(tail) > 64<<10 {
			return
		}
		data := append(referenceLog(t, uint64(n%6)), tail...)
		if len(data) > 0 {
			data[int(pos)%len(data)] ^= flip
		}
		file := &memFile{data: bytes.Clone(data)}
		l, err := open("/audit/audit.jsonl", Options{VerifyFull: full}, memFS{file})

		end := bytes.LastIndexByte(data, '\n') + 1
		rep, verr := verify(bytes.NewReader(data[:end]), nil)
		torn := data[end:]
		tornOK := len(torn) == 0 || torn[0] == 0 || bytes.HasPrefix([]byte(bodyStart), torn[:min(len(torn), len(bodyStart))])
		if err != nil {
			if _, ok := errors.AsType[*BrokenError](err); !ok {
				t.Fatalf("Open: %v is not a *BrokenError", err)
			}
			if !bytes.Equal(file.data, data) {
				t.Fatalf("a refused log was changed:\n%q\n%q", data, file.data)
			}
			if verr == nil && tornOK {
				t.Fatalf("Open refused a log whose complete lines verify and whose tail %q looks torn: %v", torn, err)
			}
			return
		}
		defer l.Close()
		switch {
		case len(torn) == 0 && !bytes.Equal(file.data, data):
			t.Fatalf("a log without a torn tail was changed")
		case len(torn) > 0 && (!tornOK || !bytes.Equal(file.data, data[:end])):
			t.Fatalf("tail %q: file cut to %d of %d bytes", torn, len(file.data), len(data))
		}
		if full && verr != nil {
			t.Fatalf("VerifyFull accepted a log that does not verify: %v", verr)
		}
		seq, head := l.Last()
		if verr != nil {
			return // a damaged line deeper than the tail check looks
		}
		if seq != rep.LastSequence || head != rep.HeadHash {
			t.Fatalf("Last() = %d %s, verify gives %d %s", seq, head, rep.LastSequence, rep.HeadHash)
		}
		next := testEvent(seq + 1)
		if err := l.Append(next); err != nil {
			t.Fatalf("append after open: %v", err)
		}
		if rep, err := Verify(bytes.NewReader(file.data)); err != nil || rep.LastSequence != seq+1 {
			t.Fatalf("after one append: %+v, %v", rep, err)
		}
	})
}

// memFS serves one in-memory log file.
type memFS struct{ f *memFile }

func (memFS) MkdirAll(string, fs.FileMode) error { return nil }
func (m memFS) OpenLog(string) (logFile, error)  { return m.f, nil }
func (memFS) SyncDir(string) error               { return nil }

// memFile is a log file in memory; writes append, as O_APPEND does.
type memFile struct{ data []byte }

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memFile) Write(p []byte) (int, error) { m.data = append(m.data, p...); return len(p), nil }
func (m *memFile) Stat() (fs.FileInfo, error)  { return memInfo{int64(len(m.data))}, nil }
func (m *memFile) Sync() error                 { return nil }
func (m *memFile) Close() error                { return nil }
func (m *memFile) Truncate(size int64) error {
	if size < 0 || size > int64(len(m.data)) {
		return errors.New("truncate out of range")
	}
	m.data = m.data[:size]
	return nil
}

type memInfo struct{ size int64 }

func (memInfo) Name() string       { return "audit.jsonl" }
func (i memInfo) Size() int64      { return i.size }
func (memInfo) Mode() fs.FileMode  { return 0o600 }
func (memInfo) ModTime() time.Time { return time.Time{} }
func (memInfo) IsDir() bool        { return false }
func (memInfo) Sys() any           { return nil }
