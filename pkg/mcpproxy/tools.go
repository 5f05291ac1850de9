package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"memsvc.dev/memsvc/pkg/memory"
)

// The tool catalogue: fifteen tools, each an input schema, an output
// schema and a handler that turns arguments into one memory.Service call
// and returns a value of the type the output schema describes. Argument
// rules the input schema states (types, enums, ranges, defaults) are
// enforced again in the handlers, because clients do not validate.
//
// The enumerations and the defaults come from pkg/memory (memory.Names
// and the Default... requests); the proxy's own choices are the constants
// below.

const (
	// maxGroups bounds dream_tick's max_groups.
	maxGroups = 1000
	// defaultTimelineLimit keeps a timeline from filling a model's context
	// by default; up to memory.MaxTimelineLimit may be asked for (the
	// HTTP API's default).
	defaultTimelineLimit = 100
	// timelineDefaultSpan is how far back a timeline without start goes.
	timelineDefaultSpan = 7 * 24 * time.Hour
)

// rawDefaults are the defaults of a raw entry's optional arguments: the
// HTTP API's, except that an entry is public unless the caller says
// otherwise, as with `memsvc store-raw` and upstream's tool (the API's
// cautious default, sensitive, is for unclassified machine input).
func rawDefaults() memory.EncodeStoreRawRequest {
	d := memory.DefaultEncodeStoreRawRequest()
	d.SecrecyLevel = memory.SecrecyPublic
	return d
}

// handlerFunc serves one tool call and returns the answer, a value that
// marshals to a JSON object. An error becomes an isError result through
// Proxy.describe.
type handlerFunc func(ctx context.Context, a args) (any, error)

// tool is one entry of the catalogue.
type tool struct {
	def     mcp.Tool
	handler handlerFunc
	// aliases are argument names accepted besides the declared ones (the
	// older spellings of renamed arguments).
	aliases []string
}

// toolOf pairs def with h and sets def's output schema to the schema of
// h's answer type T (a struct, or a pointer to one).
func toolOf[T any](def mcp.Tool, h func(context.Context, args) (T, error), aliases ...string) tool {
	typ := reflect.TypeFor[T]()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	s, err := newSchemaGen(false).of(typ)
	if err == nil && s["type"] != "object" {
		err = fmt.Errorf("%v is not a JSON object", typ)
	}
	if err != nil {
		// A programming error in the catalogue: every test that builds a
		// proxy reports it.
		panic(fmt.Sprintf("mcpproxy: output schema of %s: %v", def.Name, err))
	}
	def.RawOutputSchema, err = json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("mcpproxy: output schema of %s: %v", def.Name, err))
	}
	return tool{def: def, aliases: aliases, handler: func(ctx context.Context, a args) (any, error) {
		return h(ctx, a)
	}}
}

// Shared argument descriptions.
const (
	descMetaJSON = "Optional meta-memory, why this memory exists: intent, rationale, decision, alternatives, evidence, tags, confidence (0 to 1) and the other properties listed. " +
		"Example: {\"intent\":\"choose a storage engine\",\"rationale\":\"pebble is embedded and crash-safe\",\"tags\":[\"adr\"]} (a string holding the JSON object is accepted too). " +
		"Supply it whenever you know the intent, rationale, decision context or evidence."
	descStore = "Store for the memory: episodic (events, experiences), semantic (facts, knowledge), " +
		"procedural (how-to steps), emotional (emotionally charged moments), working (short-lived scratch kept in memory only, 7 slots). " +
		"Omit to let the server choose (episodic)."
	descEmotion       = "Optional emotion label; it tags the memory and slows its fading."
	descRawSession    = "Identifier of the conversation or session the entry belongs to (for example the agent's session id); recall_raw and dream_tick group by it."
	descSource        = "Where the text came from: conversation, tool_io (tool input or output), scratchpad, summary or imported."
	descSpeaker       = "Who produced the text."
	descVisibility    = "normal; private_scratch (hidden from recall_raw and dream_tick unless they ask for it); sealed (hidden unless asked for)."
	descSecrecy       = "Secret entries are hidden from recall_raw and dream_tick unless secrecy_levels names them."
	descSecrecyLevels = "Secrecy levels to include (a comma-separated string is accepted too). Absent or empty: public and sensitive."
	descRecordID      = "Record id (UUID) as returned by store, recall or timeline, e.g. 0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f."
	descTime          = "RFC 3339 time, e.g. 2026-05-01T09:30:00Z."
)

