package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
)

// The recall-quality subcommand stores a dataset of conversations in
// memsvc, one memory per turn, asks the dataset's questions through the
// public recall API and scores the answers against the turns that hold
// the evidence, beside a plain BM25 index of the same turns.
//
// Every turn is stored with its text as content and this metadata:
//
//	conversation  the conversation id
//	session       the session id
//	turn_id       the turn id
//	speaker       who spoke
//	session_date  the session's calendar date, YYYY-MM-DD
//	event_time    when the turn was spoken, RFC 3339 (the session's date
//	              and time unless the turn has its own)
//
// Sessions are stored in date order (the order one agent would have lived
// them), each as one batch store with sequential associations
// (--ingest batch) or one store per turn (--ingest single).

// recallConfig is the validated command line of recall-quality.
type recallConfig struct {
	args          []string
	dataset       string
	conversations []string
	maxQuestions  int
	mode          memory.RecallMode
	limit         int
	serverURL     string
	apiKey        string
	memsvcBin     string
	ingest        string
	speakerText   bool
	reconsolidate bool
	age           time.Duration
	ageSessions   bool
	baseline      string
	repeat        int
	jsonPath      string
	timeout       time.Duration
}

// Bounds of the command line.
const (
	maxRecallLimit = 100
	maxRepeat      = 5
	maxAge         = 10 * 365 * 24 * time.Hour
	visibleTop     = 5 // memories of each answer whose visibility is measured
)

func parseRecallFlags(args []string, stderr io.Writer) (*recallConfig, error) {
	fs := newFlagSet("memsvc-bench recall-quality", "Usage: memsvc-bench recall-quality --dataset FILE [flags]\n\n"+
		"Store every turn of a JSONL dataset of conversations as one memory (sessions in date\n"+
		"order), ask its questions through the recall API and report hit@1/5/10, the share of\n"+
		"evidence found, MRR and latency, overall, per category and per tag, beside a plain BM25\n"+
		"index of the same turns. Without --server-url it builds memsvc and starts a fresh\n"+
		"`memsvc serve` on 127.0.0.1:0 over a temporary data directory. The dataset format is\n"+
		"described in e2e/testdata/recall/README.md.\n\nFlags:\n", stderr)
	var (
		cfg   = recallConfig{args: append([]string{"recall-quality"}, args...)}
		mode  = fs.String("mode", "perfect", "recall mode named in every recall: perfect or human")
		convs = fs.String("conversations", "", "comma-separated conversation ids to use (default: all)")
	)
	fs.StringVar(&cfg.dataset, "dataset", "", "JSONL dataset file (required)")
	fs.IntVar(&cfg.maxQuestions, "max-questions", 0, "ask at most this many questions, the first in file order (0: all)")
	fs.IntVar(&cfg.limit, "limit", 10, "memories asked for in each recall, 1 to 100 (hit@10 needs 10)")
	fs.StringVar(&cfg.serverURL, "server-url", "", "use this running server (it should hold nothing else; API key from MEMSVC_SERVER_API_KEY) instead of starting one")
	fs.StringVar(&cfg.memsvcBin, "memsvc-bin", "", "memsvc binary to start (default: go build ./cmd/memsvc)")
	fs.StringVar(&cfg.ingest, "ingest", "batch", "batch: one batch store per session; single: one store per turn")
	fs.BoolVar(&cfg.speakerText, "speaker-text", false, "store each turn's text as \"Speaker: text\" (the speaker is in metadata either way)")
	fs.BoolVar(&cfg.reconsolidate, "reconsolidate", true, "ask recalls with reconsolidation (reinforce what is returned), as the API does by default")
	fs.DurationVar(&cfg.age, "age", 0, "advance the decay clock by this much after storing, before the questions (e.g. 168h)")
	fs.BoolVar(&cfg.ageSessions, "age-sessions", false, "advance the decay clock between sessions by the time between their dates")
	fs.StringVar(&cfg.baseline, "baseline", "bm25", "reference reported beside memsvc: bm25 or none")
	fs.IntVar(&cfg.repeat, "repeat", 1, "ask all questions this many times in a row (1 to 5) and report how the top 5 changed")
	fs.StringVar(&cfg.jsonPath, "json", "", "also write the results, per question included, as JSON to this file")
	fs.DurationVar(&cfg.timeout, "timeout", time.Hour, "bound on the whole run")
	if help, err := parseCommandLine(fs, args); help || err != nil {
		return nil, err
	}
	if err := cfg.validate(*mode, *convs); err != nil {
		return nil, &usageError{err}
	}
	cfg.apiKey = os.Getenv("MEMSVC_SERVER_API_KEY")
	return &cfg, nil
}

