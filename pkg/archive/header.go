package archive

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Archive versions.
const (
	Version1 = "1.0" // curated records only
	Version2 = "2.0" // bundle of curated and raw journal records
)

// Header describes an archive: its version, export time and how many
// entries of each kind it holds.
type Header struct {
	Version   string    // Version1 or Version2
	Timestamp time.Time // export time
	Curated   int       // number of curated (memory_record) entries
	Raw       int       // number of raw journal entries; always 0 in Version1
}

// Records is the total number of entry lines (record_count).
func (h Header) Records() int { return h.Curated + h.Raw }

// validate checks a header a Writer is about to write.
func (h Header) validate() error {
	switch h.Version {
	case Version1:
		if h.Raw != 0 {
			return fmt.Errorf("version %s cannot hold raw journal records (got %d): use %s", h.Version, h.Raw, Version2)
		}
	case Version2:
	default:
		return fmt.Errorf("%w: archive version %q (want %s or %s)", ErrUnsupported, h.Version, Version1, Version2)
	}
	if h.Curated < 0 || h.Raw < 0 {
		return fmt.Errorf("negative record count (curated %d, raw %d)", h.Curated, h.Raw)
	}
	if uint64(h.Curated)+uint64(h.Raw) > math.MaxUint32 {
		return fmt.Errorf("%w: %d records exceed the format limit of %d", ErrTooLarge, uint64(h.Curated)+uint64(h.Raw), uint64(math.MaxUint32))
	}
	if h.Timestamp.IsZero() {
		return fmt.Errorf("header timestamp is required")
	}
	return nil
}

// appendHeaderLine appends the header JSON and its newline.
func appendHeaderLine(b []byte, h Header) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendQuote(b, h.Version)
	b = append(b, `,"timestamp":"`...)
	b = appendTimestamp(b, h.Timestamp)
	b = append(b, `","record_count":`...)
	b = strconv.AppendInt(b, int64(h.Records()), 10)
	if h.Version == Version1 {
		b = append(b, `,"curated_record_count":null,"raw_record_count":null}`...)
	} else {
		b = append(b, `,"curated_record_count":`...)
		b = strconv.AppendInt(b, int64(h.Curated), 10)
		b = append(b, `,"raw_record_count":`...)
		b = strconv.AppendInt(b, int64(h.Raw), 10)
		b = append(b, '}')
	}
	return append(b, '\n')
}

// appendTimestamp writes t in UTC as RFC 3339 with 0, 3, 6 or 9 fractional
// digits, the fewest that show every non-zero digit, which is how upstream
// prints export times.
func appendTimestamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
	case ns%1_000_000 == 0:
		b = fmt.Appendf(b, ".%03d", ns/1_000_000)
	case ns%1_000 == 0:
		b = fmt.Appendf(b, ".%06d", ns/1_000)
	default:
		b = fmt.Appendf(b, ".%09d", ns)
	}
	return append(b, 'Z')
}

// headerJSON is the header as read; pointers tell absent and null apart
// from zero.
type headerJSON struct {
	Version            *string `json:"version"`
	Timestamp          *string `json:"timestamp"`
	RecordCount        *uint32 `json:"record_count"`
	CuratedRecordCount *uint32 `json:"curated_record_count"`
	RawRecordCount     *uint32 `json:"raw_record_count"`
}

// parseHeader parses line 1. The version is checked before the other fields
// so a future format is reported as unsupported rather than as damaged.
func parseHeader(line []byte) (Header, error) {
	var probe struct {
		Version *string `json:"version"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return Header{}, corrupt("invalid header: %v", err)
	}
	if probe.Version == nil {
		return Header{}, corrupt("invalid header: no version")
	}
	v := *probe.Version
	if v != Version1 && v != Version2 {
		return Header{}, fmt.Errorf("%w: archive version %q (want %s or %s)", ErrUnsupported, v, Version1, Version2)
	}
	var hj headerJSON
	if err := json.Unmarshal(line, &hj); err != nil {
		return Header{}, corrupt("invalid header: %v", err)
	}
	if hj.Timestamp == nil {
		return Header{}, corrupt("invalid header: no timestamp")
	}
	ts, err := time.Parse(time.RFC3339Nano, *hj.Timestamp)
	if err != nil {
		return Header{}, corrupt("invalid header: timestamp: %v", err)
	}
	if hj.RecordCount == nil {
		return Header{}, corrupt("invalid header: no record_count")
	}
	n := int(*hj.RecordCount)
	h := Header{Version: v, Timestamp: ts}
	switch v {
	case Version1:
		// Upstream writes null; accept numbers that agree with the total.
		if hj.CuratedRecordCount != nil && int(*hj.CuratedRecordCount) != n {
			return Header{}, corrupt("invalid header: curated_record_count %d differs from record_count %d", *hj.CuratedRecordCount, n)
		}
		if hj.RawRecordCount != nil && *hj.RawRecordCount != 0 {
			return Header{}, corrupt("invalid header: version %s cannot hold raw records (raw_record_count %d)", v, *hj.RawRecordCount)
		}
		h.Curated = n
	case Version2:
		if hj.CuratedRecordCount == nil || hj.RawRecordCount == nil {
			return Header{}, corrupt("invalid header: version %s needs curated_record_count and raw_record_count", v)
		}
		c, r := int(*hj.CuratedRecordCount), int(*hj.RawRecordCount)
		if c+r != n {
			return Header{}, corrupt("invalid header: curated_record_count %d + raw_record_count %d differ from record_count %d", c, r, n)
		}
		h.Curated, h.Raw = c, r
	}
	return h, nil
}

// appendFooterLine appends the footer JSON and its newline.
func appendFooterLine(b []byte, sum []byte) []byte {
	b = append(b, `{"checksum":"`...)
	b = hex.AppendEncode(b, sum)
	return append(b, "\"}\n"...)
}

// footerPrefix starts every footer line we and upstream write.
const footerPrefix = `{"checksum"`

// looksLikeFooter reports whether a line is shaped like a footer, to tell
// "the footer came early" from "this entry line is damaged".
func looksLikeFooter(line []byte) bool {
	return len(line) < 256 && bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte(footerPrefix))
}

// parseFooter returns the checksum of a footer line.
func parseFooter(line []byte) ([]byte, error) {
	var f struct {
		Checksum *string `json:"checksum"`
	}
	if err := json.Unmarshal(line, &f); err != nil {
		return nil, corrupt("invalid footer: %v", err)
	}
	if f.Checksum == nil {
		return nil, corrupt("invalid footer: no checksum")
	}
	sum, err := hex.DecodeString(*f.Checksum)
	if err != nil || len(sum) != 32 {
		return nil, corrupt("invalid footer: checksum %q is not 64 hex digits", *f.Checksum)
	}
	return sum, nil
}
