package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/engine"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

// TestTranscripts runs the transcripts in testdata/transcripts: stored
// memories, recalls with their ranked results, dream ticks, consolidations
// and decay with the fidelity they leave. They pin the engine's behaviour
// as it is; a deliberate change of ranking, grouping or decay rewrites
// them with
//
//	go test ./pkg/engine -run TestTranscripts -rewrite
//
// and the diff shows what changed. Records are named in the transcripts;
// records the engine makes (dream summaries, consolidated copies) get
// names from what made them.
//
// Commands (arguments in brackets are optional; the text of a record or
// the query of a recall goes on the lines after the command):
//
//	reset [working=N]                       a new engine on an empty store
//	store name=N [store=S] [emotion=(label, level)] [embed=(x, y, ...)] [link=(target, type, weight)]
//	      [event-time=T] [speaker=S]        store one record, a millisecond after the last command
//	                                        (event_time and speaker in its metadata)
//	update name=N                           replace the record's text
//	raw name=N session=S [topic=T] [speaker=S] [visibility=V] [secrecy=L]
//	advance by=DURATION                     move the wall clock
//	decay-tick [seconds=N]                  advance the decay clock
//	recall [mode=M] [limit=N] [stores=(S, ...)] [decayed] [min-fidelity=F]
//	       [depth=N] [no-reconsolidate] [embed=(...)] [emotion=(label, level)] [render]
//	dream [session=S] [max-groups=N] [no-promote] [dry-run]
//	consolidate [strategy=S] [min-age-hours=N] [min-access=N] [dry-run]
//	set-mode mode=M [scope=(S, ...)]
//	forecast by=DURATION                    fidelity forecast for every record
//	records [text]                          every curated record, by name
//	journal                                 every raw entry and what was made of it
func TestTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata/transcripts", func(t *testing.T, path string) {
		tr := &transcript{}
		tr.reset(t, 7)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := tr.run(t, d)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

// transcriptStart is the wall clock at every reset.
var transcriptStart = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// transcript is the state of one transcript file.
type transcript struct {
	clock *testkit.Clock
	e     *engine.Engine
	names map[memory.ID]string
	ids   map[string]memory.ID
	// made counts the names given to records the engine made, per kind.
	made map[string]int
}

func (tr *transcript) reset(t *testing.T, working int) {
	t.Helper()
	db, err := store.OpenInMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	tr.clock = testkit.NewClock(transcriptStart)
	// No background similarity links: they would arrive at random times.
	tr.e, err = engine.Open(context.Background(), db, engine.Options{Now: tr.clock.Now, SimilarLinks: -1, WorkingCapacity: working})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.e.Close() })
	tr.names, tr.ids, tr.made = map[memory.ID]string{}, map[string]memory.ID{}, map[string]int{}
}

func (tr *transcript) name(t *testing.T, d *datadriven.TestData, id memory.ID, n string) {
	t.Helper()
	if _, dup := tr.ids[n]; dup {
		d.Fatalf(t, "name %s is taken", n)
	}
	tr.names[id], tr.ids[n] = n, id
}

