package rank

import (
	"slices"
	"testing"
	"time"
)

func TestTimeTerms(t *testing.T) {
	at := time.Date(2023, 5, 7, 19, 20, 0, 0, time.UTC) // a Sunday
	for g, want := range map[Granularity][]string{
		Day:   {"2023", "2023-05", "may", "2023-05-07", "05-07", "sunday"},
		Month: {"2023", "2023-05", "may"},
		Year:  {"2023"},
	} {
		if got := TimeTerms(at, g); !slices.Equal(got, want) {
			t.Errorf("granularity %d: %v, want %v", g, got, want)
		}
	}
	// The record's own location decides the day.
	late := time.Date(2023, 5, 7, 23, 30, 0, 0, time.FixedZone("x", -5*3600))
	if got := TimeTerms(late, Day)[3]; got != "2023-05-07" {
		t.Errorf("day in the record's zone: %s", got)
	}
}

func TestQueryTimeTerms(t *testing.T) {
	for _, tc := range []struct {
		q     string
		want  []string
		widen []string
	}{
		{"Where did Tom go in April 2023?", []string{"2023-04"}, []string{"2023-04", "2023"}},
		{"What did Tom confide on Saturday 10 June 2023?", []string{"2023-06-10"}, []string{"2023-06-10", "2023-06"}},
		{"What happened on June 10th, 2023?", []string{"2023-06-10"}, []string{"2023-06-10", "2023-06"}},
		{"the 3rd of March 2024", []string{"2024-03-03"}, []string{"2024-03-03", "2024-03"}},
		{"Why was Maya ill on 26 December?", []string{"12-26"}, []string{"12-26", "december"}},
		{"What did she cook in May?", []string{"may"}, nil},
		{"In which year, 2019 or 2021?", []string{"2019", "2021"}, nil},
		{"Where does Ben volunteer on Saturday mornings?", []string{"saturday"}, nil},
		{"What was logged on 2023-05-07?", []string{"2023-05-07"}, []string{"2023-05-07", "2023-05"}},
		{"from Jan 5 to Feb 2 2024", []string{"01-05", "2024-02-02"}, []string{"01-05", "january", "2024-02-02", "2024-02"}},
		// Month names that are also words count only as dates.
		{"What may she bring to the march?", nil, nil},
		{"May 2023 was busy; she may go in March.", []string{"2023-05", "march"}, []string{"2023-05", "2023", "march"}},
		{"How many days were there?", nil, nil},
		{"Was 1850 or 12345 mentioned?", nil, nil},
	} {
		got := QueryTimeTerms(tc.q, false)
		if !slices.Equal(got, tc.want) {
			t.Errorf("QueryTimeTerms(%q) = %q, want %q", tc.q, got, tc.want)
		}
		if tc.widen == nil {
			tc.widen = tc.want
		}
		if got := QueryTimeTerms(tc.q, true); !slices.Equal(got, tc.widen) {
			t.Errorf("QueryTimeTerms(%q, widen) = %q, want %q", tc.q, got, tc.widen)
		}
	}
}

func TestQueryTimeTermsMatchTimeTerms(t *testing.T) {
	// Each form a question can name is a form a record's time has.
	at := time.Date(2024, 2, 15, 12, 0, 0, 0, time.UTC) // a Thursday
	have := TimeTerms(at, Day)
	for _, q := range []string{"on Thursday 15 February 2024", "in February 2024", "on 15 February", "in February",
		"in 2024", "on Thursday", "on 2024-02-15", "Feb 15, 2024"} {
		got := QueryTimeTerms(q, true)
		if len(got) == 0 {
			t.Fatalf("%q: no terms", q)
		}
		for _, term := range got {
			if !slices.Contains(have, term) {
				t.Errorf("%q: term %q is not among the record's %q", q, term, have)
			}
		}
	}
}

func TestResolveRelative(t *testing.T) {
	at := time.Date(2023, 5, 8, 19, 0, 0, 0, time.UTC) // a Monday
	day := func(m time.Month, d int) time.Time { return time.Date(2023, m, d, 19, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		text string
		want []RelativeTime
	}{
		{"I went yesterday.", []RelativeTime{{day(5, 7), Day}}},
		{"The day before yesterday it rained.", []RelativeTime{{day(5, 6), Day}}},
		{"Last night was loud, and tomorrow is my exam.", []RelativeTime{{day(5, 7), Day}, {day(5, 9), Day}}},
		{"Three days ago, and 10 days ago.", []RelativeTime{{day(5, 5), Day}, {day(4, 28), Day}}},
		{"Two weeks ago I started.", []RelativeTime{{day(4, 24), Day}}},
		{"A month ago we moved; last year we married.", []RelativeTime{{day(4, 8), Month}, {time.Date(2022, 5, 8, 19, 0, 0, 0, time.UTC), Year}}},
		{"Last Saturday I rode; next Friday I fly.", []RelativeTime{{day(5, 6), Day}, {day(5, 12), Day}}},
		{"Last Monday was a week ago.", []RelativeTime{{day(5, 1), Day}}},
		// Too vague: left alone.
		{"Last week was busy. On Saturday I rest. Days ago.", nil},
		{"Yesterday, yesterday!", []RelativeTime{{day(5, 7), Day}}},
	} {
		got := ResolveRelative(tc.text, at)
		if !slices.Equal(got, tc.want) {
			t.Errorf("ResolveRelative(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
