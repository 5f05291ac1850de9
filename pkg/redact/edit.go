package redact

import "strings"

// editor rebuilds a string from left-to-right, non-overlapping replacements.
// It allocates only when a replacement actually changes the text, so a rule
// that finds nothing (or re-finds its own marker) returns its input as is.
type editor struct {
	src  string
	b    strings.Builder
	last int
	used bool
	with string // the last replacement, which ends at last
}

func (e *editor) replace(start, end int, with string) {
	if e.src[start:end] == with {
		return
	}
	if !e.used {
		e.used = true
		e.b.Grow(len(e.src) + len(with))
	}
	e.b.WriteString(e.src[e.last:start])
	e.b.WriteString(with)
	e.last = end
	e.with = with
}

// byteBefore returns the output byte that precedes src[i], for a rule that
// looks left: a later pass will see the replacement, not the source.
func (e *editor) byteBefore(i int) byte {
	if e.used && i == e.last && e.with != "" {
		return e.with[len(e.with)-1]
	}
	return e.src[i-1]
}

func (e *editor) String() string {
	if !e.used {
		return e.src
	}
	e.b.WriteString(e.src[e.last:])
	return e.b.String()
}
