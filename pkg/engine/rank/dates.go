package rank

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Time as a searchable field. A record's time (its event or session
// time) becomes a handful of terms of a separate field, one per way a
// question names a date: the year "2023", the month "2023-05", the month
// name "may", the day "2023-05-07", the day of the year "05-07" (for "on
// 7 May") and the weekday "sunday". A question's date expressions
// ("in May 2023", "on Saturday 10 June 2023", "2023-05-07") become the
// terms of the same forms, so the field matches with plain term
// equality and ranks with the same BM25 as text. Field terms never meet
// text terms: "may" the month and "may" the verb stay apart.

// Granularity is how precisely a time is known.
type Granularity int

// Granularities, coarsest first.
const (
	Year Granularity = iota + 1
	Month
	Day
)

// TimeTerms returns the time-field terms of t known to granularity g,
// in t's own location: for Day every form, for Month the year, the month
// and its name, for Year the year alone.
func TimeTerms(t time.Time, g Granularity) []string {
	y, m, d := t.Date()
	out := []string{strconv.Itoa(y)}
	if g >= Month {
		out = append(out, fmt.Sprintf("%04d-%02d", y, int(m)), monthName(m))
	}
	if g >= Day {
		out = append(out, fmt.Sprintf("%04d-%02d-%02d", y, int(m), d), fmt.Sprintf("%02d-%02d", int(m), d),
			strings.ToLower(t.Weekday().String()))
	}
	return out
}

func monthName(m time.Month) string { return strings.ToLower(m.String()) }

// months maps month names and their unambiguous abbreviations to months.
var months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

// ambiguousMonths are month names that are also common words ("may" the
// verb, "march" the verb, "mar", "jan" a name): they count as months
// only next to a day number or a year, or after a word that introduces
// a date (in, of, since, until, ...).
var ambiguousMonths = map[string]bool{"may": true, "march": true, "mar": true, "jan": true}

// monthIntro are the words after which an ambiguous month name is a
// month.
var monthIntro = map[string]bool{
	"in": true, "of": true, "since": true, "until": true, "till": true, "by": true, "during": true,
	"early": true, "late": true, "mid": true, "last": true, "next": true, "this": true, "from": true,
	"before": true, "after": true, "between": true, "and": true, "to": true,
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

// dateWords splits text into lower-case words of letters, digits and the
// hyphens inside a run of digits ("2023-05-07").
func dateWords(text string) []string {
	var out []string
	start := -1
	rs := []rune(strings.ToLower(text))
	for i := 0; i <= len(rs); i++ {
		in := i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]) ||
			rs[i] == '-' && start >= 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]))
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			out = append(out, string(rs[start:i]))
			start = -1
		}
	}
	return out
}

// dayNumber reads "7", "07", "7th", "1st", "22nd", "23rd" as a day of the
// month.
func dayNumber(w string) (int, bool) {
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if s, ok := strings.CutSuffix(w, suf); ok && s != "" {
			w = s
			break
		}
	}
	if len(w) > 2 {
		return 0, false
	}
	n, err := strconv.Atoi(w)
	return n, err == nil && n >= 1 && n <= 31
}

// yearNumber reads a four-digit year from 1900 to 2199.
func yearNumber(w string) (int, bool) {
	if len(w) != 4 {
		return 0, false
	}
	n, err := strconv.Atoi(w)
	return n, err == nil && n >= 1900 && n < 2200
}

// isoDate reads "2023-05-07".
func isoDate(w string) (time.Time, bool) {
	t, err := time.Parse(time.DateOnly, w)
	return t, err == nil
}

// QueryTimeTerms returns the time-field terms of the absolute date
// expressions of a question, in order, without repeats: "May 2023" is
// 2023-05, "10 June 2023" and "June 10th, 2023" are 2023-06-10, "on 26
// December" is 12-26, "in June" is june, "in 2023" is 2023, "Saturday"
// is saturday (dropped when the same expression names a full date),
// "2023-05-07" is 2023-05-07. With widen, a day also gives its month
// (2023-06) and a month its year, so a record from the same month still
// matches a little.
func QueryTimeTerms(text string, widen bool) []string {
	ws := dateWords(text)
	var out []string
	add := func(ts ...string) {
		for _, t := range ts {
			if !containsString(out, t) {
				out = append(out, t)
			}
		}
	}
	used := make([]bool, len(ws))
	for i, w := range ws {
		if used[i] {
			continue
		}
		if t, ok := isoDate(w); ok {
			used[i] = true
			add(fmt.Sprintf("%04d-%02d-%02d", t.Year(), int(t.Month()), t.Day()))
			if widen {
				add(fmt.Sprintf("%04d-%02d", t.Year(), int(t.Month())))
			}
			continue
		}
		m, ok := months[w]
		if !ok || ambiguousMonths[w] && !monthContext(ws, i) {
			continue
		}
		used[i] = true
		day, year := 0, 0
		// A day before the month ("10 June", "the 10th of June") or after
		// it ("June 10"), then a year after either ("June 10, 2023").
		if i > 0 && !used[i-1] {
			if d, ok := dayNumber(ws[i-1]); ok {
				day, used[i-1] = d, true
			}
		}
		if i > 1 && day == 0 && ws[i-1] == "of" && !used[i-2] {
			if d, ok := dayNumber(ws[i-2]); ok {
				day, used[i-2] = d, true
			}
		}
		j := i + 1
		if day == 0 && j < len(ws) {
			if d, ok := dayNumber(ws[j]); ok {
				day, used[j] = d, true
				j++
			}
		}
		if j < len(ws) {
			if y, ok := yearNumber(ws[j]); ok {
				year, used[j] = y, true
			}
		}
		if day > 0 && year > 0 {
			// The weekday named with a full date adds nothing.
			for k := max(0, i-3); k < i; k++ {
				if _, ok := weekdays[ws[k]]; ok {
					used[k] = true
				}
			}
		}
		switch {
		case day > 0 && year > 0:
			add(fmt.Sprintf("%04d-%02d-%02d", year, int(m), day))
			if widen {
				add(fmt.Sprintf("%04d-%02d", year, int(m)))
			}
		case year > 0:
			add(fmt.Sprintf("%04d-%02d", year, int(m)))
			if widen {
				add(strconv.Itoa(year))
			}
		case day > 0:
			add(fmt.Sprintf("%02d-%02d", int(m), day))
			if widen {
				add(monthName(m))
			}
		default:
			add(monthName(m))
		}
	}
	for i, w := range ws {
		if used[i] {
			continue
		}
		if y, ok := yearNumber(w); ok {
			add(strconv.Itoa(y))
		} else if wd, ok := weekdays[w]; ok {
			add(strings.ToLower(wd.String()))
		}
	}
	return out
}