func contentArg(what string) mcp.ToolOption {
	return mcp.WithString("content", mcp.Required(), mcp.MinLength(1),
		mcp.Description(what+" UTF-8 text, at most 1 MiB; must not be blank."))
}

// metaArg is the meta_json argument: a meta-memory object, its properties
// those of memory.MetaMemory.
func metaArg() mcp.ToolOption {
	s, err := newSchemaGen(true).of(reflect.TypeFor[memory.MetaMemory]())
	if err != nil {
		panic(fmt.Sprintf("mcpproxy: meta_json schema: %v", err))
	}
	return mcp.WithObject("meta_json", mcp.Properties(s["properties"].(map[string]any)),
		mcp.AdditionalProperties(false), mcp.Description(descMetaJSON))
}

func enumArg(name string, values []string, def string, desc string) mcp.ToolOption {
	opts := []mcp.PropertyOption{mcp.Enum(values...), mcp.Description(desc)}
	if def != "" {
		opts = append(opts, mcp.DefaultString(def))
	}
	return mcp.WithString(name, opts...)
}

// listArg is an argument that takes a list of names from values.
func listArg(name string, values []string, desc string) mcp.ToolOption {
	return mcp.WithArray(name, mcp.Items(map[string]any{"type": "string", "enum": values}), mcp.Description(desc))
}

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

// itemsOf is the schema of one element of a batch: an object with the
// arguments of the single-record tool t.
func itemsOf(t mcp.Tool) map[string]any {
	return map[string]any{
		"type":                 "object",
		"properties":           t.InputSchema.Properties,
		"required":             t.InputSchema.Required,
		"additionalProperties": false,
	}
}

// recordsArg is a batch tool's records argument.
func recordsArg(single mcp.Tool, desc string) mcp.ToolOption {
	return mcp.WithArray("records", mcp.Required(), mcp.Items(itemsOf(single)),
		mcp.MinItems(1), mcp.MaxItems(memory.MaxBatchRecords), mcp.Description(desc))
}

