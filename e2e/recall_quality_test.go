package e2e

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// recallReport is the part of the --json output of memsvc-bench
// recall-quality the test reads.
type recallReport struct {
	Stats struct {
		Conversations, Sessions, Turns, Questions int
	} `json:"dataset_stats"`
	Settings struct {
		Mode, Ingest  string
		Reconsolidate bool
		Age           string
		AgeSessions   bool `json:"age_sessions"`
	}
	Memsvc   []recallGroup
	Baseline []recallGroup
	Passes   []struct {
		Pass        int
		Top5Changed int `json:"top5_changed_from_previous_pass"`
	}
	LatencyP50ms float64 `json:"latency_p50_ms"`
	Visibility   *struct {
		Memories   int
		Words      int
		Shown      int `json:"words_shown"`
		QueryWords int `json:"query_words"`
	}
	Questions []struct {
		ID       string
		Evidence []string
		Memsvc   [][]string
		Baseline []string
	}
	Error string
}

type recallGroup struct {
	Group  string
	Scores struct {
		Questions  int
		Hit1       float64 `json:"hit_at_1"`
		Hit5       float64 `json:"hit_at_5"`
		Hit10      float64 `json:"hit_at_10"`
		Evidence5  float64 `json:"evidence_at_5"`
		Evidence10 float64 `json:"evidence_at_10"`
		MRR        float64 `json:"mrr"`
	}
}