func (tr *transcript) run(t *testing.T, d *datadriven.TestData) (string, error) {
	ctx := context.Background()
	switch d.Cmd {
	case "reset":
		working := 7
		d.MaybeScanArgs(t, "working", &working)
		tr.reset(t, working)
		return "", nil
	case "store":
		return tr.store(ctx, t, d)
	case "update":
		var n string
		d.ScanArgs(t, "name", &n)
		id, ok := tr.ids[n]
		if !ok {
			d.Fatalf(t, "no record named %s", n)
		}
		c := memory.TextContent(strings.TrimSpace(d.Input))
		return "", tr.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: id, Content: &c})
	case "raw":
		return tr.raw(ctx, t, d)
	case "advance":
		tr.clock.Advance(byArg(t, d))
		return tr.clock.Now().Format(time.RFC3339) + "\n", nil
	case "decay-tick":
		secs := uint32(3600)
		d.MaybeScanArgs(t, "seconds", &secs)
		// Transcripts age records by months at a time on purpose.
		resp, err := tr.e.DecayTick(ctx, &memory.DecayTickRequest{TickDurationSeconds: &secs, AllowLong: true})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("updated=%d below-threshold=%d pruned=%d\n", resp.RecordsUpdated, resp.RecordsBelowThreshold, resp.RecordsPruned), nil
	case "recall":
		return tr.recall(ctx, t, d)
	case "dream":
		return tr.dream(ctx, t, d)
	case "consolidate":
		return tr.consolidate(ctx, t, d)
	case "set-mode":
		m, err := memory.ParseRecallMode(d.CmdArgs[0].SingleVal(t))
		if err != nil || d.CmdArgs[0].Key != "mode" {
			d.Fatalf(t, "want set-mode mode=M: %v", err)
		}
		return "", tr.e.SetMode(ctx, &memory.SetModeRequest{Mode: m, Scope: storesArg(t, d, "scope")})
	case "forecast":
		return tr.forecast(ctx, t, d)
	case "records":
		return tr.records(ctx, t, d.HasArg("text"))
	case "journal":
		return tr.journal(ctx)
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return "", nil
}

func (tr *transcript) store(ctx context.Context, t *testing.T, d *datadriven.TestData) (string, error) {
	var n string
	d.ScanArgs(t, "name", &n)
	// Records stored one by one are stored at different times, as they
	// are by a client: at one instant they would be one batch, whose
	// records share their evidence in recall (pkg/engine/sequence.go).
	tr.clock.Advance(time.Millisecond)
	req := &memory.EncodeStoreRequest{Content: memory.TextContent(strings.TrimSpace(d.Input))}
	if arg, ok := d.Arg("store"); ok {
		st, err := memory.ParseStoreType(arg.SingleVal(t))
		if err != nil {
			return "", err
		}
		req.Store = &st
	}
	req.Emotion = emotionArg(t, d)
	req.Content.Blocks[0].Embedding = embedArg(t, d)
	meta := map[string]string{}
	for arg, key := range map[string]string{"event-time": "event_time", "speaker": "speaker"} {
		if a, ok := d.Arg(arg); ok {
			meta[key] = a.SingleVal(t)
		}
	}
	if len(meta) > 0 {
		b, err := json.Marshal(meta)
		if err != nil {
			return "", err
		}
		req.Metadata = b
	}
	if arg, ok := d.Arg("link"); ok {
		arg.ExpectNumVals(t, 3)
		target, ok := tr.ids[arg.Vals[0]]
		if !ok {
			d.Fatalf(t, "link: no record named %s", arg.Vals[0])
		}
		var typ memory.AssociationType
		if err := typ.UnmarshalText([]byte(arg.Vals[1])); err != nil {
			return "", err
		}
		w, err := strconv.ParseFloat(arg.Vals[2], 64)
		if err != nil {
			d.Fatalf(t, "link weight: %v", err)
		}
		req.Associations = []memory.ManualAssociation{{TargetID: target, AssociationType: typ, Weight: w}}
	}
	resp, err := tr.e.EncodeStore(ctx, req)
	if err != nil {
		return "", err
	}
	tr.name(t, d, resp.RecordID, n)
	return fmt.Sprintf("%s: %s fidelity=%.3f\n", n, resp.Store, resp.InitialFidelity), nil
}

func (tr *transcript) raw(ctx context.Context, t *testing.T, d *datadriven.TestData) (string, error) {
	var n string
	d.ScanArgs(t, "name", &n)
	req := memory.DefaultEncodeStoreRawRequest()
	d.ScanArgs(t, "session", &req.SessionID)
	req.Content = memory.TextContent(strings.TrimSpace(d.Input))
	if d.HasArg("topic") {
		var topic string
		d.ScanArgs(t, "topic", &topic)
		req.TopicID = &topic
	}
	for key, dst := range map[string]interface{ UnmarshalText([]byte) error }{
		"speaker": &req.Speaker, "visibility": &req.Visibility, "secrecy": &req.SecrecyLevel,
	} {
		if arg, ok := d.Arg(key); ok {
			if err := dst.UnmarshalText([]byte(arg.SingleVal(t))); err != nil {
				return "", err
			}
		}
	}
	resp, err := tr.e.EncodeStoreRaw(ctx, &req)
	if err != nil {
		return "", err
	}
	tr.name(t, d, resp.RecordID, n)
	return "", nil
}