func (cfg *recallConfig) validate(mode, convs string) error {
	if cfg.dataset == "" {
		return errors.New("--dataset is required")
	}
	m, err := memory.ParseRecallMode(mode)
	if err != nil {
		return fmt.Errorf("--mode %s: want perfect or human", quoteShort(mode))
	}
	cfg.mode = m
	for c := range strings.SplitSeq(convs, ",") {
		if c = strings.TrimSpace(c); c != "" {
			cfg.conversations = append(cfg.conversations, c)
		}
	}
	switch {
	case cfg.maxQuestions < 0:
		return fmt.Errorf("--max-questions %d: must not be negative", cfg.maxQuestions)
	case cfg.limit < 1 || cfg.limit > maxRecallLimit:
		return fmt.Errorf("--limit %d: want 1 to %d", cfg.limit, maxRecallLimit)
	case cfg.ingest != "batch" && cfg.ingest != "single":
		return fmt.Errorf("--ingest %s: want batch or single", quoteShort(cfg.ingest))
	case cfg.age < 0 || cfg.age > maxAge:
		return fmt.Errorf("--age %v: want 0 to %v", cfg.age, maxAge)
	case cfg.baseline != "bm25" && cfg.baseline != "none":
		return fmt.Errorf("--baseline %s: want bm25 or none", quoteShort(cfg.baseline))
	case cfg.repeat < 1 || cfg.repeat > maxRepeat:
		return fmt.Errorf("--repeat %d: want 1 to %d", cfg.repeat, maxRepeat)
	case cfg.timeout <= 0:
		return fmt.Errorf("--timeout %v: must be positive", cfg.timeout)
	case cfg.serverURL != "" && cfg.memsvcBin != "":
		return errors.New("--server-url and --memsvc-bin exclude each other")
	}
	if cfg.memsvcBin != "" {
		if cfg.memsvcBin, err = filepath.Abs(cfg.memsvcBin); err != nil {
			return err
		}
		if st, err := os.Stat(cfg.memsvcBin); err != nil || st.IsDir() {
			return fmt.Errorf("--memsvc-bin %s: not a file", cfg.memsvcBin)
		}
	}
	return nil
}

// recallReport is what one recall-quality run measured.
type recallReport struct {
	Command  string        `json:"command"`
	Started  time.Time     `json:"started"`
	Took     string        `json:"took"`
	Machine  machine       `json:"machine"`
	Dataset  string        `json:"dataset"`
	Stats    datasetStats  `json:"dataset_stats"`
	Settings recallSetting `json:"settings"`
	Error    string        `json:"error,omitempty"`
	// Memsvc and Baseline are the figures of the first pass; Passes has
	// one entry per pass with --repeat.
	Memsvc   []groupScores `json:"memsvc,omitempty"`
	Baseline []groupScores `json:"baseline,omitempty"`
	Passes   []passReport  `json:"passes,omitempty"`
	// LatencyP50ms and LatencyP95ms are of the recalls of the first pass.
	LatencyP50ms float64          `json:"latency_p50_ms"`
	LatencyP95ms float64          `json:"latency_p95_ms"`
	Visibility   *visibility      `json:"visibility,omitempty"`
	Questions    []questionReport `json:"questions,omitempty"`
}

type recallSetting struct {
	Mode          string `json:"mode"`
	Limit         int    `json:"limit"`
	Ingest        string `json:"ingest"`
	SpeakerText   bool   `json:"speaker_text"`
	Reconsolidate bool   `json:"reconsolidate"`
	Age           string `json:"age"`
	AgeSessions   bool   `json:"age_sessions"`
	Server        string `json:"server"`
	Baseline      string `json:"baseline"`
}

// passReport is one pass over every question.
type passReport struct {
	Pass        int     `json:"pass"`
	Hit5        float64 `json:"hit_at_5"`
	MRR         float64 `json:"mrr"`
	Top5Changed int     `json:"top5_changed_from_previous_pass"`
}

// questionReport is one question's answers: the dataset turn ids
// returned, best first ("" for a memory that is no turn of the dataset).
type questionReport struct {
	ID       string     `json:"id"`
	Category string     `json:"category"`
	Tags     []string   `json:"tags,omitempty"`
	Evidence []string   `json:"evidence"`
	Memsvc   [][]string `json:"memsvc"` // one list per pass
	Baseline []string   `json:"baseline,omitempty"`
}

// recallRun is the state of one run.
type recallRun struct {
	cfg    *recallConfig
	b      *bench // scratch directory, children, log
	ds     *dataset
	rep    *recallReport
	cl     *client.Client
	srv    *server // nil with --server-url
	turnOf map[memory.ID]string
}

