package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"memsvc.dev/memsvc/pkg/memory"
)

// The tool catalogue: fifteen tools, each a JSON schema and a handler that
// turns arguments into one memory.Service call. Argument rules the schema
// states (types, enums, ranges, defaults) are enforced again in the
// handlers, because clients do not validate.

// Accepted spellings of the enumerations, as the schemas list them.
var (
	storeNames       = []string{"episodic", "semantic", "procedural", "emotional", "working"}
	emotionNames     = []string{"joy", "trust", "fear", "surprise", "sadness", "disgust", "anger", "anticipation"}
	sourceNames      = []string{"conversation", "tool_io", "scratchpad", "summary", "imported"}
	speakerNames     = []string{"user", "assistant", "system", "tool"}
	visibilityNames  = []string{"normal", "private_scratch", "sealed"}
	secrecyNames     = []string{"public", "sensitive", "secret"}
	granularityNames = []string{"minute", "hour", "day", "week", "month"}
	strategyNames    = []string{"incremental", "full", "selective"}
	formatNames      = []string{"cma", "jsonl"}
)

// Limits the schemas advertise.
const (
	maxRecallLimit = memory.MaxRecallLimit
	maxGroups      = 1000
	defaultLimit   = 10
	// defaultTimelineLimit keeps a timeline from filling a model's context
	// by default; up to memory.MaxTimelineLimit may be asked for.
	defaultTimelineLimit = 100
	// defaultAssociateDepth is the HTTP default (2). Upstream's MCP tool
	// used 1, a documented inconsistency we do not copy.
	defaultAssociateDepth = 2
	defaultActivation     = 2 // recall's spreading-activation hops
	timelineDefaultSpan   = 7 * 24 * time.Hour
)

// handlerFunc serves one tool call. An error becomes an isError result
// through describeError.
type handlerFunc func(ctx context.Context, a args) (*mcp.CallToolResult, error)

// tool is one entry of the catalogue.
type tool struct {
	def     mcp.Tool
	handler handlerFunc
}

// Shared argument descriptions.
const (
	descMetaJSON = "Optional meta-memory: why this exists, as a JSON object in a string. " +
		"Fields: intent, rationale, decision, trigger (strings); goals, assumptions, tags (string arrays); " +
		"alternatives ([{\"option\":...,\"reason\":...,\"chosen\":true}]); evidence ([{\"label\":...,\"excerpt\":...,\"uri\":...}]); confidence (0 to 1). " +
		"Example: {\"intent\":\"choose a storage engine\",\"rationale\":\"pebble is embedded and crash-safe\",\"tags\":[\"adr\"]}. " +
		"Supply it whenever you know the intent, rationale, decision context or evidence."
	descStore = "Store for the memory: episodic (events, experiences), semantic (facts, knowledge), " +
		"procedural (how-to steps), emotional (emotionally charged moments), working (short-lived scratch kept in memory only, 7 slots). " +
		"Omit to let the server choose (episodic)."
	descEmotion       = "Optional emotion label; it tags the memory and slows its fading: joy, trust, fear, surprise, sadness, disgust, anger or anticipation."
	descRawSession    = "Identifier of the conversation or session the entry belongs to (for example the agent's session id); recall_raw and dream_tick group by it."
	descSource        = "Where the text came from: conversation, tool_io (tool input or output), scratchpad, summary or imported."
	descSpeaker       = "Who produced the text: user, assistant, system or tool."
	descVisibility    = "normal; private_scratch (hidden from recall_raw and dream_tick unless they ask for it); sealed (hidden unless asked for)."
	descSecrecy       = "public, sensitive, or secret (secret entries are hidden from recall_raw and dream_tick unless secrecy_levels names them)."
	descSecrecyLevels = "Comma-separated secrecy levels to include, from public, sensitive, secret. Default: public,sensitive."
	descRecordID      = "Record id (UUID) as returned by store, recall or timeline, e.g. 0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f."
	descTime          = "RFC 3339 time, e.g. 2026-05-01T09:30:00Z."
)

func contentArg(what string) mcp.ToolOption {
	return mcp.WithString("content", mcp.Required(), mcp.MinLength(1),
		mcp.Description(what+" UTF-8 text, at most 1 MiB; must not be blank."))
}

func metaArg() mcp.ToolOption { return mcp.WithString("meta_json", mcp.Description(descMetaJSON)) }

