package servercmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
)

// The data commands print text for people by default; --json prints the
// answer exactly as the HTTP API sends it (the pkg/memory wire types),
// for scripts. The renderers below are the text side.

// jsonFlag adds --json to a data command.
func jsonFlag(fs *ff.FlagSet) *bool {
	return fs.BoolLong("json", "print the answer as JSON, exactly as the HTTP API returns it, instead of text")
}

// printAnswer ends a data command: a failed call (err) prints nothing and
// returns err; otherwise resp goes to w as the API's JSON with --json, else
// as text through text.
func printAnswer[T any](w io.Writer, asJSON bool, resp T, err error, text func(io.Writer, T) error) error {
	if err != nil {
		return err
	}
	if asJSON {
		return cli.PrintJSON(w, resp)
	}
	return text(w, resp)
}

// timeLayout is how times are shown to people: local time with its zone.
const timeLayout = "2006-01-02 15:04:05 MST"

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Local().Format(timeLayout)
}

func formatTimePtr(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return formatTime(*t)
}

// num prints a float with at most digits decimals and no trailing zeros.
func num(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// indent prefixes every line of text but the first with pad.
func indent(text, pad string) string {
	return strings.ReplaceAll(text, "\n", "\n"+pad)
}

// contentText renders content for reading: the text blocks as text and
// every other block as a one-line placeholder naming its kind and size.
func contentText(c memory.MemoryContent) string {
	var parts []string
	for _, b := range c.Blocks {
		if b.Modality == memory.ModalityText && utf8.Valid(b.Data) {
			parts = append(parts, string(b.Data))
			continue
		}
		parts = append(parts, fmt.Sprintf("[%s block, %s, %d bytes]", b.Modality, orDash(b.Format), len(b.Data)))
	}
	if len(parts) == 0 {
		return "[no content]"
	}
	return strings.Join(parts, "\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printRecall writes the recall listing: rank, store, relevance, fidelity
// and creation time, the id, then the (rendered) text.
func printRecall(w io.Writer, resp *memory.RecallQueryResponse) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d memories (total candidates: %d)\n\n", len(resp.Memories), resp.TotalCandidates)
	for i, m := range resp.Memories {
		fmt.Fprintf(&b, "%d. [%s] score=%.4f fidelity=%.4f created %s\n", i+1, m.Record.Store, m.RelevanceScore, m.Record.Fidelity.Score, formatTime(m.Record.CreatedAt))
		fmt.Fprintf(&b, "   ID: %s\n", m.Record.ID)
		fmt.Fprintf(&b, "   %s\n\n", indent(contentText(m.RenderedContent), "   "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printRecallRaw writes raw journal entries, newest first as the API
// returns them.
func printRecallRaw(w io.Writer, resp *memory.RecallRawQueryResponse) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d raw entries (total candidates: %d)\n\n", len(resp.Records), resp.TotalCandidates)
	for i, e := range resp.Records {
		fmt.Fprintf(&b, "%d. %s  session %s", i+1, formatTime(e.CreatedAt), e.SessionID)
		if e.TopicID != nil {
			fmt.Fprintf(&b, "  topic %s", *e.TopicID)
		}
		if e.TurnID != nil {
			fmt.Fprintf(&b, "  turn %s", *e.TurnID)
		}
		fmt.Fprintf(&b, "\n   %s via %s, %s, %s", e.Speaker, e.Source, e.Visibility, e.SecrecyLevel)
		if e.Suppressed {
			b.WriteString(", suppressed")
		}
		if len(e.DerivedMemoryIDs) > 0 {
			fmt.Fprintf(&b, ", summarised into %d memories", len(e.DerivedMemoryIDs))
		}
		fmt.Fprintf(&b, "\n   ID: %s\n", e.ID)
		fmt.Fprintf(&b, "   %s\n\n", indent(contentText(e.Content), "   "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printStored confirms a store.
func printStored(w io.Writer, resp *memory.EncodeStoreResponse) error {
	_, err := fmt.Fprintf(w, "Stored: %s (store: %s, fidelity: %s)\n", resp.RecordID, resp.Store, strconv.FormatFloat(resp.InitialFidelity, 'f', -1, 64))
	return err
}

// printStoredRaw confirms a store-raw.
func printStoredRaw(w io.Writer, resp *memory.EncodeStoreRawResponse) error {
	verb := "Stored raw entry"
	if resp.Duplicate {
		verb = "Already stored (duplicate id), raw entry"
	}
	_, err := fmt.Fprintf(w, "%s: %s (session: %s, visibility: %s, secrecy: %s)\n", verb, resp.RecordID, resp.SessionID, resp.Visibility, resp.SecrecyLevel)
	return err
}

// printRecord writes one record as a block of labelled lines followed by
// its content.
func printRecord(w io.Writer, rec *memory.MemoryRecord) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	line := func(label, value string) { fmt.Fprintf(tw, "%s:\t%s\n", label, value) }
	f := rec.Fidelity
	line("ID", rec.ID.String())
	line("Store", rec.Store.String())
	line("Version", strconv.FormatUint(uint64(rec.Version), 10))
	line("Created", formatTime(rec.CreatedAt))
	line("Updated", formatTime(rec.UpdatedAt))
	line("Last accessed", formatTime(rec.LastAccessedAt))
	line("Access count", strconv.FormatUint(uint64(rec.AccessCount), 10))
	line("Fidelity", fmt.Sprintf("%s (noise %s, stability %s days, decay rate %s, reinforced %d times)",
		num(f.Score, 4), num(f.NoiseLevel, 4), num(f.Stability, 2), num(f.DecayRate, 2), f.ReinforcementCount))
	line("Emotion", emotionText(rec.Emotion))
	if rec.Content.Summary != nil {
		line("Summary", *rec.Content.Summary)
	}
	line("Associations", strconv.Itoa(len(rec.Associations)))
	for _, a := range rec.Associations {
		fmt.Fprintf(tw, "\t  %s %s weight %s\n", a.TargetID, a.AssociationType, num(a.Weight, 3))
	}
	if len(rec.Metadata) > 0 && string(rec.Metadata) != "null" && string(rec.Metadata) != "{}" {
		line("Metadata", compactJSON(rec.Metadata))
	}
	for _, l := range metaLines(rec.Meta) {
		line(l[0], l[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\n%s\n", contentText(rec.Content))
	_, err := io.WriteString(w, b.String())
	return err
}

// emotionText names the non-zero axes of an emotion, or "none".
func emotionText(e memory.EmotionVector) string {
	names := []string{"joy", "trust", "fear", "surprise", "sadness", "disgust", "anger", "anticipation"}
	var parts []string
	for i, v := range e.Axes() {
		if v != 0 {
			parts = append(parts, names[i]+" "+num(v, 2))
		}
	}
	if len(parts) == 0 && e.Intensity == 0 && e.Valence == 0 {
		return "none"
	}
	return fmt.Sprintf("%s (intensity %s, valence %s)", orDash(strings.Join(parts, ", ")), num(e.Intensity, 2), num(e.Valence, 2))
}

// metaLines lists the meta-memory fields that are set, as label and value.
func metaLines(m memory.MetaMemory) [][2]string {
	var out [][2]string
	add := func(label string, v *string) {
		if v != nil && *v != "" {
			out = append(out, [2]string{label, *v})
		}
	}
	add("Intent", m.Intent)
	add("Rationale", m.Rationale)
	add("Trigger", m.Trigger)
	add("Decision", m.Decision)
	if m.Confidence != nil {
		out = append(out, [2]string{"Confidence", num(*m.Confidence, 2)})
	}
	list := func(label string, v []string) {
		if len(v) > 0 {
			out = append(out, [2]string{label, strings.Join(v, ", ")})
		}
	}
	list("Goals", m.Goals)
	list("Assumptions", m.Assumptions)
	list("Tags", m.Tags)
	if n := len(m.Evidence); n > 0 {
		out = append(out, [2]string{"Evidence", fmt.Sprintf("%d references", n)})
	}
	if n := len(m.Alternatives); n > 0 {
		out = append(out, [2]string{"Alternatives", fmt.Sprintf("%d considered", n)})
	}
	if n := len(m.SourceRecordIDs); n > 0 {
		ids := make([]string, n)
		for i, id := range m.SourceRecordIDs {
			ids[i] = id.String()
		}
		out = append(out, [2]string{"Derived from", strings.Join(ids, ", ")})
	}
	return out
}

// compactJSON prints a JSON value on one line.
func compactJSON(v memory.JSON) string {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return string(v)
	}
	b, err := json.Marshal(x)
	if err != nil {
		return string(v)
	}
	return string(b)
}

// printStats writes the statistics: a table per store, then the rest as
// labelled lines.
func printStats(w io.Writer, s *memory.Stats) error {
	var b strings.Builder
	const row = "%-12s %9s %13s\n"
	fmt.Fprintf(&b, row, "STORE", "RECORDS", "AVG FIDELITY")
	for _, st := range memory.AllStores() {
		fid := "-"
		if v, ok := s.AvgFidelityByStore[st]; ok && s.RecordsByStore[st] > 0 {
			fid = num(v, 4)
		}
		fmt.Fprintf(&b, row, st, cli.FormatCount(int64(s.RecordsByStore[st])), fid)
	}
	fmt.Fprintf(&b, row, "total", cli.FormatCount(int64(s.TotalRecords)), num(s.AvgFidelity, 4))
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	line := func(label, format string, args ...any) {
		fmt.Fprintf(tw, "%s:\t%s\n", label, fmt.Sprintf(format, args...))
	}
	line("Associations", "%d", s.TotalAssociations)
	line("Oldest record", "%s", formatTimePtr(s.OldestRecord))
	line("Newest record", "%s", formatTimePtr(s.NewestRecord))
	line("Recalls", "%d", s.TotalRecallCount)
	line("Raw journal", "%d entries, %d waiting for dream processing", s.RawJournalRecords, s.RawJournalPendingDream)
	line("Dream", "%d episodic summaries, %d semantic memories, last tick %s", s.DreamEpisodicSummaries, s.DreamSemanticNodes, formatTimePtr(s.LastDreamTickAt))
	line("Vector index", "%d records (%s)", s.VectorIndexRecords, orDash(s.VectorSearchBackend))
	line("Background", "decay %s, dream %s", onOff(s.BackgroundDecayEnabled), onOff(s.BackgroundDreamEnabled))
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// printDreamTick reports a dream tick.
func printDreamTick(w io.Writer, resp *memory.DreamTickResponse, dryRun bool) error {
	title := "Dream tick completed:"
	if dryRun {
		title = "Dream tick (dry run: nothing was written):"
	}
	_, err := fmt.Fprintf(w, "%s\n  groups processed: %d\n  raw entries processed: %d\n  episodic summaries created: %d\n  semantic memories created: %d\n",
		title, resp.GroupsProcessed, resp.RawRecordsProcessed, resp.EpisodicSummariesCreated, resp.SemanticNodesCreated)
	return err
}

// printImport reports an import: the records imported and, when some of
// the archive's records were not, how many were skipped and why.
func printImport(w io.Writer, resp *memory.ImportResponse, path string, cr memory.ConflictResolution) error {
	if resp.RecordsSkipped == 0 {
		_, err := fmt.Fprintf(w, "Imported %d records from %s\n", resp.RecordsImported, path)
		return err
	}
	_, err := fmt.Fprintf(w, "Imported %d records from %s; skipped %d already stored (--conflict-resolution %s",
		resp.RecordsImported, path, resp.RecordsSkipped, cr)
	if err != nil {
		return err
	}
	if resp.RawConflicts > 0 {
		_, err = fmt.Fprintf(w, "; %d of them raw entries that differ from the stored ones, which are never replaced", resp.RawConflicts)
		if err != nil {
			return err
		}
	}
	_, err = fmt.Fprintln(w, ")")
	return err
}