// runRecall is the recall-quality subcommand.
func runRecall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseRecallFlags(args, stderr)
	if err != nil || cfg == nil {
		return err
	}
	ds, err := loadDataset(cfg.dataset)
	if err != nil {
		return err
	}
	if ds, err = ds.subset(cfg.conversations, cfg.maxQuestions); err != nil {
		return &usageError{err}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	b, err := newBench(&config{args: cfg.args, memsvcBin: cfg.memsvcBin, skipMCP: true, timeout: cfg.timeout}, stderr)
	if err != nil {
		return err
	}
	defer b.close()
	r := &recallRun{cfg: cfg, b: b, ds: ds, turnOf: map[memory.ID]string{}, rep: &recallReport{
		Command: commandLine(cfg.args), Started: time.Now().UTC(), Machine: readMachine(), Dataset: cfg.dataset,
		Stats: ds.stats(), Settings: cfg.settings(),
	}}
	runErr := r.run(ctx)
	runErr = whyStopped(ctx, cfg.timeout, runErr)
	if runErr != nil {
		r.rep.Error = runErr.Error()
	}
	r.rep.Took = time.Since(b.begin).Round(time.Second).String()
	return errors.Join(runErr, r.rep.write(stdout, cfg.jsonPath))
}

func (cfg *recallConfig) settings() recallSetting {
	s := recallSetting{Mode: cfg.mode.String(), Limit: cfg.limit, Ingest: cfg.ingest, SpeakerText: cfg.speakerText, Reconsolidate: cfg.reconsolidate,
		Age: cfg.age.String(), AgeSessions: cfg.ageSessions, Server: "fresh memsvc serve", Baseline: cfg.baseline}
	if cfg.serverURL != "" {
		s.Server = cfg.serverURL
	}
	return s
}

func (r *recallRun) run(ctx context.Context) error {
	qs := r.ds.Questions
	r.rep.Questions = make([]questionReport, len(qs))
	for i, q := range qs {
		r.rep.Questions[i] = questionReport{ID: q.ID, Category: q.Category, Tags: q.Tags, Evidence: q.Evidence}
	}
	if r.cfg.baseline == "bm25" {
		ranked := r.baseline()
		r.rep.Baseline = byGroup(qs, ranked)
		for i := range qs {
			r.rep.Questions[i].Baseline = ranked[i]
		}
	}
	if err := r.connect(ctx); err != nil {
		return err
	}
	if err := r.store(ctx); err != nil {
		return err
	}
	if r.srv != nil {
		if _, err := r.b.settle(ctx, r.srv.process); err != nil {
			return err
		}
	}
	if r.cfg.age > 0 {
		r.b.logf("advancing the decay clock by %v", r.cfg.age)
		if err := r.tick(ctx, r.cfg.age); err != nil {
			return err
		}
	}
	return r.ask(ctx)
}

// baseline answers every question from a BM25 index of the same turns
// (the same text memsvc stores), added in the order memsvc stores them.
func (r *recallRun) baseline() [][]string {
	x := newBM25()
	for _, s := range r.ds.ingestOrder() {
		for _, t := range s.Turns {
			text := t.Text
			if r.cfg.speakerText {
				text = t.Speaker + ": " + text
			}
			x.add(t.ID, text)
		}
	}
	out := make([][]string, len(r.ds.Questions))
	for i, q := range r.ds.Questions {
		out[i] = x.search(q.Text, r.cfg.limit)
	}
	return out
}

// connect starts a fresh server, or connects to --server-url.
func (r *recallRun) connect(ctx context.Context) error {
	if r.cfg.serverURL != "" {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil
		cl, err := client.New(r.cfg.serverURL, client.Options{APIKey: r.cfg.apiKey, HTTPClient: &http.Client{Transport: tr}, UserAgent: "memsvc-bench"})
		if err != nil {
			return fmt.Errorf("--server-url: %w", err)
		}
		r.cl = cl
		return nil
	}
	if err := r.b.binaries(ctx); err != nil {
		return err
	}
	dir, err := r.b.scratch("data")
	if err != nil {
		return err
	}
	home, err := r.b.scratch("home")
	if err != nil {
		return err
	}
	if r.srv, err = startServer(ctx, r.b.kids, r.b.cfg.memsvcBin, dir, home); err != nil {
		return err
	}
	r.cl, err = newClient(r.srv)
	return err
}

// store writes every turn, session by session in date order, advancing
// the decay clock between sessions with --age-sessions.
func (r *recallRun) store(ctx context.Context) error {
	order := r.ds.ingestOrder()
	r.b.logf("storing %d turns of %d sessions (%s)", len(r.ds.Turns), len(order), r.cfg.ingest)
	for i, s := range order {
		if r.cfg.ageSessions && i > 0 {
			if gap := s.Date.Sub(order[i-1].Date); gap > 0 {
				if err := r.tick(ctx, gap); err != nil {
					return err
				}
			}
		}
		if err := r.storeSession(ctx, s); err != nil {
			return fmt.Errorf("store session %s: %w", s.ID, err)
		}
	}
	return nil
}