func annotate(readOnly, destructive, idempotent bool) mcp.ToolOption {
	return func(t *mcp.Tool) {
		t.Annotations = mcp.ToolAnnotation{
			ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
			DestructiveHint: mcp.ToBoolPtr(destructive),
			IdempotentHint:  mcp.ToBoolPtr(idempotent),
			OpenWorldHint:   mcp.ToBoolPtr(false),
		}
	}
}

// newTool builds a tool definition that refuses undeclared arguments and
// lists the required ones first.
func newTool(name, desc string, opts ...mcp.ToolOption) mcp.Tool {
	opts = append([]mcp.ToolOption{mcp.WithDescription(desc), mcp.WithSchemaAdditionalProperties(false)}, opts...)
	t := mcp.NewTool(name, opts...)
	order := slices.Clone(t.InputSchema.Required)
	var rest []string
	for k := range t.InputSchema.Properties {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	t.InputSchema.PropertyOrder = append(order, rest...)
	return t
}

// tools returns the catalogue served by p.
func (p *Proxy) tools() []tool {
	return []tool{
		{newTool("store",
			"Save one curated memory (a fact, decision, preference, lesson or event) and return JSON with its record_id, store, initial_fidelity and associations_created. "+
				"Memories fade unless recalled, and related memories are linked automatically. "+
				"Whenever you know why the memory matters (intent, rationale, decision, alternatives, evidence, tags), pass it in meta_json. No external LLM is called.",
			contentArg("The memory, written so it stands alone when recalled later."),
			mcp.WithString("store", mcp.Enum(storeNames...), mcp.Description(descStore)),
			mcp.WithString("emotion", mcp.Enum(emotionNames...), mcp.Description(descEmotion)),
			metaArg(),
			annotate(false, false, false),
		), p.store},

		{newTool("store_raw",
			"Append verbatim text (a conversation turn, tool output, scratch notes) to the raw journal for forensic recall with recall_raw. "+
				"Raw entries are not curated memories; dream_tick later summarises them into episodic memories. "+
				"Returns JSON with record_id, session_id, visibility and secrecy_level.",
			contentArg("The verbatim text."),
			mcp.WithString("session_id", mcp.Required(), mcp.MinLength(1), mcp.Description(descRawSession)),
			mcp.WithString("turn_id", mcp.Description("Optional identifier of the turn within the session.")),
			mcp.WithString("topic_id", mcp.Description("Optional topic identifier; dream_tick groups entries by session and topic.")),
			mcp.WithString("source", mcp.Enum(sourceNames...), mcp.DefaultString("conversation"), mcp.Description(descSource)),
			mcp.WithString("speaker", mcp.Enum(speakerNames...), mcp.DefaultString("user"), mcp.Description(descSpeaker)),
			mcp.WithString("visibility", mcp.Enum(visibilityNames...), mcp.DefaultString("normal"), mcp.Description(descVisibility)),
			mcp.WithString("secrecy_level", mcp.Enum(secrecyNames...), mcp.DefaultString("public"), mcp.Description(descSecrecy)),
			metaArg(),
			annotate(false, false, false),
		), p.storeRaw},

		{newTool("update",
			"Change an existing memory in place: replace its content, emotion and/or meta-memory while it keeps its record_id, associations and fidelity history. "+
				"Give record_id and at least one of content, emotion, meta_json. Returns the text \"Updated record <record_id>\".",
			mcp.WithString("record_id", mcp.Required(), mcp.Description(descRecordID)),
			mcp.WithString("content", mcp.MinLength(1), mcp.Description("New text replacing the whole content; must not be blank.")),
			mcp.WithString("emotion", mcp.Enum(emotionNames...), mcp.Description("New emotion label: joy, trust, fear, surprise, sadness, disgust, anger or anticipation.")),
			metaArg(),
			annotate(false, true, true),
		), p.update},

		{newTool("batch_store",
			fmt.Sprintf("Save up to %d curated memories in one call, all or none, and link consecutive ones (sequential associations). ", memory.MaxBatchRecords)+
				"Returns JSON with one result per record (record_id, store, initial_fidelity, associations_created), in order, and associations_inferred.",
			mcp.WithString("records_json", mcp.Required(), mcp.Description(
				"JSON array (as a string) of objects {\"content\": required text, \"store\": optional store name, \"emotion\": optional label, \"meta_json\": optional meta-memory JSON}, "+
					"with the same meanings as the store tool's arguments. "+
					"Example: [{\"content\":\"Deploys need two approvals\",\"store\":\"procedural\"},{\"content\":\"The CI cache lives in bucket ci-cache-eu\",\"store\":\"semantic\"}]")),
			annotate(false, false, false),
		), p.batchStore},

		{newTool("batch_store_raw",
			fmt.Sprintf("Append up to %d raw journal entries in one call, all or none. Returns JSON with one result per entry, in order.", memory.MaxBatchRecords),
			mcp.WithString("records_json", mcp.Required(), mcp.Description(
				"JSON array (as a string) of objects {\"content\", \"session_id\" (both required), \"turn_id\", \"topic_id\", \"source\", \"speaker\", \"visibility\", \"secrecy_level\", \"meta_json\"}, "+
					"with the same meanings and defaults as the store_raw tool's arguments. "+
					"Example: [{\"content\":\"user: how do I rotate keys?\",\"session_id\":\"s1\"},{\"content\":\"Run memsvc rotate.\",\"session_id\":\"s1\",\"speaker\":\"assistant\"}]")),
			annotate(false, false, false),
		), p.batchStoreRaw},

		{newTool("recall",
			"Find curated memories by meaning and words (full-text ranking plus spreading activation along associations); without query, list the most recent memories. "+
				"Returns JSON: memories[] with record_id, store, text, relevance_score, fidelity (1 = fresh, fades toward 0), created_at and emotion; query_metadata; total_candidates. "+
				"Content is returned exactly. Recalling reinforces the memories found so they fade more slowly; set reconsolidate=false to look without reinforcing.",
			mcp.WithString("query", mcp.Description("What to look for, in natural language or keywords. Omit to list recent memories.")),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(maxRecallLimit), mcp.DefaultNumber(defaultLimit), mcp.Description("Maximum number of memories to return.")),
			mcp.WithString("stores", mcp.Description("Comma-separated stores to search, e.g. \"semantic,procedural\". Default: all of episodic, semantic, procedural, emotional, working.")),
			mcp.WithBoolean("reconsolidate", mcp.DefaultBool(true), mcp.Description("Reinforce the memories found (they fade more slowly). false looks without changing anything.")),
			mcp.WithInteger("activation_depth", mcp.Min(0), mcp.Max(memory.MaxAssociateDepth), mcp.DefaultNumber(defaultActivation), mcp.Description("How many association hops spreading activation follows to bring in related memories; 0 turns it off.")),
			annotate(false, false, false),
		), p.recall},

		{newTool("recall_raw",
			"Search the raw journal verbatim: what was actually said or run. Filter by session_id, words (query) and/or a time range (start and end). "+
				"Returns JSON: records[] with record_id, session_id, source, speaker, visibility, secrecy_level, text and created_at; total_candidates (matches before the limit). "+
				"Private scratch, sealed and secret entries stay hidden unless asked for.",
			mcp.WithString("session_id", mcp.Description("Only entries of this session.")),
			mcp.WithString("query", mcp.Description("Words the entry must contain (case-insensitive).")),
			mcp.WithString("start", mcp.Description(descTime+" Start of the time range; give start and end together.")),
			mcp.WithString("end", mcp.Description(descTime+" End of the time range; give start and end together.")),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(maxRecallLimit), mcp.DefaultNumber(defaultLimit), mcp.Description("Maximum number of entries to return.")),
			mcp.WithBoolean("include_private_scratch", mcp.DefaultBool(false), mcp.Description("Also return entries with visibility private_scratch.")),
			mcp.WithBoolean("include_sealed", mcp.DefaultBool(false), mcp.Description("Also return entries with visibility sealed.")),
			mcp.WithString("secrecy_levels", mcp.Description(descSecrecyLevels)),
			annotate(true, false, true),
		), p.recallRaw},

		{newTool("timeline",
			"List curated memories created in a time range, grouped into time buckets. "+
				"Returns JSON: buckets[] (empty ones left out) with start, end, count and memories (full records). Default: the 7 days before end (or before now), in hourly buckets.",
			mcp.WithString("start", mcp.Description(descTime+" Default: 7 days before end.")),
			mcp.WithString("end", mcp.Description(descTime+" Default: now.")),
			mcp.WithString("granularity", mcp.Enum(granularityNames...), mcp.DefaultString("hour"), mcp.Description("Bucket size: minute, hour, day, week or month.")),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(memory.MaxTimelineLimit), mcp.DefaultNumber(defaultTimelineLimit), mcp.Description("Maximum number of memories to return, oldest first; truncated is true when the range holds more (ask again from a later start).")),
			annotate(true, false, true),
		), p.timeline},

		{newTool("associate",
			"Follow the associations of one memory (spreading activation) and return the related memories, strongest first. "+
				"Returns JSON: memories[] with record, relevance_score (activation) and activation_path; total_candidates.",
			mcp.WithString("record_id", mcp.Required(), mcp.Description(descRecordID)),
			mcp.WithInteger("depth", mcp.Min(1), mcp.Max(memory.MaxAssociateDepth), mcp.DefaultNumber(defaultAssociateDepth), mcp.Description("How many association hops to follow.")),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(memory.MaxAssociateLimit), mcp.DefaultNumber(defaultLimit), mcp.Description("Maximum number of memories to return.")),
			annotate(true, false, true),
		), p.associate},

		{newTool("inspect",
			"Show everything stored about one memory as JSON: content, fidelity and decay state, emotion, associations, metadata, version and meta-memory.",
			mcp.WithString("record_id", mcp.Required(), mcp.Description(descRecordID)),
			annotate(true, false, true),
		), p.inspect},

		{newTool("forget",
			"Permanently delete memories by record id. This cannot be undone: make sure the user wants it, then call with confirm=true. "+
				"Returns JSON {\"records_deleted\": N}; ids that do not exist are skipped.",
			mcp.WithString("record_ids", mcp.Required(), mcp.Description("Comma-separated record ids (UUIDs) to delete.")),
			mcp.WithBoolean("cascade", mcp.DefaultBool(false), mcp.Description("Also delete the memories the listed ones link to directly: links a client made and dream/consolidation provenance, never similarity links memsvc added.")),
			mcp.WithBoolean("confirm", mcp.Required(), mcp.Description("Must be true; with false nothing is deleted.")),
			annotate(false, true, true),
		), p.forget},

		{newTool("consolidate",
			"Consolidate memory: give mature episodic memories a semantic copy (with provenance links) and merge near-duplicates. Idempotent. "+
				"Returns JSON counts: records_processed, records_migrated, records_compressed, records_pruned, semantic_nodes_created.",
			mcp.WithString("strategy", mcp.Enum(strategyNames...), mcp.DefaultString("incremental"), mcp.Description(
				"incremental: episodic memories without an up-to-date copy; full: every episodic memory, merging duplicates across all and pruning dormant sources already copied; "+
					"selective: like incremental but only salient memories (recalled twice, reinforced or emotionally intense).")),
			mcp.WithBoolean("dry_run", mcp.DefaultBool(false), mcp.Description("Report what would happen without changing anything.")),
			annotate(false, false, true),
		), p.consolidate},

		{newTool("dream_tick",
			"Summarise raw journal entries not yet processed into episodic summary memories (grouped by session and topic, split at time gaps) that link back to the entries, "+
				"and promote topic groups to semantic memory. No LLM is used. "+
				"Returns JSON counts: groups_processed, raw_records_processed, episodic_summaries_created, semantic_nodes_created.",
			mcp.WithString("session_id", mcp.Description("Only process entries of this session.")),
			mcp.WithBoolean("dry_run", mcp.DefaultBool(false), mcp.Description("Report what would happen without changing anything.")),
			mcp.WithInteger("max_groups", mcp.Min(1), mcp.Max(maxGroups), mcp.DefaultNumber(defaultLimit), mcp.Description("Maximum number of groups to summarise in this call.")),
			mcp.WithBoolean("promote_semantic", mcp.DefaultBool(true), mcp.Description("Also create semantic memories for groups with a topic and at least two entries.")),
			mcp.WithBoolean("include_private_scratch", mcp.DefaultBool(false), mcp.Description("Also summarise entries with visibility private_scratch.")),
			mcp.WithBoolean("include_sealed", mcp.DefaultBool(false), mcp.Description("Also summarise entries with visibility sealed.")),
			mcp.WithString("secrecy_levels", mcp.Description(descSecrecyLevels)),
			annotate(false, false, false),
		), p.dreamTick},

		{newTool("stats",
			"Report memory statistics as JSON: records per store, associations, average fidelity, raw journal size and entries pending dream processing, "+
				"vector index size, last dream tick, and whether background decay and dreaming run.",
			annotate(true, false, true),
		), p.stats},

		{newTool("export",
			"Write a backup archive (CMA format) of every curated memory and the raw journal to a NEW file in this MCP server's export directory ("+p.exportDirName()+"), on the machine running it. "+
				"The file must not exist yet (it is never overwritten); paths outside the export directory, \"..\" and symbolic links are refused. "+
				"Returns the archive metadata as JSON (archive_id, size_bytes, record_count, checksum) followed by the absolute path written.",
			mcp.WithString("output_path", mcp.Required(), mcp.Description(
				"Name of the new archive file in the export directory, e.g. memsvc-2026-05-01.cma (or a path inside it).")),
			mcp.WithString("format", mcp.Enum(formatNames...), mcp.DefaultString("cma"), mcp.Description("cma; jsonl is an alias that writes the same CMA archive.")),
			mcp.WithBoolean("encrypt", mcp.DefaultBool(false), mcp.Description("Encrypt the archive with a key derived from encryption_key.")),
			mcp.WithString("encryption_key", mcp.Description("Passphrase, required when encrypt is true (and only then). It is needed to import the archive; keep it safe.")),
			mcp.WithBoolean("include_sealed", mcp.DefaultBool(false), mcp.Description("Also include raw entries with visibility sealed (a complete backup needs this).")),
			mcp.WithBoolean("include_secret", mcp.DefaultBool(false), mcp.Description("Also include raw entries with secrecy level secret (a complete backup needs this).")),
			annotate(false, false, false),
		), p.export},
	}
}