// TestRecallQualityHarness builds memsvc-bench and runs recall-quality on
// one conversation of the development set against real servers, in the two
// configurations CI can afford: human mode after a week of ageing, asked
// twice, with batch ingest; and perfect mode with one store per turn,
// reconsolidation off and ageing between sessions. It checks the report's
// shape and that the figures are consistent and measure something (the
// harness maps recalled records back to the dataset's turns). The values
// themselves are what ranking work changes, so they are not pinned.
func TestRecallQualityHarness(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Second)
	defer cancel()
	dir, bench := buildBench(ctx, t)
	dataset, err := filepath.Abs(filepath.Join("testdata", "recall", "dialogue.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, args ...string) (recallReport, string) {
		t.Helper()
		jsonPath := filepath.Join(t.TempDir(), "recall.json")
		args = append([]string{"recall-quality", "--dataset", dataset, "--conversations", "c2", "--max-questions", "40",
			"--json", jsonPath, "--timeout", "40s"}, args...)
		out := runBench(ctx, t, dir, bench, args...)
		var rep recallReport
		readJSONReport(t, jsonPath, &rep)
		return rep, out
	}
	memsvcBin := filepath.Join(binDir, "memsvc")
	check := func(t *testing.T, rep recallReport, out string, passes int) {
		t.Helper()
		if rep.Error != "" || rep.Stats.Conversations != 1 || rep.Stats.Questions != 40 || rep.Stats.Sessions < 8 || rep.Stats.Turns < 200 {
			t.Errorf("run: error %q, stats %+v", rep.Error, rep.Stats)
		}
		for _, re := range []string{
			`(?m)^\| memsvc \| 40 \| [01]\.\d{3} \| [01]\.\d{3} \| [01]\.\d{3} \| [01]\.\d{3} \| [01]\.\d{3} \| [01]\.\d{3} \|$`,
			`(?m)^\| BM25 reference \| 40 \| [01]\.\d{3} \| `,
			`(?m)^\| all \| 40 \| `,
			`(?m)^\| category: single-hop \| \d+ \| `,
			`(?m)^\| tag: vocab \| \d+ \| `,
			`Recall latency \(memsvc, first pass\): p50 \d+\.\d\d ms`,
		} {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("report does not match %s:\n%s", re, out)
			}
		}
		for _, sys := range [][]recallGroup{rep.Memsvc, rep.Baseline} {
			if len(sys) < 5 || sys[0].Group != "all" || sys[0].Scores.Questions != 40 {
				t.Fatalf("groups: %+v", sys)
			}
			s := sys[0].Scores
			if s.Hit1 > s.Hit5 || s.Hit5 > s.Hit10 || s.Evidence5 > s.Evidence10 || s.Evidence5 > s.Hit5 || s.Evidence10 > s.Hit10 || s.MRR < s.Hit1 || s.MRR > s.Hit10 {
				t.Errorf("inconsistent figures %+v", s)
			}
			if s.Hit10 == 0 {
				t.Errorf("nothing found in the top 10 of any question: %+v", s)
			}
		}
		if rep.LatencyP50ms <= 0 || len(rep.Passes) != passes || len(rep.Questions) != 40 {
			t.Errorf("latency %v, %d passes, %d questions", rep.LatencyP50ms, len(rep.Passes), len(rep.Questions))
		}
		for _, q := range rep.Questions {
			if len(q.Memsvc) != passes || len(q.Memsvc[0]) > 10 || len(q.Baseline) > 10 || len(q.Evidence) == 0 {
				t.Fatalf("question %s: %+v", q.ID, q)
			}
			for _, id := range q.Memsvc[0] {
				if id != "" && !strings.HasPrefix(id, "c2-") {
					t.Fatalf("question %s: recalled turn %q is not of conversation c2", q.ID, id)
				}
			}
		}
	}

	t.Run("human, aged, twice", func(t *testing.T) {
		rep, out := run(t, "--memsvc-bin", memsvcBin, "--mode", "human", "--age", "168h", "--repeat", "2")
		check(t, rep, out, 2)
		if rep.Settings.Mode != "human" || rep.Settings.Age != "168h0m0s" || rep.Settings.Ingest != "batch" || !rep.Settings.Reconsolidate {
			t.Errorf("settings %+v", rep.Settings)
		}
		v := rep.Visibility
		if v == nil || v.Memories == 0 || v.Words == 0 || v.Shown > v.Words || v.QueryWords == 0 {
			t.Errorf("visibility %+v", v)
		}
		// A week of decay leaves episodic memories at about 0.35: human
		// mode must have hidden some words.
		if v != nil && v.Shown == v.Words {
			t.Errorf("human mode after a week showed every word: %+v", v)
		}
		if !strings.Contains(out, "| Pass | hit@5 | MRR | top 5 changed from the pass before |") ||
			!regexp.MustCompile(`(?m)^\| 2 \| [01]\.\d{3} \| [01]\.\d{3} \| \d+ of 40 questions \|$`).MatchString(out) {
			t.Errorf("no repeat table:\n%s", out)
		}
		if !strings.Contains(out, "| memories showing under half their words | ") {
			t.Errorf("no visibility table:\n%s", out)
		}
	})
	t.Run("perfect, single stores, aged between sessions", func(t *testing.T) {
		rep, out := run(t, "--memsvc-bin", memsvcBin, "--ingest", "single", "--reconsolidate=false", "--age-sessions")
		check(t, rep, out, 1)
		if rep.Settings.Mode != "perfect" || rep.Settings.Ingest != "single" || rep.Settings.Reconsolidate || !rep.Settings.AgeSessions || rep.Visibility != nil {
			t.Errorf("settings %+v, visibility %+v", rep.Settings, rep.Visibility)
		}
		if !strings.Contains(out, "ageing: the time between session dates") {
			t.Errorf("report does not say how the run aged:\n%s", out)
		}
	})
	t.Run("running server", func(t *testing.T) {
		srv := startServer(t, t.TempDir())
		rep, out := run(t, "--server-url", srv.url(""))
		check(t, rep, out, 1)
		if !strings.Contains(out, "- memsvc: "+srv.url("")+"; perfect mode;") {
			t.Errorf("report does not name the server:\n%s", out)
		}
		var st struct {
			TotalRecords int `json:"total_records"`
		}
		if code := call(t, http.MethodGet, srv.url("/v1/introspect/stats"), nil, &st); code != http.StatusOK || st.TotalRecords != rep.Stats.Turns {
			t.Errorf("stats answered %d: %d records stored, want one per turn (%d)", code, st.TotalRecords, rep.Stats.Turns)
		}
		// Each turn is one memory: its text as content, where and when it
		// was said in the documented metadata keys.
		var found struct {
			Memories []struct {
				Record struct {
					Metadata map[string]string
				}
			}
		}
		query := map[string]any{"cue": map[string]any{"text": "signed the lease Moseley"}, "limit": 1, "recall_mode": "perfect", "reconsolidate": false}
		if code := call(t, http.MethodPost, srv.url("/v1/recall/query"), query, &found); code != http.StatusOK || len(found.Memories) != 1 {
			t.Fatalf("recall answered %d: %+v", code, found)
		}
		want := map[string]string{"conversation": "c2", "session": "c2-s01", "turn_id": "c2-s01-t05", "speaker": "Dev",
			"session_date": "2023-06-03", "event_time": "2023-06-03T18:30:00Z"}
		if md := found.Memories[0].Record.Metadata; !maps.Equal(md, want) {
			t.Errorf("metadata %v, want %v", md, want)
		}
	})
	t.Run("usage errors", func(t *testing.T) {
		for _, args := range [][]string{
			{"recall-quality"},
			{"recall-quality", "--dataset", dataset, "--mode", "vague"},
			{"recall-quality", "--dataset", dataset, "--conversations", "nope"},
			{"recall-quality", "--dataset", dataset, "--limit", "0"},
		} {
			cmd := exec.CommandContext(ctx, bench, args...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Errorf("memsvc-bench %v: %v, want exit code 2\n%s", args, err, out)
			}
		}
	})
	left, err := filepath.Glob(filepath.Join(dir, "memsvc-bench-*"))
	if err != nil || len(left) != 0 {
		t.Errorf("scratch directories left behind: %v %v", left, err)
	}
}
