package textindex

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"only stop words", "The and OF it is", nil},
		{"only punctuation", "... !!! --- ???", nil},
		{"stemming", "Deployments deployed; rotated, rotating keys — key rotation",
			[]string{"deploy", "rotat", "key"}},
		{"irregular forms stay apart", "running runs ran",
			[]string{"run", "ran"}},
		{"case folding", "PEBBLE Pebble pebble", []string{"pebbl"}},
		{"turkish i", "İSTANBUL Istanbul ıspanak", []string{"istanbul", "ıspanak"}},
		{"final sigma", "ΣΟΦΟΣ σοφος", []string{"σοφοσ"}},
		{"punctuation", "Hello, world! (quoted) \"text\"... end.",
			[]string{"hello", "world", "quot", "text", "end"}},
		{"numbers", "42 3.14 1,000 -7", []string{"42", "3.14", "3", "14", "1,000", "1", "000", "7"}},
		{"email", "alice@example.com", []string{"alic", "example.com", "exampl", "com"}},
		{"url", "https://github.com/rivo/uniseg",
			[]string{"https", "github.com", "github", "com", "rivo", "uniseg"}},
		{"path", "pkg/store", []string{"pkg", "store"}},
		{"snake case", "snake_case_name", []string{"snake_case_name", "snake", "case", "name"}},
		{"camel case is one word", "camelCase", []string{"camelcas"}},
		{"colon joins letters", "reason:timeout", []string{"reason:timeout", "reason", "timeout"}},
		{"version", "v1.2.3", []string{"v1.2.3", "v1", "2", "3"}},
		{"leading and trailing underscores", "__init__ _private snake_case_",
			[]string{"init", "privat", "snake_case", "snake", "case"}},
		{"apostrophes", "it’s the users' guide; don't O'Reilly",
			[]string{"user", "guid", "don't", "o'reilli"}},
		{"full-width latin and digits", "ＨＥＬＬＯ Ｗｏｒｌｄ１２３", []string{"hello", "world123"}},
		{"ligature and circled digit", "ﬁle ①", []string{"file", "1"}},
		{"control characters and nul", "a\x00b\tc\x7fd\xffe", []string{"b", "c", "d", "e"}},
		{"soft hyphen and zero-width space", "co\u00adoperate foo\u200bbar",
			[]string{"cooper", "foo", "bar"}},
		{"chinese", "北京大学", []string{"北京", "京大", "大学"}},
		{"chinese single character", "东 西", []string{"东", "西"}},
		{"japanese kanji and hiragana", "東京都庁に行く。",
			[]string{"東京", "京都", "都庁", "庁に", "に行", "行く"}},
		{"katakana with prolonged sound mark", "ラーメン", []string{"ラー", "ーメ", "メン"}},
		{"half-width katakana", "ﾃｽﾄ", []string{"テス", "スト"}},
		{"ideographic variation selector is ignored", "葛\U000E0100飾区", []string{"葛飾", "飾区"}},
		{"long cjk run is not dropped", strings.Repeat("漢字", 20),
			[]string{"漢字", "字漢"}},
		{"korean words stay words", "서울에서 회의를 했다", []string{"서울에서", "회의를", "했다"}},
		{"thai is cut into bigrams", "ภาษา", []string{"ภา", "าษ", "ษา"}},
		{"emoji dropped", "🎉 ship it 👍🏽 done ✅", []string{"ship", "done"}},
		{"mixed scripts", "pebble を使う", []string{"pebbl", "を使", "使う"}},
		{"mixed scripts without spaces", "pebbleを使うGo言語", []string{"pebbl", "を使", "使う", "go", "言語"}},
		{"digits split cjk runs", "東京2024年", []string{"東京", "2024", "年"}},
		{"katakana compound", "テスト_case", []string{"テスト_case", "テス", "スト", "case"}},
		{"long token truncated", strings.Repeat("x", 100), []string{strings.Repeat("x", 64)}},
		{"long multibyte token truncated at a character boundary", strings.Repeat("é", 40),
			[]string{strings.Repeat("é", 32)}},
		{"greek not stemmed", "λόγος λόγοι", []string{"λόγοσ", "λόγοι"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tokenize(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Tokenize(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTokenizeCount(t *testing.T) {
	terms, n := TokenizeCount("The key, the keys and the KEY rotation: example.com")
	if want := []string{"key", "rotat", "example.com", "exampl", "com"}; !slices.Equal(terms, want) {
		t.Errorf("terms = %q, want %q", terms, want)
	}
	if n != 7 {
		t.Errorf("n = %d, want 7 (key ×3, rotat, example.com, exampl, com)", n)
	}
}

func TestTokenizeManyDistinctTerms(t *testing.T) {
	var sb strings.Builder
	for i := range 200 {
		sb.WriteString("w")
		sb.WriteString(strings.Repeat("x", i%7))
		sb.WriteString(string(rune('0' + i%10)))
		sb.WriteString(string(rune('a' + i/10)))
		sb.WriteString(" w ")
	}
	terms, n := TokenizeCount(sb.String())
	if len(terms) != 201 || n != 400 {
		t.Errorf("len(terms) = %d, n = %d, want 201 and 400", len(terms), n)
	}
}

// uniWords is the reference: the UAX #29 segments of s, as uniseg finds
// them, that nextASCIIWord must return.
func uniWords(s string) []string {
	var out []string
	state := -1
	var w string
	for len(s) > 0 {
		w, s, state = uniseg.FirstWordInString(s, state)
		c := asciiWordBreak[w[0]]
		if c == wbLetter || c == wbNumeric || c == wbExtendNum {
			out = append(out, w)
		}
	}
	return out
}

func asciiWords(s string) []string {
	var out []string
	for {
		var w string
		w, s = nextASCIIWord(s)
		if w == "" {
			return out
		}
		out = append(out, w)
	}
}

func TestNextASCIIWordMatchesUniseg(t *testing.T) {
	fixed := []string{
		"a.b", "a..b", "a.1", "1.a", "1.2.3", "1,2", "a,b", "1:2", "a:b", "a'b", "1'2",
		"a'1", "_a", "a_", "__", "_", "a_1_b", "1_a", ".5", "5.", "a.b.", "x: y",
		"don't", "e-mail", "foo::bar", "a1.b", "a1.2", "a:b:c", "a;b", "1;2",
		"\r\n", "a\r\nb", "  a  b  ", "a'b'c", "a.'b",
	}
	for _, s := range fixed {
		if got, want := asciiWords(s), uniWords(s); !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", s, got, want)
		}
	}
	// Random strings over the characters whose word-break class matters.
	const alphabet = "aZ09_:.',; -\n\t\"/@#"
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 0, 16)
	for range 20000 {
		buf = buf[:0]
		for range 1 + r.IntN(12) {
			buf = append(buf, alphabet[r.IntN(len(alphabet))])
		}
		s := string(buf)
		if got, want := asciiWords(s), uniWords(s); !slices.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	}
}

func FuzzNextASCIIWord(f *testing.F) {
	for _, s := range []string{"a.b", "1,000", "snake_case", "x:y z", "don't"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		for i := range b {
			b[i] &= 0x7f
		}
		s = string(b)
		if got, want := asciiWords(s), uniWords(s); !slices.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	})
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"", "The deployments were rotated.", "東京都庁に行く", "서울에서", "ภาษาไทย",
		"snake_case_name pkg/store v1.2.3", "ＡＢＣ１", "a\x00b", "\xff\xfe", "🎉👍🏽",
		strings.Repeat("é", 40), "葛\U000E0100飾", "İı ς", "co\u00adop",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms, n := TokenizeCount(s)
		if n < len(terms) {
			t.Fatalf("n = %d < %d distinct terms", n, len(terms))
		}
		seen := map[string]bool{}
		for _, term := range terms {
			switch {
			case term == "":
				t.Fatalf("empty term in %q", terms)
			case !utf8.ValidString(term):
				t.Fatalf("invalid UTF-8 term %q", term)
			case len(term) > MaxTermBytes:
				t.Fatalf("term %q longer than %d bytes", term, MaxTermBytes)
			case strings.IndexByte(term, 0) >= 0:
				t.Fatalf("term %q contains 0x00", term)
			case seen[term]:
				t.Fatalf("duplicate term %q", term)
			}
			seen[term] = true
		}
		again := Tokenize(s)
		if !slices.Equal(terms, again) {
			t.Fatalf("not deterministic: %q then %q", terms, again)
		}
		var sc stemCache
		cached := dedupe(appendTerms(nil, s, &sc))
		if !slices.Equal(terms, cached) {
			t.Fatalf("stem cache changes terms: %q vs %q", terms, cached)
		}
	})
}

func TestAnalyzerMatchesTokenize(t *testing.T) {
	a := NewAnalyzer()
	for _, text := range append(Corpus(7, 50), "Deployments of example.com", "東京都庁", "") {
		var want []string
		want = appendTerms(want, text, nil)
		got := a.AppendTerms([]string{"x"}, text)
		if len(got) != len(want)+1 || got[0] != "x" || !slices.Equal(got[1:], want) {
			t.Fatalf("AppendTerms(%q) = %q, want x then %q", text, got, want)
		}
	}
}