// exportDirName names the export directory in the tool description.
func (p *Proxy) exportDirName() string {
	if p.opts.ExportDir == "" {
		return "none configured: export is unavailable"
	}
	return p.opts.ExportDir
}

// instructions is the initialize result's guide to the tools.
const instructions = `memsvc is a living memory database: curated memories fade unless recalled, link to each other and consolidate; a raw journal keeps verbatim text. No external LLM is called.
When you store or update a memory and know the intent, rationale, decision context, alternatives, evidence or tags, pass them in meta_json.
Tools:
- store: save one curated memory.
- store_raw: append verbatim text to the raw journal.
- update: change the content, emotion or meta-memory of a memory, keeping its id.
- batch_store: save many memories at once, linked in sequence.
- batch_store_raw: append many raw journal entries at once.
- recall: find memories by meaning and words; without a query, list recent ones.
- recall_raw: search the raw journal verbatim by session, words or time.
- timeline: memories grouped by time (default: the last 7 days, hourly).
- associate: memories related to one memory, by spreading activation.
- inspect: everything about one memory.
- forget: delete memories permanently (needs confirm=true).
- dream_tick: summarise pending raw journal entries into memories.
- consolidate: turn mature episodic memories into semantic ones, merge duplicates.
- export: write a backup archive to a new file in the export directory (needs output_path, a file name).
- stats: counts, store sizes and decay state.`

