package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress draws one line of progress on a terminal: a bar when the total
// is known, the count so far, the rate and the elapsed time, redrawn in
// place at most every redrawEvery. A nil *Progress does nothing, so
// callers need not check whether progress is shown; NewProgress returns
// nil when it should not be (not a terminal, or --quiet).
//
// It is our own rather than a library's: the commands need one line on
// stderr, fed from the goroutine that does the work, without a goroutine
// of its own or terminal queries beyond golang.org/x/term, which the
// binaries already link.
type Progress struct {
	w     io.Writer
	label string
	unit  Unit
	noun  string
	total int64
	now   func() time.Time

	mu        sync.Mutex
	n         int64
	start     time.Time
	lastDraw  time.Time
	drawn     bool
	lastWidth int
}

// Unit says how a progress count is shown.
type Unit int

const (
	// Items are counted as numbers with a noun ("records").
	Items Unit = iota
	// Bytes are shown as KiB, MiB, ...
	Bytes
)

// redrawEvery is the least time between two redraws.
const redrawEvery = 100 * time.Millisecond

// ProgressOptions configure NewProgress.
type ProgressOptions struct {
	// Label starts the line ("export").
	Label string
	// Unit of the count; Noun names Items ("records").
	Unit Unit
	Noun string
	// Total is the count at completion; 0 when unknown (no bar then).
	Total int64
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// NewProgress returns a progress line on w, or nil when show is false.
// Commands pass ShowProgress(stdout, stderr, quiet) as show.
func NewProgress(w io.Writer, show bool, o ProgressOptions) *Progress {
	if !show {
		return nil
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Progress{w: w, label: o.Label, unit: o.Unit, noun: o.Noun, total: o.Total, now: o.Now, start: o.Now()}
}

// ShowProgress reports whether a progress line belongs on stderr: both
// output streams are terminals and the user did not ask for quiet. A
// redirected or piped run (cron, CI, scripts) sees no progress at all.
func ShowProgress(stdout, stderr io.Writer, quiet bool) bool {
	return !quiet && IsTerminal(stdout) && IsTerminal(stderr)
}

// Set records that n units are done and redraws if it is time.
func (p *Progress) Set(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n = n
	if t := p.now(); !p.drawn || t.Sub(p.lastDraw) >= redrawEvery {
		p.draw(t)
	}
}

// Add records n more units done.
func (p *Progress) Add(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	total := p.n + n
	p.mu.Unlock()
	p.Set(total)
}

// Done draws the final state and ends the line.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(p.now())
	fmt.Fprintln(p.w)
}

// Finish ends the line of work that returned err: Done when it succeeded,
// Clear when it failed (the error then follows on a clean line). It
// returns err, so a command can end with `err = bar.Finish(call())`.
func (p *Progress) Finish(err error) error {
	if err != nil {
		p.Clear()
		return err
	}
	p.Done()
	return nil
}

// Clear erases the line, for a run that failed: the error follows on a
// clean line.
func (p *Progress) Clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.lastWidth))
	}
}

// draw writes the line; the caller holds mu.
func (p *Progress) draw(t time.Time) {
	line := p.Line(t)
	pad := ""
	if len(line) < p.lastWidth {
		pad = strings.Repeat(" ", p.lastWidth-len(line))
	}
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.lastWidth = len(line)
	p.lastDraw = t
	p.drawn = true
}

// barWidth is the number of cells of the bar.
const barWidth = 24

// Line renders the progress line as of t (without the carriage return).
func (p *Progress) Line(t time.Time) string {
	elapsed := t.Sub(p.start)
	var b strings.Builder
	b.WriteString(p.label)
	if p.total > 0 {
		done := min(p.n, p.total)
		fill := int(done * barWidth / p.total)
		fmt.Fprintf(&b, " [%s%s] %3d%% %s/%s", strings.Repeat("=", fill), strings.Repeat(" ", barWidth-fill),
			done*100/p.total, p.count(p.n), p.count(p.total))
	} else {
		fmt.Fprintf(&b, " %s", p.count(p.n))
	}
	if p.unit == Items && p.noun != "" {
		b.WriteString(" " + p.noun)
	}
	if secs := elapsed.Seconds(); secs > 0 {
		fmt.Fprintf(&b, " %s/s", p.count(int64(float64(p.n)/secs)))
	}
	fmt.Fprintf(&b, " %s", elapsed.Truncate(time.Second))
	return b.String()
}

func (p *Progress) count(n int64) string {
	if p.unit == Bytes {
		return FormatBytes(n)
	}
	return FormatCount(n)
}

// FormatBytes renders n bytes for people: 512 B, 1.5 KiB, 12.0 MiB.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[i])
}

// FormatCount renders n with thousands separators: 1,234,567.
func FormatCount(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// ProgressReader counts the bytes read through it into a Progress.
type ProgressReader struct {
	R io.Reader
	P *Progress
}

func (r *ProgressReader) Read(b []byte) (int, error) {
	n, err := r.R.Read(b)
	r.P.Add(int64(n))
	return n, err
}

// ProgressWriter counts the bytes written through it into a Progress.
type ProgressWriter struct {
	W io.Writer
	P *Progress
}

// Commit passes a destination's final step through (an export file that
// is renamed into place before the export is audited); it does nothing for
// a destination without one.
func (w *ProgressWriter) Commit() error {
	if c, ok := w.W.(interface{ Commit() error }); ok {
		return c.Commit()
	}
	return nil
}

func (w *ProgressWriter) Write(b []byte) (int, error) {
	n, err := w.W.Write(b)
	w.P.Add(int64(n))
	return n, err
}