// tools returns the catalogue served by p.
func (p *Proxy) tools() []tool {
	raw := rawDefaults()
	recallDef := memory.DefaultRecallQueryRequest()
	rawRecallDef := memory.DefaultRecallRawQueryRequest()
	assocDef := memory.DefaultRecallAssociateRequest()
	timelineDef := memory.DefaultRecallTimelineRequest()
	consolidateDef := memory.DefaultConsolidateRequest()
	dreamDef := memory.DefaultDreamTickRequest()
	exportDef := memory.DefaultExportRequest()
	storeNames := memory.Names[memory.StoreType]()
	emotionNames := memory.EmotionLabelNames()
	secrecyNames := memory.Names[memory.SecrecyLevel]()

	storeDef := newTool("store",
		"Save one curated memory: a fact, decision, preference, lesson or event worth knowing later, written so it stands alone. "+
			"Use store for what you have distilled; use store_raw to keep verbatim text (conversation turns, tool output), and batch_store for several memories at once. "+
			"Memories fade unless recalled and are linked to related memories automatically. "+
			"Whenever you know why the memory matters (intent, rationale, decision, alternatives, evidence, tags), pass it in meta_json. "+
			"Returns record_id, store, initial_fidelity and associations_created.",
		contentArg("The memory, written so it stands alone when recalled later."),
		enumArg("store", storeNames, "", descStore),
		enumArg("emotion", emotionNames, "", descEmotion),
		metaArg(),
		annotate(false, false, false),
	)
	storeRawDef := newTool("store_raw",
		"Append verbatim text (a conversation turn, tool input or output, scratch notes) to the raw journal, unchanged, for exact recall with recall_raw. "+
			"Use it to keep what was actually said or run; use store for a distilled memory. "+
			"recall does not search raw entries until dream_tick has summarised them into memories. "+
			"Returns record_id, session_id, visibility, secrecy_level and duplicate.",
		contentArg("The verbatim text."),
		mcp.WithString("session_id", mcp.Required(), mcp.MinLength(1), mcp.Description(descRawSession)),
		mcp.WithString("turn_id", mcp.Description("Optional identifier of the turn within the session.")),
		mcp.WithString("topic_id", mcp.Description("Optional topic identifier; dream_tick groups entries by session and topic.")),
		enumArg("source", memory.Names[memory.RawSource](), raw.Source.String(), descSource),
		enumArg("speaker", memory.Names[memory.RawSpeaker](), raw.Speaker.String(), descSpeaker),
		enumArg("visibility", memory.Names[memory.Visibility](), raw.Visibility.String(), descVisibility),
		enumArg("secrecy_level", secrecyNames, raw.SecrecyLevel.String(), descSecrecy),
		metaArg(),
		annotate(false, false, false),
	)

	return []tool{
		toolOf(storeDef, p.store),
		toolOf(storeRawDef, p.storeRaw),

		toolOf(newTool("update",
			"Change one existing memory in place: replace its content, emotion and/or meta-memory while it keeps its record_id, associations and fidelity history. "+
				"Use it to correct or refine a memory found with recall or inspect, rather than storing a near-duplicate. "+
				"Give record_id and at least one of content, emotion, meta_json. Returns record_id and the fields updated.",
			mcp.WithString("record_id", mcp.Required(), mcp.Description(descRecordID)),
			mcp.WithString("content", mcp.MinLength(1), mcp.Description("New text replacing the whole content; must not be blank.")),
			enumArg("emotion", emotionNames, "", "New emotion label."),
			metaArg(),
			annotate(false, true, true),
		), p.update),

		toolOf(newTool("batch_store",
			fmt.Sprintf("Save up to %d curated memories in one call, all or none, and link consecutive ones (sequential associations). ", memory.MaxBatchRecords)+
				"Use it for related memories such as the steps of a procedure, or to save many at once. "+
				"Returns one result per record (record_id, store, initial_fidelity, associations_created), in order, and associations_inferred.",
			recordsArg(storeDef, "The memories, each an object with the arguments of the store tool. "+
				"Example: [{\"content\":\"Deploys need two approvals\",\"store\":\"procedural\"},{\"content\":\"The CI cache lives in bucket ci-cache-eu\",\"store\":\"semantic\"}]"),
			annotate(false, false, false),
		), p.batchStore, "records_json"),

		toolOf(newTool("batch_store_raw",
			fmt.Sprintf("Append up to %d raw journal entries in one call, all or none, e.g. the turns of a conversation. Returns one result per entry, in order.", memory.MaxBatchRecords),
			recordsArg(storeRawDef, "The entries, each an object with the arguments (and defaults) of the store_raw tool. "+
				"Example: [{\"content\":\"user: how do I rotate keys?\",\"session_id\":\"s1\"},{\"content\":\"Run memsvc rotate.\",\"session_id\":\"s1\",\"speaker\":\"assistant\"}]"),
			annotate(false, false, false),
		), p.batchStoreRaw, "records_json"),

		toolOf(newTool("recall",
			"Search curated memories by meaning and words (full-text ranking plus spreading activation along associations), best first; without query, list the most recent. "+
				"Use it first whenever you need what is remembered about something. "+
				"For the verbatim text of past conversations use recall_raw; for what happened in a period, timeline; for what is linked to a memory you already have, associate. "+
				"Recalling reinforces the memories found so they fade more slowly; reconsolidate=false looks without reinforcing. "+
				"Returns memories (record_id, store, text exactly as stored, relevance_score, fidelity from 1 = fresh toward 0, created_at, emotion), query_metadata and total_candidates.",
			mcp.WithString("query", mcp.Description("What to look for, in natural language or keywords. Omit to list recent memories.")),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(memory.MaxRecallLimit), mcp.DefaultNumber(int(recallDef.Limit)), mcp.Description("Maximum number of memories to return.")),
			listArg("stores", storeNames, "Stores to search, e.g. [\"semantic\",\"procedural\"] (a comma-separated string is accepted too). Absent or empty: all."),
			mcp.WithBoolean("reconsolidate", mcp.DefaultBool(recallDef.Reconsolidate), mcp.Description("Reinforce the memories found (they fade more slowly). false looks without changing anything.")),
			mcp.WithInteger("activation_depth", mcp.Min(0), mcp.Max(memory.MaxAssociateDepth), mcp.DefaultNumber(int(recallDef.ActivationDepth)), mcp.Description("How many association hops spreading activation follows to bring in related memories; 0 turns it off.")),
			annotate(false, false, false),
		), p.recall),

		toolOf(newTool("recall_raw",
			"Search the raw journal, what was actually said or run, verbatim: by session_id, words (query) and/or a time range (start and end), newest first. "+
				"Use it when the exact wording matters or for entries dream_tick has not summarised yet; use recall for curated memories. "+
				"Private scratch, sealed and secret entries stay hidden unless asked for. "+
				"Returns records (record_id, session_id, source, speaker, visibility, secrecy_level, text, created_at) and total_candidates (matches before the limit).",
			mcp.WithString("session_id", mcp.Description("Only entries of this session.")),
			mcp.WithString("query", mcp.Description("Words the entry must contain (case-insensitive).")),
			mcp.WithString("start", mcp.Description(descTime+" Start of the time range; give start and end together.")),
			mcp.WithString("end", mcp.Description(descTime+" End of the time range; give start and end together.")),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(memory.MaxRawRecallLimit), mcp.DefaultNumber(int(rawRecallDef.Limit)), mcp.Description("Maximum number of entries to return.")),
			mcp.WithBoolean("include_private_scratch", mcp.DefaultBool(rawRecallDef.IncludePrivateScratch), mcp.Description("Also return entries with visibility private_scratch.")),
			mcp.WithBoolean("include_sealed", mcp.DefaultBool(rawRecallDef.IncludeSealed), mcp.Description("Also return entries with visibility sealed.")),
			listArg("secrecy_levels", secrecyNames, descSecrecyLevels),
			annotate(true, false, true),
		), p.recallRaw),

		toolOf(newTool("timeline",
			"List curated memories created in a time range, oldest first, grouped into time buckets. "+
				"Use it for what happened when, or to review a period; it does not rank by relevance (search with recall). "+
				"Default: the 7 days before end (or before now), in hourly buckets. "+
				"Returns buckets (start, end, count and memories with their full records; empty buckets left out) and truncated, true when the range holds more than limit.",
			mcp.WithString("start", mcp.Description(descTime+" Default: 7 days before end.")),
			mcp.WithString("end", mcp.Description(descTime+" Default: now.")),
			enumArg("granularity", memory.Names[memory.TimeGranularity](), timelineDef.Granularity.String(), "Bucket size."),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(memory.MaxTimelineLimit), mcp.DefaultNumber(defaultTimelineLimit), mcp.Description("Maximum number of memories to return, oldest first; truncated is true when the range holds more (ask again from a later start).")),
			annotate(true, false, true),
		), p.timeline),

		toolOf(newTool("associate",
			"Follow the associations of one memory (spreading activation) and return the related memories, strongest first, with the path that reached each. "+
				"Use it when you already have a record_id (from recall, timeline or store) and want its context: linked steps, causes, related facts. "+
				"Returns memories (record, relevance_score = activation, activation_path) and total_candidates.",
			mcp.WithString("record_id", mcp.Required(), mcp.Description(descRecordID)),
			mcp.WithInteger("depth", mcp.Min(1), mcp.Max(memory.MaxAssociateDepth), mcp.DefaultNumber(int(assocDef.Depth)), mcp.Description("How many association hops to follow.")),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(memory.MaxAssociateLimit), mcp.DefaultNumber(int(assocDef.Limit)), mcp.Description("Maximum number of memories to return.")),
			annotate(true, false, true),
		), p.associate),

		toolOf(newTool("inspect",
			"Show everything stored about one memory: content, fidelity and decay state, emotion, associations, metadata, version and meta-memory (intent, rationale, evidence). "+
				"Use it to look at one memory in detail, for example before update or forget.",
			mcp.WithString("record_id", mcp.Required(), mcp.Description(descRecordID)),
			annotate(true, false, true),
		), p.inspect),

		toolOf(newTool("forget",
			"Permanently delete memories by record id. This cannot be undone: use it only when the user wants something removed (to correct a memory, use update), "+
				"and call with confirm=true. Ids that do not exist are skipped. Returns records_deleted.",
			mcp.WithArray("record_ids", mcp.Required(), mcp.MinItems(1), mcp.Items(map[string]any{"type": "string", "format": "uuid"}),
				mcp.Description("Record ids (UUIDs) to delete (a comma-separated string is accepted too).")),
			mcp.WithBoolean("cascade", mcp.DefaultBool(false), mcp.Description("Also delete the memories the listed ones link to directly: links a client made and dream/consolidation provenance, never similarity links memsvc added.")),
			mcp.WithBoolean("confirm", mcp.Required(), mcp.Description("Must be true; with false nothing is deleted.")),
			annotate(false, true, true),
		), p.forget),

		toolOf(newTool("consolidate",
			"Consolidate curated memory: give mature episodic memories a semantic copy (linked to its source) and merge near-duplicates. "+
				"Run it now and then, e.g. at the end of a long task or after many stores; it is idempotent, and dry_run=true reports without changing anything. "+
				"It works on curated memories: to turn raw journal entries into memories, run dream_tick first. "+
				"Returns counts: records_processed, records_migrated, records_compressed, records_pruned, semantic_nodes_created.",
			enumArg("strategy", memory.Names[memory.ConsolidationStrategy](), consolidateDef.Strategy.String(),
				"incremental: episodic memories without an up-to-date copy; full: every episodic memory, merging duplicates across all and pruning dormant sources already copied; "+
					"selective: like incremental but only salient memories (recalled twice, reinforced or emotionally intense)."),
			mcp.WithBoolean("dry_run", mcp.DefaultBool(consolidateDef.DryRun), mcp.Description("Report what would happen without changing anything.")),
			annotate(false, false, true),
		), p.consolidate),

		toolOf(newTool("dream_tick",
			"Summarise raw journal entries not yet processed into episodic summary memories (grouped by session and topic, split at time gaps) that link back to the entries, "+
				"and promote topic groups to semantic memories. No LLM is used. "+
				"Run it after storing raw entries, e.g. at the end of a session, so that recall finds what the raw journal holds "+
				"(stats shows raw_journal_pending_dream; a server with background_dream_enabled also does it by itself now and then). "+
				"Returns counts: groups_processed, raw_records_processed, episodic_summaries_created, semantic_nodes_created.",
			mcp.WithString("session_id", mcp.Description("Only process entries of this session.")),
			mcp.WithBoolean("dry_run", mcp.DefaultBool(dreamDef.DryRun), mcp.Description("Report what would happen without changing anything.")),
			mcp.WithInteger("max_groups", mcp.Min(1), mcp.Max(maxGroups), mcp.DefaultNumber(int(dreamDef.MaxGroups)), mcp.Description("Maximum number of groups to summarise in this call.")),
			mcp.WithBoolean("promote_semantic", mcp.DefaultBool(dreamDef.PromoteSemantic), mcp.Description("Also create semantic memories for groups with a topic and at least two entries.")),
			mcp.WithBoolean("include_private_scratch", mcp.DefaultBool(dreamDef.IncludePrivateScratch), mcp.Description("Also summarise entries with visibility private_scratch.")),
			mcp.WithBoolean("include_sealed", mcp.DefaultBool(dreamDef.IncludeSealed), mcp.Description("Also summarise entries with visibility sealed.")),
			listArg("secrecy_levels", secrecyNames, descSecrecyLevels),
			annotate(false, false, false),
		), p.dreamTick),

		toolOf(newTool("stats",
			"Report memory statistics: records per store, associations, average fidelity, raw journal size and entries pending dream_tick, "+
				"vector index size, last dream tick, and whether background decay and dreaming run. "+
				"Use it for an overview, or to see whether dream_tick or consolidate is due.",
			annotate(true, false, true),
		), p.stats),

		toolOf(newTool("export",
			"Write a backup archive (CMA format) of every curated memory and the raw journal to a NEW file in this MCP server's export directory ("+p.exportDirName()+"), on the machine running it. "+
				"Use it only when the user asks for a backup or an export. "+
				"The file must not exist yet (it is never overwritten); paths outside the export directory, \"..\" and symbolic links are refused. "+
				"Returns archive_id, size_bytes, record_count, checksum and the absolute path written.",
			mcp.WithString("output_path", mcp.Required(), mcp.Description(
				"Name of the new archive file in the export directory, e.g. memsvc-2026-05-01.cma (or a path inside it).")),
			enumArg("format", memory.ExportFormats(), exportDef.Format, "cma; jsonl is an alias that writes the same CMA archive."),
			mcp.WithBoolean("encrypt", mcp.DefaultBool(false), mcp.Description("Encrypt the archive with a key derived from encryption_key.")),
			mcp.WithString("encryption_key", mcp.Description("Passphrase, required when encrypt is true (and only then). It is needed to import the archive; keep it safe.")),
			mcp.WithBoolean("include_sealed", mcp.DefaultBool(false), mcp.Description("Also include raw entries with visibility sealed (a complete backup needs this).")),
			mcp.WithBoolean("include_secret", mcp.DefaultBool(false), mcp.Description("Also include raw entries with secrecy level secret (a complete backup needs this).")),
			annotate(false, false, false),
		), p.export),
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
Which tool:
- To remember something distilled (fact, decision, preference, lesson): store, or batch_store for several. To keep verbatim text (conversation turns, tool output): store_raw or batch_store_raw.
- To correct a memory: update (it keeps its id). To delete: forget (needs confirm=true).
- To find what is remembered: recall (by meaning and words; without a query, the newest). For exact past wording: recall_raw. For a period: timeline. For the context of a memory you have: associate. For every detail of one memory: inspect.
- Upkeep: dream_tick turns pending raw journal entries into memories (run it after storing raw text); consolidate gives mature episodic memories semantic copies and merges duplicates (run it now and then). stats shows counts and what is pending.
- export writes a backup archive into the export directory (needs output_path, a file name).
Every tool answers with JSON (structuredContent, and the same JSON as text).`

// ---- handlers ----

func (p *Proxy) store(ctx context.Context, a args) (*memory.EncodeStoreResponse, error) {
	req, err := encodeRequest(a)
	if err != nil {
		return nil, err
	}
	return p.svc.EncodeStore(ctx, req)
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

func (p *Proxy) storeRaw(ctx context.Context, a args) (*memory.EncodeStoreRawResponse, error) {
	req, err := rawRequest(a)
	if err != nil {
		return nil, err
	}
	// A client-made id lets the HTTP client retry the store after a
	// refusal: the server drops an id it already holds.
	id := p.ids.New()
	req.RecordID = &id
	return p.svc.EncodeStoreRaw(ctx, req)
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
	req := rawDefaults()
	req.SessionID = strings.TrimSpace(session)
	req.Content = memory.TextContent(content)
	if req.TurnID, err = a.optText("turn_id"); err != nil {
		return nil, err
	}
	if req.TopicID, err = a.optText("topic_id"); err != nil {
		return nil, err
	}
	if err = enumChoice(a, "source", &req.Source); err != nil {
		return nil, err
	}
	if err = enumChoice(a, "speaker", &req.Speaker); err != nil {
		return nil, err
	}
	if err = enumChoice(a, "visibility", &req.Visibility); err != nil {
		return nil, err
	}
	if err = enumChoice(a, "secrecy_level", &req.SecrecyLevel); err != nil {
		return nil, err
	}
	if req.Meta, err = a.meta("meta_json"); err != nil {
		return nil, err
	}
	return &req, nil
}

// updateResult answers update.
type updateResult struct {
	RecordID memory.ID `json:"record_id"`
	// Updated names the arguments applied: content, emotion, meta_json.
	Updated []string `json:"updated"`
}

func (p *Proxy) update(ctx context.Context, a args) (*updateResult, error) {
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
	res := &updateResult{RecordID: id, Updated: []string{}}
	for _, f := range []struct {
		name string
		set  bool
	}{{"content", req.Content != nil}, {"emotion", req.Emotion != nil}, {"meta_json", req.Meta != nil}} {
		if f.set {
			res.Updated = append(res.Updated, f.name)
		}
	}
	return res, nil
}

// records reads the records of a batch: a JSON array of objects, each
// checked against the fields a record may have. The array is the records
// argument, or records_json, its older name, which also takes the array
// as JSON text in a string.
func records(a args, fields []string) ([]args, error) {
	name := "records"
	if _, ok := a.get("records_json"); ok {
		if _, both := a.get("records"); both {
			return nil, badArg("records_json", "given together with records, its newer name; give the records once, in records")
		}
		name = "records_json"
	}
	doc, ok, err := a.jsonText(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, badArg(name, "required: an array of record objects such as [{\"content\":\"first\"},{\"content\":\"second\"}]")
	}
	var items []any
	if err := json.Unmarshal(doc, &items); err != nil {
		return nil, badArg(name, "not a JSON array of objects (%v); want e.g. [{\"content\":\"first\"},{\"content\":\"second\"}]", err)
	}
	if len(items) == 0 {
		return nil, badArg(name, "the array is empty; give at least one record")
	}
	if len(items) > memory.MaxBatchRecords {
		return nil, badArg(name, "%d records exceed the maximum of %d per call; split them into several calls", len(items), memory.MaxBatchRecords)
	}
	out := make([]args, len(items))
	for i, it := range items {
		m, isObj := it.(map[string]any)
		prefix := fmt.Sprintf("%s[%d].", name, i)
		if !isObj {
			return nil, badArg(strings.TrimSuffix(prefix, "."), "must be an object such as {\"content\":\"...\"}, got %s", jsonType(it))
		}
		ra := args{m: m, prefix: prefix}
		if err := ra.unknown(fields, fields); err != nil {
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

func (p *Proxy) batchStore(ctx context.Context, a args) (*memory.EncodeBatchResponse, error) {
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
	return p.svc.EncodeBatch(ctx, req)
}

func (p *Proxy) batchStoreRaw(ctx context.Context, a args) (*memory.EncodeBatchStoreRawResponse, error) {
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
	return p.svc.EncodeBatchRaw(ctx, req)
}

// converted is a tool's result made by convert from a service answer,
// or the failed call's error.
func converted[R, T any](resp R, err error, convert func(R) T) (T, error) {
	if err != nil {
		var none T
		return none, err
	}
	return convert(resp), nil
}

func (p *Proxy) recall(ctx context.Context, a args) (*recallResult, error) {
	req := memory.DefaultRecallQueryRequest()
	var err error
	if req.Cue.Text, err = a.optText("query"); err != nil {
		return nil, err
	}
	if err := a.count("limit", &req.Limit, 1, memory.MaxRecallLimit); err != nil {
		return nil, err
	}
	if req.Stores, err = enumList[memory.StoreType](a, "stores"); err != nil {
		return nil, err
	}
	if req.Reconsolidate, err = a.boolean("reconsolidate", req.Reconsolidate); err != nil {
		return nil, err
	}
	if err := a.count("activation_depth", &req.ActivationDepth, 0, memory.MaxAssociateDepth); err != nil {
		return nil, err
	}
	perfect := memory.ModePerfect
	req.RecallMode = &perfect
	if rd, ok := p.svc.(recallDecoder); ok {
		var out *recallResult
		err := rd.RecallQueryDecode(ctx, &req, memory.ViewBrief, func(data []byte) error {
			parsed, ok, brief := parseRecall(data)
			switch {
			case ok:
				out = parsed
				return nil
			case brief:
				return errBriefRecall
			}
			var resp memory.RecallQueryResponse
			if err := memory.UnmarshalRecallQueryResponse(data, &resp); err != nil {
				return err
			}
			out = flattenRecall(&resp)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	resp, err := p.svc.RecallQuery(ctx, &req)
	return converted(resp, err, flattenRecall)
}

// recallDecoder is a service that asks for the brief recall answer and
// hands over its JSON undecoded (pkg/client's Client), so that recall
// reads only the fields it shows (parseRecall). A server without the
// brief view answers in full, which parseRecall reads as well.
type recallDecoder interface {
	RecallQueryDecode(ctx context.Context, req *memory.RecallQueryRequest, view string, decode func(data []byte) error) error
}

// errBriefRecall is the failure to read a brief recall answer.
var errBriefRecall = errors.New("brief recall answer not understood")

func (p *Proxy) recallRaw(ctx context.Context, a args) (*rawResult, error) {
	req := memory.DefaultRecallRawQueryRequest()
	var err error
	if req.SessionID, err = a.sessionID(); err != nil {
		return nil, err
	}
	if req.Query, err = a.optText("query"); err != nil {
		return nil, err
	}
	start, end, err := a.timeRange()
	if err != nil {
		return nil, err
	}
	switch {
	case start != nil && end != nil:
		req.Temporal = &memory.TemporalRange{Start: *start, End: *end}
	case start != nil:
		return nil, badArg("end", "required when start is given (give both start and end, or neither)")
	case end != nil:
		return nil, badArg("start", "required when end is given (give both start and end, or neither)")
	}
	if err := a.count("limit", &req.Limit, 1, memory.MaxRawRecallLimit); err != nil {
		return nil, err
	}
	if err := a.rawFilter(&req.IncludePrivateScratch, &req.IncludeSealed, &req.SecrecyLevels); err != nil {
		return nil, err
	}
	resp, err := p.svc.RecallRaw(ctx, &req)
	return converted(resp, err, flattenRaw)
}

func (p *Proxy) timeline(ctx context.Context, a args) (*timelineResult, error) {
	start, end, err := a.timeRange()
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
	req := memory.DefaultRecallTimelineRequest()
	req.Range = memory.TemporalRange{Start: *start, End: *end}
	if err := enumChoice(a, "granularity", &req.Granularity); err != nil {
		return nil, err
	}
	limit, err := a.integer("limit", defaultTimelineLimit, 1, memory.MaxTimelineLimit)
	if err != nil {
		return nil, err
	}
	n := uint32(limit)
	req.Limit = &n
	resp, err := p.svc.RecallTimeline(ctx, &req)
	return converted(resp, err, readableTimeline)
}

func (p *Proxy) associate(ctx context.Context, a args) (*associateResult, error) {
	req := memory.DefaultRecallAssociateRequest()
	var err error
	if req.RecordID, err = a.id("record_id"); err != nil {
		return nil, err
	}
	if err := a.count("depth", &req.Depth, 1, memory.MaxAssociateDepth); err != nil {
		return nil, err
	}
	if err := a.count("limit", &req.Limit, 1, memory.MaxAssociateLimit); err != nil {
		return nil, err
	}
	// Every association counts, however weak, as in upstream's tool.
	req.MinWeight = 0
	resp, err := p.svc.RecallAssociate(ctx, &req)
	return converted(resp, err, readableAssociate)
}

func (p *Proxy) inspect(ctx context.Context, a args) (*recordView, error) {
	id, err := a.id("record_id")
	if err != nil {
		return nil, err
	}
	rec, err := p.svc.Record(ctx, &memory.IntrospectRecordRequest{RecordID: id, IncludeHistory: true, IncludeAssociations: true, IncludeVersions: true})
	if err != nil {
		return nil, err
	}
	v := readableRecord(rec)
	return &v, nil
}

func (p *Proxy) forget(ctx context.Context, a args) (*memory.ForgetResponse, error) {
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
		return nil, badArg("record_ids", "required: the record ids (UUIDs) to delete, e.g. [\"0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f\"]")
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
	return p.svc.Forget(ctx, req)
}

func (p *Proxy) consolidate(ctx context.Context, a args) (*memory.ConsolidateResponse, error) {
	req := memory.DefaultConsolidateRequest()
	if err := enumChoice(a, "strategy", &req.Strategy); err != nil {
		return nil, err
	}
	var err error
	if req.DryRun, err = a.boolean("dry_run", req.DryRun); err != nil {
		return nil, err
	}
	return p.svc.Consolidate(ctx, &req)
}

func (p *Proxy) dreamTick(ctx context.Context, a args) (*memory.DreamTickResponse, error) {
	req := memory.DefaultDreamTickRequest()
	var err error
	if req.SessionID, err = a.sessionID(); err != nil {
		return nil, err
	}
	if req.DryRun, err = a.boolean("dry_run", req.DryRun); err != nil {
		return nil, err
	}
	if err := a.count("max_groups", &req.MaxGroups, 1, maxGroups); err != nil {
		return nil, err
	}
	if req.PromoteSemantic, err = a.boolean("promote_semantic", req.PromoteSemantic); err != nil {
		return nil, err
	}
	if err := a.rawFilter(&req.IncludePrivateScratch, &req.IncludeSealed, &req.SecrecyLevels); err != nil {
		return nil, err
	}
	return p.svc.DreamTick(ctx, &req)
}

func (p *Proxy) stats(ctx context.Context, _ args) (*memory.Stats, error) {
	return p.svc.Stats(ctx)
}
