package main

import (
	"fmt"
	"io"
	"strings"
)

// write prints the Markdown report to w and writes the JSON file.
func (r *recallReport) write(w io.Writer, jsonPath string) error {
	return writeReport(w, jsonPath, r, r.markdown())
}

func (r *recallReport) markdown() string {
	var sb strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&sb, format, a...) }
	st, set := r.Stats, r.Settings
	p("## memsvc-bench recall quality\n\n")
	p("- Dataset: %s: %d conversations, %d sessions, %d turns, %d questions\n", r.Dataset, st.Conversations, st.Sessions, st.Turns, st.Questions)
	p("- Command: `%s`\n", r.Command)
	p("- Date: %s (run took %s); %s, %d cores\n", r.Started.Format("2006-01-02 15:04 MST"), r.Took, r.Machine.CPU, r.Machine.Cores)
	p("- memsvc: %s; %s mode; limit %d; %s ingest; reconsolidation %s; ageing: %s\n",
		set.Server, set.Mode, set.Limit, set.Ingest, onOff(set.Reconsolidate), ageing(set))
	if set.SpeakerText {
		p("- Turns stored as \"Speaker: text\"\n")
	}
	if r.Error != "" {
		p("- **The run failed**: %s\n", r.Error)
	}
	p("\n")
	if r.Memsvc == nil && r.Baseline == nil {
		return sb.String()
	}
	p("| System | Questions | hit@1 | hit@5 | hit@10 | evidence@5 | evidence@10 | MRR |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, sys := range []struct {
		name   string
		groups []groupScores
	}{{"memsvc", r.Memsvc}, {"BM25 reference", r.Baseline}} {
		if len(sys.groups) > 0 {
			s := sys.groups[0].Scores
			p("| %s | %d | %s | %s | %s | %s | %s | %s |\n", sys.name, s.Questions, f3(s.Hit1), f3(s.Hit5), f3(s.Hit10), f3(s.Evidence5), f3(s.Evidence10), f3(s.MRR))
		}
	}
	p("\n")
	if r.Memsvc != nil {
		p("Recall latency (memsvc, first pass): p50 %.2f ms, p95 %.2f ms.\n\n", r.LatencyP50ms, r.LatencyP95ms)
	}
	main := r.Memsvc
	if main == nil {
		main = r.Baseline
	}
	p("| Group | Questions | hit@1 | hit@5 | hit@10 | evidence@5 | evidence@10 | MRR | BM25 hit@5 | BM25 MRR |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, g := range main {
		s := g.Scores
		bh, bm := "—", "—"
		if r.Baseline != nil {
			bh, bm = f3(r.Baseline[i].Scores.Hit5), f3(r.Baseline[i].Scores.MRR)
		}
		if r.Memsvc == nil {
			p("| %s | %d | — | — | — | — | — | — | %s | %s |\n", g.Group, s.Questions, bh, bm)
			continue
		}
		p("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", g.Group, s.Questions, f3(s.Hit1), f3(s.Hit5), f3(s.Hit10), f3(s.Evidence5), f3(s.Evidence10), f3(s.MRR), bh, bm)
	}
	p("\n")
	if len(r.Passes) > 1 {
		p("| Pass | hit@5 | MRR | top 5 changed from the pass before |\n|---:|---:|---:|---|\n")
		for _, ps := range r.Passes {
			changed := "—"
			if ps.Pass > 1 {
				changed = fmt.Sprintf("%d of %d questions", ps.Top5Changed, st.Questions)
			}
			p("| %d | %s | %s | %s |\n", ps.Pass, f3(ps.Hit5), f3(ps.MRR), changed)
		}
		p("\n")
	}
	if v := r.Visibility; v != nil {
		p("Human-mode rendering of the first %d memories of each answer:\n\n", visibleTop)
		p("| Words shown | Share |\n|---|---:|\n")
		p("| all words of the returned memories | %s (%d of %d) |\n", share(v.Shown, v.Words), v.Shown, v.Words)
		p("| words of returned evidence turns | %s (%d of %d) |\n", share(v.EvidenceShown, v.EvidenceWords), v.EvidenceShown, v.EvidenceWords)
		p("| answer words in returned evidence turns | %s (%d of %d) |\n", share(v.AnswerShown, v.AnswerWords), v.AnswerShown, v.AnswerWords)
		p("| question words in returned memories | %s (%d of %d) |\n", share(v.QueryShown, v.QueryWords), v.QueryShown, v.QueryWords)
		p("| memories showing under half their words | %d of %d |\n\n", v.UnderHalf, v.Memories)
	}
	return sb.String()
}

func f3(x float64) string { return fmt.Sprintf("%.3f", x) }

func share(n, of int) string {
	if of == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(of))
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func ageing(s recallSetting) string {
	var parts []string
	if s.AgeSessions {
		parts = append(parts, "the time between session dates")
	}
	if s.Age != "0s" {
		parts = append(parts, s.Age+" before the questions")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", then ")
}