// monthContext reports whether the ambiguous month name ws[i] is used as
// a month: next to a day number or a year, or after a word that
// introduces a date.
func monthContext(ws []string, i int) bool {
	if i > 0 {
		if _, ok := dayNumber(ws[i-1]); ok {
			return true
		}
		if monthIntro[ws[i-1]] {
			return true
		}
	}
	if i+1 < len(ws) {
		if _, ok := dayNumber(ws[i+1]); ok {
			return true
		}
		if _, ok := yearNumber(ws[i+1]); ok {
			return true
		}
	}
	return false
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// RelativeTime is a time a text refers to relative to when it was said,
// resolved against that moment, and how precisely it is known.
type RelativeTime struct {
	Time        time.Time
	Granularity Granularity
}

// wordNumbers are the spelled-out counts of "two days ago".
var wordNumbers = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2,
}

// ResolveRelative finds the spoken relative dates of text ("yesterday",
// "last night", "the day before yesterday", "tomorrow", "three days ago",
// "two weeks ago", "a month ago", "last month", "next year", "last
// Saturday", "next Friday") and resolves them against at, the time the
// text was said. Bare weekdays and "last week" are too vague and are left
// alone. The result is in text order without repeats.
func ResolveRelative(text string, at time.Time) []RelativeTime {
	ws := dateWords(text)
	var out []RelativeTime
	add := func(t time.Time, g Granularity) {
		r := RelativeTime{Time: t, Granularity: g}
		for _, o := range out {
			if o.Granularity == g && sameUpTo(o.Time, t, g) {
				return
			}
		}
		out = append(out, r)
	}
	for i, w := range ws {
		prev := ""
		if i > 0 {
			prev = ws[i-1]
		}
		next := ""
		if i+1 < len(ws) {
			next = ws[i+1]
		}
		switch {
		case w == "yesterday":
			if prev == "before" && i >= 2 && ws[i-2] == "day" {
				add(at.AddDate(0, 0, -2), Day)
			} else {
				add(at.AddDate(0, 0, -1), Day)
			}
		case w == "tomorrow":
			add(at.AddDate(0, 0, 1), Day)
		case w == "night" && prev == "last":
			add(at.AddDate(0, 0, -1), Day)
		case w == "ago" && i >= 2:
			n, ok := wordNumbers[ws[i-2]]
			if !ok {
				if v, err := strconv.Atoi(ws[i-2]); err == nil && v > 0 && v < 100 {
					n, ok = v, true
				}
			}
			if !ok {
				continue
			}
			switch strings.TrimSuffix(prev, "s") {
			case "day":
				add(at.AddDate(0, 0, -n), Day)
			case "week":
				add(at.AddDate(0, 0, -7*n), Day)
			case "month":
				add(at.AddDate(0, -n, 0), Month)
			case "year":
				add(at.AddDate(-n, 0, 0), Year)
			}
		case w == "last" || w == "next":
			sign := -1
			if w == "next" {
				sign = 1
			}
			switch next {
			case "month":
				add(at.AddDate(0, sign, 0), Month)
			case "year":
				add(at.AddDate(sign, 0, 0), Year)
			default:
				if wd, ok := weekdays[next]; ok {
					add(nearestWeekday(at, wd, sign), Day)
				}
			}
		}
	}
	return out
}

// nearestWeekday is the closest day strictly before (sign < 0) or after
// (sign > 0) at that falls on wd.
func nearestWeekday(at time.Time, wd time.Weekday, sign int) time.Time {
	for k := 1; k <= 7; k++ {
		t := at.AddDate(0, 0, sign*k)
		if t.Weekday() == wd {
			return t
		}
	}
	return at
}

func sameUpTo(a, b time.Time, g Granularity) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	switch g {
	case Year:
		return ay == by
	case Month:
		return ay == by && am == bm
	}
	return ay == by && am == bm && ad == bd
}