// ---- handlers ----

func (p *Proxy) store(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	req, err := encodeRequest(a)
	if err != nil {
		return nil, err
	}
	return jsonAnswer(p.svc.EncodeStore(ctx, req))
}

// encodeRequest reads the arguments of a curated memory: content, store,
// emotion, meta_json.
func encodeRequest(a args) (*memory.EncodeStoreRequest, error) {
	content, err := a.text("content", "the memory text")
	if err != nil {
		return nil, err
	}
	req := &memory.EncodeStoreRequest{Content: memory.TextContent(content)}
	if req.Store, err = a.store("store"); err != nil {
		return nil, err
	}
	if req.Emotion, err = a.emotion("emotion"); err != nil {
		return nil, err
	}
	if req.Meta, err = a.meta("meta_json"); err != nil {
		return nil, err
	}
	return req, nil
}

func (p *Proxy) storeRaw(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	req, err := rawRequest(a)
	if err != nil {
		return nil, err
	}
	// A client-made id lets the HTTP client retry the store after a
	// refusal: the server drops an id it already holds.
	id := p.ids.New()
	req.RecordID = &id
	return jsonAnswer(p.svc.EncodeStoreRaw(ctx, req))
}

// rawRequest reads the arguments of a raw journal entry.
func rawRequest(a args) (*memory.EncodeStoreRawRequest, error) {
	content, err := a.text("content", "the verbatim text")
	if err != nil {
		return nil, err
	}
	session, err := a.text("session_id", "the session the entry belongs to")
	if err != nil {
		return nil, err
	}
	req := &memory.EncodeStoreRawRequest{
		SessionID: strings.TrimSpace(session),
		Content:   memory.TextContent(content),
	}
	if req.TurnID, err = a.optText("turn_id"); err != nil {
		return nil, err
	}
	if req.TopicID, err = a.optText("topic_id"); err != nil {
		return nil, err
	}
	var s string
	if s, err = a.choice("source", "conversation", sourceNames); err != nil {
		return nil, err
	}
	req.Source, _ = memory.ParseRawSource(s)
	if s, err = a.choice("speaker", "user", speakerNames); err != nil {
		return nil, err
	}
	req.Speaker, _ = memory.ParseRawSpeaker(s)
	if s, err = a.choice("visibility", "normal", visibilityNames); err != nil {
		return nil, err
	}
	req.Visibility, _ = memory.ParseVisibility(s)
	if s, err = a.choice("secrecy_level", "public", secrecyNames); err != nil {
		return nil, err
	}
	req.SecrecyLevel, _ = memory.ParseSecrecyLevel(s)
	if req.Meta, err = a.meta("meta_json"); err != nil {
		return nil, err
	}
	return req, nil
}