func (tr *transcript) recall(ctx context.Context, t *testing.T, d *datadriven.TestData) (string, error) {
	req := memory.DefaultRecallQueryRequest()
	if q := strings.TrimSpace(d.Input); q != "" {
		req.Cue.Text = &q
	}
	if arg, ok := d.Arg("mode"); ok {
		m, err := memory.ParseRecallMode(arg.SingleVal(t))
		if err != nil {
			return "", err
		}
		req.RecallMode = &m
	}
	d.MaybeScanArgs(t, "limit", &req.Limit)
	d.MaybeScanArgs(t, "depth", &req.ActivationDepth)
	req.Stores = storesArg(t, d, "stores")
	req.IncludeDecayed = d.HasArg("decayed")
	req.Reconsolidate = !d.HasArg("no-reconsolidate")
	if d.HasArg("min-fidelity") {
		var f float64
		d.ScanArgs(t, "min-fidelity", &f)
		req.MinFidelity = &f
	}
	req.Cue.Embedding = embedArg(t, d)
	req.Cue.Emotion = emotionArg(t, d)
	resp, err := tr.e.RecallQuery(ctx, &req)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, m := range resp.Memories {
		fmt.Fprintf(&b, "%d. %s %.3f %s fidelity=%.3f", i+1, tr.nameOf(m.Record.ID), m.RelevanceScore, m.Record.Store, m.Record.Fidelity.Score)
		if len(m.ActivationPath) > 0 {
			path := make([]string, len(m.ActivationPath))
			for k, id := range m.ActivationPath {
				path[k] = tr.nameOf(id)
			}
			fmt.Fprintf(&b, " via %s", strings.Join(path, ">"))
		}
		b.WriteByte('\n')
		if d.HasArg("render") {
			b.WriteString("   " + rendering(m) + "\n")
		}
	}
	fmt.Fprintf(&b, "candidates=%d\n", resp.TotalCandidates)
	return b.String(), nil
}

// rendering shows how recall rendered a record: its text when whole, or
// how many words it masked (which ones depends on the record's id, and
// ids differ between runs).
func rendering(m memory.RecalledMemory) string {
	text, _ := m.RenderedContent.Text()
	words := strings.Fields(text)
	var kept []string
	for _, w := range words {
		if w != "..." {
			kept = append(kept, w)
		}
	}
	if len(kept) == len(words) {
		return text
	}
	return fmt.Sprintf("masked %d of %d words", len(words)-len(kept), len(words))
}

func (tr *transcript) dream(ctx context.Context, t *testing.T, d *datadriven.TestData) (string, error) {
	req := memory.DefaultDreamTickRequest()
	if d.HasArg("session") {
		var s string
		d.ScanArgs(t, "session", &s)
		req.SessionID = &s
	}
	d.MaybeScanArgs(t, "max-groups", &req.MaxGroups)
	req.PromoteSemantic = !d.HasArg("no-promote")
	req.DryRun = d.HasArg("dry-run")
	resp, err := tr.e.DreamTick(ctx, &req)
	if err != nil {
		return "", err
	}
	out := fmt.Sprintf("groups=%d raw=%d summaries=%d semantic=%d\n",
		resp.GroupsProcessed, resp.RawRecordsProcessed, resp.EpisodicSummariesCreated, resp.SemanticNodesCreated)
	made, err := tr.newRecords(ctx)
	if err != nil {
		return "", err
	}
	return out + made, nil
}

