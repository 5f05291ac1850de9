package recorder

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEventBytes is the largest Capture Event line ingest accepts:
// 256 KiB, counting surrounding white space but not the line terminator.
const DefaultMaxEventBytes = 256 << 10

// ErrLineTooLong matches every *LineTooLongError.
var ErrLineTooLong = errors.New("event line too long")

// LineTooLongError reports a line over the limit. The line has been
// consumed; reading continues with the next one.
type LineTooLongError struct {
	Line  int   // 1-based line number
	Size  int64 // bytes in the line, terminator excluded
	Limit int
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("line %d: event is %d bytes, over the %d-byte limit (rejected before parsing)", e.Line, e.Size, e.Limit)
}

// Is makes errors.Is(err, ErrLineTooLong) true.
func (e *LineTooLongError) Is(target error) bool { return target == ErrLineTooLong }

// LineReader reads lines ending in "\n" or "\r\n" (the last line may lack
// the terminator) and holds at most limit+1 bytes of any line in memory: the
// rest of a longer line is read in small chunks and counted, never
// buffered, so a huge line costs time but not memory.
type LineReader struct {
	r     *bufio.Reader
	limit int
	line  int
	buf   []byte
}

// lineChunk is the size of the underlying read buffer.
const lineChunk = 64 << 10

// NewLineReader returns a reader of lines of at most limit bytes.
func NewLineReader(r io.Reader, limit int) *LineReader {
	if limit < 1 {
		limit = DefaultMaxEventBytes
	}
	return &LineReader{r: bufio.NewReaderSize(r, lineChunk), limit: limit}
}

// Next returns the next line without its terminator, and its 1-based
// number. The slice is valid until the next call. A line longer than the
// limit gives a *LineTooLongError (and no line); the end of the input gives
// io.EOF; other errors come from the underlying reader.
func (lr *LineReader) Next() ([]byte, int, error) {
	lr.buf = lr.buf[:0]
	var size int64 // bytes of the line before its "\n"
	var last byte  // the last of them
	started := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		started = started || len(chunk) > 0
		ended := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if ended {
			chunk = chunk[:len(chunk)-1]
		}
		if len(chunk) > 0 {
			size += int64(len(chunk))
			last = chunk[len(chunk)-1]
			// Keep one byte over the limit: it may be the '\r' of "\r\n".
			if room := lr.limit + 1 - len(lr.buf); room > 0 {
				lr.buf = append(lr.buf, chunk[:min(room, len(chunk))]...)
			}
		}
		switch {
		case ended:
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !started {
				return nil, lr.line, io.EOF
			}
		case err != nil:
			return nil, lr.line + 1, fmt.Errorf("read line %d: %w", lr.line+1, err)
		}
		lr.line++
		if ended && last == '\r' && size > 0 {
			size--
			if int64(len(lr.buf)) > size {
				lr.buf = lr.buf[:size]
			}
		}
		if size > int64(lr.limit) {
			return nil, lr.line, &LineTooLongError{Line: lr.line, Size: size, Limit: lr.limit}
		}
		return lr.buf, lr.line, nil
	}
}