func (p *Proxy) update(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	id, err := a.id("record_id")
	if err != nil {
		return nil, err
	}
	req := &memory.EncodeUpdateRequest{RecordID: id}
	if _, ok := a.get("content"); ok {
		content, err := a.text("content", "the new text of the memory")
		if err != nil {
			return nil, err
		}
		c := memory.TextContent(content)
		req.Content = &c
	}
	if req.Emotion, err = a.emotion("emotion"); err != nil {
		return nil, err
	}
	if req.Meta, err = a.meta("meta_json"); err != nil {
		return nil, err
	}
	if req.Content == nil && req.Emotion == nil && req.Meta == nil {
		return nil, badArg("content", "nothing to update: give at least one of content, emotion, meta_json")
	}
	if err := p.svc.EncodeUpdate(ctx, req); err != nil {
		return nil, err
	}
	return mcp.NewToolResultText("Updated record " + id.String()), nil
}

// records reads records_json: a JSON array of objects, each checked
// against the fields a record may have.
func records(a args, fields []string) ([]args, error) {
	doc, ok, err := a.jsonText("records_json")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, badArg("records_json", "required: a JSON array of record objects")
	}
	var items []any
	if err := json.Unmarshal(doc, &items); err != nil {
		return nil, badArg("records_json", "not a JSON array of objects (%v); want e.g. [{\"content\":\"first\"},{\"content\":\"second\"}]", err)
	}
	if len(items) == 0 {
		return nil, badArg("records_json", "the array is empty; give at least one record")
	}
	if len(items) > memory.MaxBatchRecords {
		return nil, badArg("records_json", "%d records exceed the maximum of %d per call; split them into several calls", len(items), memory.MaxBatchRecords)
	}
	out := make([]args, len(items))
	for i, it := range items {
		m, isObj := it.(map[string]any)
		prefix := fmt.Sprintf("records_json[%d].", i)
		if !isObj {
			return nil, badArg(strings.TrimSuffix(prefix, "."), "must be an object such as {\"content\":\"...\"}, got %s", jsonType(it))
		}
		ra := args{m: m, prefix: prefix}
		if err := ra.unknown(fields); err != nil {
			return nil, err
		}
		out[i] = ra
	}
	// Blank contents first, before any other parsing: the commonest
	// mistake, reported for the first offending record.
	for _, ra := range out {
		if _, err := ra.text("content", "the text of this record"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p *Proxy) batchStore(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	recs, err := records(a, []string{"content", "store", "emotion", "meta_json"})
	if err != nil {
		return nil, err
	}
	req := &memory.EncodeBatchRequest{InferAssociations: true, Records: make([]memory.EncodeStoreRequest, len(recs))}
	for i, ra := range recs {
		r, err := encodeRequest(ra)
		if err != nil {
			return nil, err
		}
		req.Records[i] = *r
	}
	return jsonAnswer(p.svc.EncodeBatch(ctx, req))
}

func (p *Proxy) batchStoreRaw(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	recs, err := records(a, []string{"content", "session_id", "turn_id", "topic_id", "source", "speaker", "visibility", "secrecy_level", "meta_json"})
	if err != nil {
		return nil, err
	}
	req := &memory.EncodeBatchStoreRawRequest{Records: make([]memory.EncodeStoreRawRequest, len(recs))}
	for i, ra := range recs {
		r, err := rawRequest(ra)
		if err != nil {
			return nil, err
		}
		id := p.ids.New() // as in storeRaw
		r.RecordID = &id
		req.Records[i] = *r
	}
	return jsonAnswer(p.svc.EncodeBatchRaw(ctx, req))
}

func (p *Proxy) recall(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	req := memory.DefaultRecallQueryRequest()
	var err error
	if req.Cue.Text, err = a.optText("query"); err != nil {
		return nil, err
	}
	limit, err := a.integer("limit", defaultLimit, 1, maxRecallLimit)
	if err != nil {
		return nil, err
	}
	req.Limit = uint32(limit)
	if req.Stores, err = a.stores("stores"); err != nil {
		return nil, err
	}
	if req.Reconsolidate, err = a.boolean("reconsolidate", true); err != nil {
		return nil, err
	}
	depth, err := a.integer("activation_depth", defaultActivation, 0, memory.MaxAssociateDepth)
	if err != nil {
		return nil, err
	}
	req.ActivationDepth = uint32(depth)
	perfect := memory.ModePerfect
	req.RecallMode = &perfect
	resp, err := p.svc.RecallQuery(ctx, &req)
	if err != nil {
		return nil, err
	}
	return jsonResult(flattenRecall(resp))
}

func (p *Proxy) recallRaw(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	req := memory.DefaultRecallRawQueryRequest()
	var err error
	if req.SessionID, err = a.optText("session_id"); err != nil {
		return nil, err
	}
	if req.SessionID != nil {
		s := strings.TrimSpace(*req.SessionID)
		req.SessionID = &s
	}
	if req.Query, err = a.optText("query"); err != nil {
		return nil, err
	}
	start, err := a.timestamp("start")
	if err != nil {
		return nil, err
	}
	end, err := a.timestamp("end")
	if err != nil {
		return nil, err
	}
	switch {
	case start != nil && end != nil:
		if start.After(*end) {
			return nil, badArg("start", "%s is after end %s", start.Format(time.RFC3339), end.Format(time.RFC3339))
		}
		req.Temporal = &memory.TemporalRange{Start: *start, End: *end}
	case start != nil:
		return nil, badArg("end", "required when start is given (give both start and end, or neither)")
	case end != nil:
		return nil, badArg("start", "required when end is given (give both start and end, or neither)")
	}
	limit, err := a.integer("limit", defaultLimit, 1, maxRecallLimit)
	if err != nil {
		return nil, err
	}
	req.Limit = uint32(limit)
	if req.IncludePrivateScratch, err = a.boolean("include_private_scratch", false); err != nil {
		return nil, err
	}
	if req.IncludeSealed, err = a.boolean("include_sealed", false); err != nil {
		return nil, err
	}
	if req.SecrecyLevels, err = a.secrecyLevels("secrecy_levels"); err != nil {
		return nil, err
	}
	resp, err := p.svc.RecallRaw(ctx, &req)
	if err != nil {
		return nil, err
	}
	return jsonResult(flattenRaw(resp))
}

func (p *Proxy) timeline(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	start, err := a.timestamp("start")
	if err != nil {
		return nil, err
	}
	end, err := a.timestamp("end")
	if err != nil {
		return nil, err
	}
	if end == nil {
		now := p.now()
		end = &now
	}
	if start == nil {
		s := end.Add(-timelineDefaultSpan)
		start = &s
	}
	if start.After(*end) {
		return nil, badArg("start", "%s is after end %s", start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	g, err := a.choice("granularity", "hour", granularityNames)
	if err != nil {
		return nil, err
	}
	limit, err := a.integer("limit", defaultTimelineLimit, 1, memory.MaxTimelineLimit)
	if err != nil {
		return nil, err
	}
	n := uint32(limit)
	req := &memory.RecallTimelineRequest{Range: memory.TemporalRange{Start: *start, End: *end}, Limit: &n}
	req.Granularity, _ = memory.ParseTimeGranularity(g)
	resp, err := p.svc.RecallTimeline(ctx, req)
	if err != nil {
		return nil, err
	}
	return jsonResult(readableTimeline(resp))
}

func (p *Proxy) associate(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	id, err := a.id("record_id")
	if err != nil {
		return nil, err
	}
	depth, err := a.integer("depth", defaultAssociateDepth, 1, memory.MaxAssociateDepth)
	if err != nil {
		return nil, err
	}
	limit, err := a.integer("limit", defaultLimit, 1, memory.MaxAssociateLimit)
	if err != nil {
		return nil, err
	}
	req := &memory.RecallAssociateRequest{RecordID: id, Depth: uint32(depth), Limit: uint32(limit), MinWeight: 0}
	resp, err := p.svc.RecallAssociate(ctx, req)
	if err != nil {
		return nil, err
	}
	return jsonResult(readableAssociate(resp))
}

func (p *Proxy) inspect(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	id, err := a.id("record_id")
	if err != nil {
		return nil, err
	}
	rec, err := p.svc.Record(ctx, &memory.IntrospectRecordRequest{RecordID: id, IncludeHistory: true, IncludeAssociations: true, IncludeVersions: true})
	if err != nil {
		return nil, err
	}
	return jsonResult(readableRecord(rec))
}

func (p *Proxy) forget(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	// confirm first: without it nothing else matters.
	if _, ok := a.get("confirm"); !ok {
		return nil, badArg("confirm", "required: forget deletes permanently; make sure the user wants this, then call again with confirm=true")
	}
	confirm, err := a.boolean("confirm", false)
	if err != nil {
		return nil, err
	}
	if !confirm {
		return nil, badArg("confirm", "is false, so nothing was deleted; forget deletes permanently: make sure the user wants this, then call again with confirm=true")
	}
	items, ok, err := a.list("record_ids")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, badArg("record_ids", "required: comma-separated record ids (UUIDs) to delete")
	}
	req := &memory.ForgetRequest{Confirm: &confirm}
	for _, it := range items {
		id, err := parseID("record_ids", it)
		if err != nil {
			return nil, err
		}
		req.RecordIDs = append(req.RecordIDs, id)
	}
	if req.Cascade, err = a.boolean("cascade", false); err != nil {
		return nil, err
	}
	return jsonAnswer(p.svc.Forget(ctx, req))
}

func (p *Proxy) consolidate(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	s, err := a.choice("strategy", "incremental", strategyNames)
	if err != nil {
		return nil, err
	}
	req := memory.DefaultConsolidateRequest()
	req.Strategy, _ = memory.ParseConsolidationStrategy(s)
	if req.DryRun, err = a.boolean("dry_run", false); err != nil {
		return nil, err
	}
	return jsonAnswer(p.svc.Consolidate(ctx, &req))
}

func (p *Proxy) dreamTick(ctx context.Context, a args) (*mcp.CallToolResult, error) {
	req := memory.DefaultDreamTickRequest()
	var err error
	if req.SessionID, err = a.optText("session_id"); err != nil {
		return nil, err
	}
	if req.SessionID != nil {
		s := strings.TrimSpace(*req.SessionID)
		req.SessionID = &s
	}
	if req.DryRun, err = a.boolean("dry_run", false); err != nil {
		return nil, err
	}
	groups, err := a.integer("max_groups", defaultLimit, 1, maxGroups)
	if err != nil {
		return nil, err
	}
	req.MaxGroups = uint32(groups)
	if req.PromoteSemantic, err = a.boolean("promote_semantic", true); err != nil {
		return nil, err
	}
	if req.IncludePrivateScratch, err = a.boolean("include_private_scratch", false); err != nil {
		return nil, err
	}
	if req.IncludeSealed, err = a.boolean("include_sealed", false); err != nil {
		return nil, err
	}
	if req.SecrecyLevels, err = a.secrecyLevels("secrecy_levels"); err != nil {
		return nil, err
	}
	return jsonAnswer(p.svc.DreamTick(ctx, &req))
}

func (p *Proxy) stats(ctx context.Context, _ args) (*mcp.CallToolResult, error) {
	return jsonAnswer(p.svc.Stats(ctx))
}