func (tr *transcript) consolidate(ctx context.Context, t *testing.T, d *datadriven.TestData) (string, error) {
	req := memory.DefaultConsolidateRequest()
	if arg, ok := d.Arg("strategy"); ok {
		if err := req.Strategy.UnmarshalText([]byte(arg.SingleVal(t))); err != nil {
			return "", err
		}
	}
	d.MaybeScanArgs(t, "min-age-hours", &req.MinAgeHours)
	d.MaybeScanArgs(t, "min-access", &req.MinAccessCount)
	req.DryRun = d.HasArg("dry-run")
	resp, err := tr.e.Consolidate(ctx, &req)
	if err != nil {
		return "", err
	}
	out := fmt.Sprintf("processed=%d migrated=%d compressed=%d pruned=%d semantic=%d\n",
		resp.RecordsProcessed, resp.RecordsMigrated, resp.RecordsCompressed, resp.RecordsPruned, resp.SemanticNodesCreated)
	made, err := tr.newRecords(ctx)
	if err != nil {
		return "", err
	}
	return out + made, nil
}

func (tr *transcript) forecast(ctx context.Context, t *testing.T, d *datadriven.TestData) (string, error) {
	recs, err := tr.curated(ctx)
	if err != nil {
		return "", err
	}
	req := &memory.DecayForecastRequest{ForecastAt: tr.clock.Now().Add(byArg(t, d))}
	for _, rec := range recs {
		req.RecordIDs = append(req.RecordIDs, rec.ID)
	}
	resp, err := tr.e.DecayForecast(ctx, req)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, f := range resp.Forecasts {
		fmt.Fprintf(&b, "%s now=%.3f then=%.3f", tr.nameOf(f.RecordID), f.CurrentFidelity, f.ForecastedFidelity)
		if f.EstimatedThresholdDate != nil {
			fmt.Fprintf(&b, " dormant-at=%s", f.EstimatedThresholdDate.Format(time.DateOnly))
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// records lists every curated record as the engine presents it (current
// fidelity), by name.
func (tr *transcript) records(ctx context.Context, t *testing.T, withText bool) (string, error) {
	recs, err := tr.curated(ctx)
	if err != nil {
		return "", err
	}
	lines := make([]string, 0, len(recs))
	for _, rec := range recs {
		cur, err := tr.e.Record(ctx, &memory.IntrospectRecordRequest{RecordID: rec.ID})
		if err != nil {
			return "", err
		}
		f := cur.Fidelity
		line := fmt.Sprintf("%s %s fidelity=%.3f stability=%.1f reinforced=%d accesses=%d version=%d",
			tr.nameOf(cur.ID), cur.Store, f.Score, f.Stability, f.ReinforcementCount, cur.AccessCount, cur.Version)
		if len(cur.Associations) > 0 {
			links := make([]string, 0, len(cur.Associations))
			for _, a := range cur.Associations {
				links = append(links, fmt.Sprintf("%s:%s:%.2f", tr.nameOf(a.TargetID), a.AssociationType, a.Weight))
			}
			slices.Sort(links)
			line += " links=" + strings.Join(links, ",")
		}
		if withText {
			text, _ := cur.Content.Text()
			line += "\n   " + text
		}
		lines = append(lines, line)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n", nil
}

// journal lists every raw entry, by name, with the records derived from it.
func (tr *transcript) journal(ctx context.Context) (string, error) {
	if _, err := tr.curated(ctx); err != nil { // names the derived records
		return "", err
	}
	_, raws, err := exportAll(ctx, tr.e)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, raw := range raws {
		line := fmt.Sprintf("%s %s %s", tr.nameOf(raw.ID), raw.Visibility, raw.SecrecyLevel)
		if store.IsDreamProcessed(raw) {
			line += " processed"
		} else {
			line += " pending"
		}
		var derived []string
		for _, id := range raw.DerivedMemoryIDs {
			derived = append(derived, tr.nameOf(id))
		}
		if len(derived) > 0 {
			slices.Sort(derived)
			line += " derived=" + strings.Join(derived, ",")
		}
		lines = append(lines, line)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n", nil
}

// curated returns every curated record, in creation order, naming those
// the engine made since the last look.
func (tr *transcript) curated(ctx context.Context) ([]*memory.MemoryRecord, error) {
	recs, _, err := exportAll(ctx, tr.e)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(recs, func(a, b *memory.MemoryRecord) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	for _, rec := range recs {
		if _, ok := tr.names[rec.ID]; !ok {
			tr.nameMade(rec)
		}
	}
	return recs, nil
}

// nameMade names a record the engine made: "summary-1" for the first
// dream summary, "semantic-1" for the first promoted one, "copy-of-alpha"
// for the consolidated copy of alpha.
func (tr *transcript) nameMade(rec *memory.MemoryRecord) {
	var md struct {
		Dream struct {
			Kind string `json:"kind"`
		} `json:"_dream"`
		From *struct {
			RecordID memory.ID `json:"record_id"`
		} `json:"_consolidated_from"`
	}
	_ = json.Unmarshal(rec.Metadata, &md)
	var n string
	switch {
	case md.From != nil && tr.names[md.From.RecordID] != "":
		n = "copy-of-" + tr.names[md.From.RecordID]
	case md.Dream.Kind == "episodic_summary":
		n = "summary"
	case md.Dream.Kind == "semantic_summary":
		n = "semantic"
	default:
		n = "record"
	}
	if _, taken := tr.ids[n]; taken || !strings.HasPrefix(n, "copy-of-") {
		tr.made[n]++
		n = fmt.Sprintf("%s-%d", n, tr.made[n])
	}
	tr.names[rec.ID], tr.ids[n] = n, rec.ID
}

// newRecords lists the records the engine made since the last look, with
// their text.
func (tr *transcript) newRecords(ctx context.Context) (string, error) {
	known := len(tr.names)
	before := make(map[memory.ID]bool, known)
	for id := range tr.names {
		before[id] = true
	}
	recs, err := tr.curated(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, rec := range recs {
		if before[rec.ID] {
			continue
		}
		text, _ := rec.Content.Text()
		fmt.Fprintf(&b, "new %s %s: %s\n", tr.nameOf(rec.ID), rec.Store, text)
	}
	return b.String(), nil
}

func (tr *transcript) nameOf(id memory.ID) string {
	if n, ok := tr.names[id]; ok {
		return n
	}
	return "unnamed " + id.String()
}

// byArg reads by=DURATION.
func byArg(t *testing.T, d *datadriven.TestData) time.Duration {
	var by string
	d.ScanArgs(t, "by", &by)
	dur, err := time.ParseDuration(by)
	if err != nil {
		d.Fatalf(t, "by: %v", err)
	}
	return dur
}

func storesArg(t *testing.T, d *datadriven.TestData, key string) []memory.StoreType {
	arg, ok := d.Arg(key)
	if !ok {
		return nil
	}
	var out []memory.StoreType
	for _, v := range arg.Vals {
		st, err := memory.ParseStoreType(v)
		if err != nil {
			d.Fatalf(t, "%s: %v", key, err)
		}
		out = append(out, st)
	}
	return out
}

func embedArg(t *testing.T, d *datadriven.TestData) []float32 {
	arg, ok := d.Arg("embed")
	if !ok {
		return nil
	}
	v := make([]float32, len(arg.Vals))
	for i, s := range arg.Vals {
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			d.Fatalf(t, "embed: %v", err)
		}
		v[i] = float32(f)
	}
	return v
}

// emotionArg reads emotion=(label, level): the label's axis and intensity
// at level.
func emotionArg(t *testing.T, d *datadriven.TestData) *memory.EmotionVector {
	arg, ok := d.Arg("emotion")
	if !ok {
		return nil
	}
	arg.ExpectNumVals(t, 2)
	v, err := memory.ParseEmotionLabel(arg.Vals[0])
	if err != nil {
		d.Fatalf(t, "emotion: %v", err)
	}
	level, err := strconv.ParseFloat(arg.Vals[1], 64)
	if err != nil {
		d.Fatalf(t, "emotion level: %v", err)
	}
	v.Joy, v.Trust, v.Fear, v.Surprise = v.Joy*level, v.Trust*level, v.Fear*level, v.Surprise*level
	v.Sadness, v.Disgust, v.Anger, v.Anticipation = v.Sadness*level, v.Disgust*level, v.Anger*level, v.Anticipation*level
	v.Intensity, v.Valence = level, v.Valence*level
	return &v
}
