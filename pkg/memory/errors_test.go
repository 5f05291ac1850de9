package memory

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestErrorsIs(t *testing.T) {
	sentinels := []*Error{ErrNotFound, ErrValidation, ErrContentTooLarge, ErrModalityUnsupported, ErrForgetUnconfirmed,
		ErrImportConflict, ErrExportFailed, ErrUnauthorized, ErrRateLimited, ErrInternal}
	for _, s := range sentinels {
		err := fmt.Errorf("engine: %w", Errorf(s.Code, "something about %d", 3))
		for _, other := range sentinels {
			if got := errors.Is(err, other); got != (other == s) {
				t.Errorf("errors.Is(%s error, %s) = %v", s.Code, other.Code, got)
			}
		}
		if CodeOf(err) != s.Code {
			t.Errorf("CodeOf = %s, want %s", CodeOf(err), s.Code)
		}
		if err.Error() != "engine: something about 3" {
			t.Errorf("message %q", err)
		}
	}
	// A message-bearing target is not a sentinel: only the same value
	// matches.
	a := Errorf(CodeNotFound, "a")
	if errors.Is(Errorf(CodeNotFound, "b"), a) || !errors.Is(a, a) {
		t.Error("errors with messages compare by identity")
	}

	id := MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")
	nf := NotFound(id)
	if !errors.Is(nf, ErrNotFound) || nf.Error() != "record not found: 0196a9e2-5c1d-7f00-8a00-0000000000aa" {
		t.Errorf("NotFound = %q", nf)
	}
	inv := Invalid("records[0].session_id", "must not be %s", "blank")
	if !errors.Is(inv, ErrValidation) || inv.Error() != "records[0].session_id: must not be blank" {
		t.Errorf("Invalid = %q", inv)
	}
	if got := Invalid("", "bare %d", 1).Error(); got != "bare 1" {
		t.Errorf("Invalid without field = %q", got)
	}
	rl := &Error{Code: CodeRateLimited, Message: "slow down", RetryAfter: 7}
	var e *Error
	if !errors.As(fmt.Errorf("x: %w", rl), &e) || e.RetryAfter != 7 || !errors.Is(rl, ErrRateLimited) {
		t.Errorf("rate limited error lost its retry: %+v", e)
	}
}

func TestCodeOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Code
	}{
		{nil, CodeInternal},
		{io.EOF, CodeInternal},
		{fmt.Errorf("disk: %w", io.ErrUnexpectedEOF), CodeInternal},
		{ErrForgetUnconfirmed, CodeForgetUnconfirmed},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", Invalid("f", "x"))), CodeValidation},
		{errors.Join(io.EOF, ErrImportConflict), CodeImportConflict},
	} {
		if got := CodeOf(tc.err); got != tc.want {
			t.Errorf("CodeOf(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

func TestParseEmotionLabel(t *testing.T) {
	tests := []struct {
		labels  []string
		axis    int
		valence float64
	}{
		{[]string{"joy", "happy", "happiness", "JOY", " Happy ", "\tHaPpInEsS\n"}, 0, 1},
		{[]string{"trust", "Trust"}, 1, 0.7},
		{[]string{"fear", "FEAR "}, 2, -0.8},
		{[]string{"surprise", "Surprise"}, 3, 0},
		{[]string{"sadness", "sad", "SAD"}, 4, -1},
		{[]string{"disgust", " disgust"}, 5, -0.9},
		{[]string{"anger", "angry", "Angry"}, 6, -0.9},
		{[]string{"anticipation", "anticipatory", "ANTICIPATORY"}, 7, 0.4},
	}
	canonical := []string{"joy", "trust", "fear", "surprise", "sadness", "disgust", "anger", "anticipation"}
	for _, tc := range tests {
		for _, l := range tc.labels {
			v, err := ParseEmotionLabel(l)
			if err != nil {
				t.Errorf("%q: %v", l, err)
				continue
			}
			var want [8]float64
			want[tc.axis] = 1
			if v.Axes() != want || v.Intensity != 1 || v.Valence != tc.valence {
				t.Errorf("%q = %+v", l, v)
			}
			if got := v.Label(); got != canonical[tc.axis] {
				t.Errorf("%q labels back as %q", l, got)
			}
		}
	}
	for _, bad := range []string{"", "  ", "happyness", "rage", "joy!", "jo y", "love"} {
		_, err := ParseEmotionLabel(bad)
		if !errors.Is(err, ErrValidation) {
			t.Errorf("%q: error %v", bad, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "emotion: ") || !strings.HasSuffix(err.Error(), "want one of joy, trust, fear, surprise, sadness, disgust, anger, anticipation") {
			t.Errorf("%q: message %q", bad, err)
		}
	}
}

func TestEmotionLabel(t *testing.T) {
	for _, tc := range []struct {
		v    EmotionVector
		want string
	}{
		{EmotionVector{}, ""},
		{EmotionVector{Joy: 1}, ""}, // intensity 0: no label
		{EmotionVector{Anger: 0.9, Joy: 0.3, Intensity: 0.5}, "anger"},
		{EmotionVector{Anticipation: 0.2, Intensity: 0.1}, "anticipation"},
		{EmotionVector{Trust: 0.5, Fear: 0.5, Intensity: 1}, "trust"}, // ties: first axis
		{EmotionVector{Sadness: 0.4, Disgust: 0.41, Intensity: 1, Valence: -1}, "disgust"},
		{EmotionVector{Surprise: 0.1, Intensity: -1}, "surprise"},
	} {
		if got := tc.v.Label(); got != tc.want {
			t.Errorf("Label(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if EmotionLabels != "joy, trust, fear, surprise, sadness, disgust, anger, anticipation" {
		t.Errorf("EmotionLabels = %q", EmotionLabels)
	}
}

func TestContentHelpers(t *testing.T) {
	c := MemoryContent{Blocks: []ContentBlock{
		{Modality: ModalityImage, Format: "image/png", Data: Bytes{1}, Embedding: []float32{}},
		{Modality: ModalityText, Format: "text/plain", Data: Bytes{0xff}},
		{Modality: ModalityText, Format: "text/plain", Data: Bytes("second"), Embedding: []float32{0.5}},
		{Modality: ModalityText, Format: "text/plain", Data: Bytes("third"), Embedding: []float32{1}},
	}}
	if s, ok := c.Text(); !ok || s != "second" {
		t.Errorf("Text() = %q, %v", s, ok)
	}
	if e := c.Embedding(); len(e) != 1 || e[0] != 0.5 {
		t.Errorf("Embedding() = %v", e)
	}
	if _, ok := (MemoryContent{}).Text(); ok {
		t.Error("empty content has text")
	}
	if (MemoryContent{}).Embedding() != nil {
		t.Error("empty content has an embedding")
	}
	r := validRecord()
	r.Store, r.Version = StoreProcedural, 3
	if got := r.String(); got != "procedural record 0196a9e2-5c1d-7f00-8a00-0000000000aa v3" {
		t.Errorf("String() = %q", got)
	}
}