func (r *recallRun) storeSession(ctx context.Context, s *session) error {
	reqs := make([]memory.EncodeStoreRequest, len(s.Turns))
	for i, t := range s.Turns {
		md, err := json.Marshal(map[string]string{
			"conversation": s.Conv.ID, "session": s.ID, "turn_id": t.ID, "speaker": t.Speaker,
			"session_date": s.Date.Format(time.DateOnly), "event_time": t.Time.Format(time.RFC3339),
		})
		if err != nil {
			return err
		}
		text := t.Text
		if r.cfg.speakerText {
			text = t.Speaker + ": " + text
		}
		reqs[i] = memory.EncodeStoreRequest{Content: memory.TextContent(text), Metadata: md}
	}
	if r.cfg.ingest == "single" {
		for i := range reqs {
			ctx, cancel := context.WithTimeout(ctx, opTimeout)
			resp, err := r.cl.EncodeStore(ctx, &reqs[i])
			cancel()
			if err != nil {
				return err
			}
			r.turnOf[resp.RecordID] = s.Turns[i].ID
		}
		return nil
	}
	for start := 0; start < len(reqs); start += memory.MaxBatchRecords {
		end := min(len(reqs), start+memory.MaxBatchRecords)
		ctx, cancel := context.WithTimeout(ctx, opTimeout)
		resp, err := r.cl.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: reqs[start:end], InferAssociations: true})
		cancel()
		if err != nil {
			return err
		}
		if len(resp.Results) != end-start {
			return fmt.Errorf("batch of %d records answered %d results", end-start, len(resp.Results))
		}
		for i, res := range resp.Results {
			r.turnOf[res.RecordID] = s.Turns[start+i].ID
		}
	}
	return nil
}

// tick advances the server's decay clock by d, in ticks of at most a
// year.
func (r *recallRun) tick(ctx context.Context, d time.Duration) error {
	const year = 365 * 24 * 3600
	for secs := int64(math.Round(d.Seconds())); secs > 0; secs -= year {
		n := uint32(min(secs, year))
		ctx, cancel := context.WithTimeout(ctx, opTimeout)
		_, err := r.cl.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: &n, AllowLong: true})
		cancel()
		if err != nil {
			return fmt.Errorf("decay tick: %w", err)
		}
	}
	return nil
}

// ask runs every pass over the questions and scores them.
func (r *recallRun) ask(ctx context.Context) error {
	qs := r.ds.Questions
	var prev [][]string
	for pass := 1; pass <= r.cfg.repeat; pass++ {
		r.b.logf("pass %d: asking %d questions", pass, len(qs))
		ranked := make([][]string, len(qs))
		var lat []time.Duration
		var vis visibility
		for i, q := range qs {
			req := memory.DefaultRecallQueryRequest()
			text := q.Text
			req.Cue.Text = &text
			req.Limit = uint32(r.cfg.limit)
			req.Reconsolidate = r.cfg.reconsolidate
			mode := r.cfg.mode
			req.RecallMode = &mode
			qctx, cancel := context.WithTimeout(ctx, opTimeout)
			start := time.Now()
			resp, err := r.cl.RecallQuery(qctx, &req)
			took := time.Since(start)
			cancel()
			if err != nil {
				return fmt.Errorf("pass %d, question %s: %w", pass, q.ID, err)
			}
			lat = append(lat, took)
			mems := make([]returned, len(resp.Memories))
			ranked[i] = make([]string, len(resp.Memories))
			for j, m := range resp.Memories {
				ranked[i][j] = r.turnOf[m.Record.ID]
				mems[j] = returned{turn: ranked[i][j], original: contentText(m.Record.Content), rendered: contentText(m.RenderedContent)}
			}
			vis.addAll(measureVisibility(q, mems, visibleTop))
			r.rep.Questions[i].Memsvc = append(r.rep.Questions[i].Memsvc, ranked[i])
		}
		all := score(qs, ranked)
		p := passReport{Pass: pass, Hit5: all.Hit5, MRR: all.MRR}
		if pass == 1 {
			r.rep.Memsvc = byGroup(qs, ranked)
			slices.Sort(lat)
			r.rep.LatencyP50ms, r.rep.LatencyP95ms = ms(pct(lat, 50)), ms(pct(lat, 95))
			if r.cfg.mode == memory.ModeHuman {
				r.rep.Visibility = &vis
			}
		} else {
			p.Top5Changed = topChanged(prev, ranked, 5)
		}
		r.rep.Passes = append(r.rep.Passes, p)
		prev = ranked
	}
	return nil
}

// contentText joins the text blocks of c.
func contentText(c memory.MemoryContent) string {
	var parts []string
	for _, b := range c.Blocks {
		if b.Modality == memory.ModalityText {
			parts = append(parts, string(b.Data))
		}
	}
	return strings.Join(parts, "\n")
}
