package servercmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
)

// oneArg returns the single positional argument of a command.
func oneArg(args []string, name string) (string, error) {
	switch len(args) {
	case 0:
		return "", cli.Usagef("missing %s argument", name)
	case 1:
		return args[0], nil
	default:
		return "", cli.Usagef("expected one %s argument, got %d (quote text that contains spaces)", name, len(args))
	}
}

func (r *root) storeCmd() *ff.Command {
	fs := r.subFlags("store")
	storeName := fs.StringLong("store", "episodic", "store: "+memory.StoreTypeNames())
	embedding := fs.StringLong("embedding", "", "embedding as comma-separated numbers, e.g. `0.12,-0.4,0.9`")
	metaJSON := fs.StringLong("meta-json", "", "meta-memory JSON: intent, rationale, tags, evidence, ...")
	asJSON := jsonFlag(fs)
	return &ff.Command{
		Name:      "store",
		Usage:     "memsvc store <TEXT> [--store STORE] [--embedding NUMS] [--meta-json JSON]",
		ShortHelp: "store a text memory",
		LongHelp: "Stores TEXT as a curated memory and prints its id (--json: the API's answer).\n\n" +
			"Examples:\n" +
			"  memsvc store \"Deploys need two approvals\" --store procedural\n" +
			"  memsvc store \"chose pebble for storage\" --meta-json '{\"intent\":\"pick a store\",\"tags\":[\"adr\"]}'",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			text, err := textArg(args)
			if err != nil {
				return err
			}
			st, err := memory.ParseStoreType(strings.ToLower(*storeName))
			if err != nil {
				return cli.Usagef("--store: %v", err)
			}
			vec, err := parseEmbedding(*embedding)
			if err != nil {
				return err
			}
			meta, err := memory.ParseMetaJSON("--meta-json", *metaJSON)
			if err != nil {
				return &cli.UsageError{Err: err}
			}
			content := memory.TextContent(text)
			content.Blocks[0].Embedding = vec
			req := &memory.EncodeStoreRequest{Content: content, Store: &st, Meta: meta}
			return r.withWritingService(ctx, func(ctx context.Context, svc memory.Service) error {
				resp, err := svc.EncodeStore(ctx, req)
				if err == nil && st == memory.StoreWorking {
					fmt.Fprintln(r.stderr, "warning: the working store lives in memory; this record is gone when this command exits (store it through a running server with --server-url to keep it)")
				}
				return printAnswer(r.stdout, *asJSON, resp, err, printStored)
			})
		},
	}
}

// parseEmbedding reads "0.1, 0.2,-3" into a vector; empty means none.
func parseEmbedding(s string) ([]float32, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]float32, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 32)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, cli.Usagef("--embedding: item %d (%q) is not a finite number", i+1, strings.TrimSpace(p))
		}
		out[i] = float32(v)
	}
	return out, nil
}

func (r *root) storeRawCmd() *ff.Command {
	fs := r.subFlags("store-raw")
	session := fs.StringLong("session-id", "", "session the entry belongs to (required)")
	topic := fs.StringLong("topic-id", "", "topic within the session; dream processing groups by it")
	turn := fs.StringLong("turn-id", "", "turn identifier within the session")
	source := fs.StringLong("source", "conversation", "source: conversation, tool_io, scratchpad, summary, imported")
	speaker := fs.StringLong("speaker", "user", "speaker: user, assistant, system, tool")
	visibility := fs.StringLong("visibility", "normal", "visibility: normal, private_scratch, sealed")
	secrecy := fs.StringLong("secrecy-level", "public", "secrecy level: public, sensitive, secret")
	metaJSON := fs.StringLong("meta-json", "", "meta-memory JSON")
	asJSON := jsonFlag(fs)
	return &ff.Command{
		Name:      "store-raw",
		Usage:     "memsvc store-raw <TEXT> --session-id ID [FLAGS]",
		ShortHelp: "append a verbatim entry to the raw journal",
		LongHelp: "Appends TEXT verbatim to the raw journal and prints the new entry's id, session,\n" +
			"visibility and secrecy level (--json: the API's answer).\n" +
			"Raw entries are curated into memories only by dream processing.\n\n" +
			"Example:\n" +
			"  memsvc store-raw \"user: how do I rotate keys?\" --session-id chat-42 --speaker user",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			text, err := textArg(args)
			if err != nil {
				return err
			}
			if strings.TrimSpace(*session) == "" {
				return cli.Usagef("--session-id is required")
			}
			req := &memory.EncodeStoreRawRequest{SessionID: *session, Content: memory.TextContent(text)}
			if *topic != "" {
				req.TopicID = topic
			}
			if *turn != "" {
				req.TurnID = turn
			}
			if req.Source, err = memory.ParseRawSource(norm(*source)); err != nil {
				return cli.Usagef("--source: %v", err)
			}
			if req.Speaker, err = memory.ParseRawSpeaker(norm(*speaker)); err != nil {
				return cli.Usagef("--speaker: %v", err)
			}
			if req.Visibility, err = memory.ParseVisibility(norm(*visibility)); err != nil {
				return cli.Usagef("--visibility: %v", err)
			}
			if req.SecrecyLevel, err = memory.ParseSecrecyLevel(norm(*secrecy)); err != nil {
				return cli.Usagef("--secrecy-level: %v", err)
			}
			if req.Meta, err = memory.ParseMetaJSON("--meta-json", *metaJSON); err != nil {
				return &cli.UsageError{Err: err}
			}
			return r.withWritingService(ctx, func(ctx context.Context, svc memory.Service) error {
				resp, err := svc.EncodeStoreRaw(ctx, req)
				return printAnswer(r.stdout, *asJSON, resp, err, printStoredRaw)
			})
		},
	}
}

// textArg returns the TEXT argument of store and store-raw; blank text is
// refused before anything is opened.
func textArg(args []string) (string, error) {
	text, err := oneArg(args, "TEXT")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(text) == "" {
		return "", cli.Usagef("TEXT is empty: give the text to remember, e.g. memsvc store \"deploys need two approvals\"")
	}
	return text, nil
}

// recordIDArg reads the one RECORD_ID argument of inspect and forget; a
// missing, extra or malformed id is a usage error.
func recordIDArg(args []string) (memory.ID, error) {
	arg, err := oneArg(args, "RECORD_ID")
	if err != nil {
		return memory.ID{}, err
	}
	id, err := memory.ParseID(arg)
	if err != nil {
		return id, &cli.UsageError{Err: err}
	}
	return id, nil
}

// queryArg reads the optional QUERY argument of recall and recall-raw
// (nil without one).
func queryArg(args []string) (*string, error) {
	switch len(args) {
	case 0:
		return nil, nil
	case 1:
		return &args[0], nil
	default:
		return nil, cli.Usagef("expected at most one QUERY argument, got %d (quote queries that contain spaces)", len(args))
	}
}

// uint32Flag is the value v of the count flag named flag ("--limit") as
// the API's 32 bits; a larger value is a usage error.
func uint32Flag(flag string, v uint) (uint32, error) {
	if v > math.MaxUint32 {
		return 0, cli.Usagef("%s %d is too large", flag, v)
	}
	return uint32(v), nil
}

func norm(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// allSecrecyLevels is the default of --secrecy-levels for recall-raw and
// dream-tick: every level, as the spec's CLI table says. The CLI sends the
// levels explicitly; a request without them keeps the API's own default
// (public and sensitive), which is the reference behaviour.
const allSecrecyLevels = "public,sensitive,secret"

// parseSecrecyLevels reads the comma list of --secrecy-levels. An empty
// list is refused rather than sent as "no levels given", which the API
// would read as its narrower default.
func parseSecrecyLevels(s string) ([]memory.SecrecyLevel, error) {
	out := []memory.SecrecyLevel{}
	for _, p := range strings.Split(s, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		l, err := memory.ParseSecrecyLevel(norm(p))
		if err != nil {
			return nil, cli.Usagef("--secrecy-levels: %v", err)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, cli.Usagef("--secrecy-levels: name at least one of public, sensitive, secret (got %q); leave the flag out for all three", s)
	}
	return out, nil
}

func (r *root) recallRawCmd() *ff.Command {
	fs := r.subFlags("recall-raw")
	session := fs.StringLong("session-id", "", "only entries of this session")
	limit := fs.UintLong("limit", 10, "maximum number of entries")
	asJSON := jsonFlag(fs)
	private := fs.BoolLong("include-private-scratch", "include private_scratch entries")
	sealed := fs.BoolLong("include-sealed", "include sealed entries")
	levels := fs.StringLong("secrecy-levels", allSecrecyLevels, "comma-separated secrecy levels to include, from public, sensitive, secret")
	return &ff.Command{
		Name:      "recall-raw",
		Usage:     "memsvc recall-raw [QUERY] [--session-id ID] [--limit N] [FLAGS]",
		ShortHelp: "query the raw journal (newest first)",
		LongHelp: "Prints raw journal entries matching QUERY and the filters, newest first: time,\n" +
			"session, speaker, source, visibility and secrecy, then the text (--json: the API's answer).\n" +
			"Every secrecy level is included unless --secrecy-levels narrows it\n" +
			"(the HTTP API and MCP tool leave secret entries out unless asked).\n\n" +
			"Examples:\n" +
			"  memsvc recall-raw --session-id chat-42\n" +
			"  memsvc recall-raw \"rate limit\" --limit 5\n" +
			"  memsvc recall-raw --session-id chat-42 --secrecy-levels public,sensitive",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			req := memory.DefaultRecallRawQueryRequest()
			var err error
			if req.Query, err = queryArg(args); err != nil {
				return err
			}
			if *session != "" {
				req.SessionID = session
			}
			if req.Limit, err = uint32Flag("--limit", *limit); err != nil {
				return err
			}
			req.IncludePrivateScratch = *private
			req.IncludeSealed = *sealed
			if req.SecrecyLevels, err = parseSecrecyLevels(*levels); err != nil {
				return err
			}
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				resp, err := svc.RecallRaw(ctx, &req)
				return printAnswer(r.stdout, *asJSON, resp, err, printRecallRaw)
			})
		},
	}
}

func (r *root) inspectCmd() *ff.Command {
	fs := r.subFlags("inspect")
	asJSON := jsonFlag(fs)
	return &ff.Command{
		Name:      "inspect",
		Usage:     "memsvc inspect <RECORD_ID> [--json]",
		ShortHelp: "show one record",
		LongHelp: "Shows one curated record: its text, times, fidelity, emotion, associations,\n" +
			"metadata, meta-memory and version (--json: the record as the API returns it).",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			id, err := recordIDArg(args)
			if err != nil {
				return err
			}
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				rec, err := svc.Record(ctx, &memory.IntrospectRecordRequest{RecordID: id})
				return printAnswer(r.stdout, *asJSON, rec, err, printRecord)
			})
		},
	}
}

func (r *root) statsCmd() *ff.Command {
	fs := r.subFlags("stats")
	all := fs.BoolLong("all-namespaces", "total every namespace (through a server, for an API key that may use them all)")
	asJSON := jsonFlag(fs)
	return &ff.Command{
		Name:      "stats",
		Usage:     "memsvc stats [--all-namespaces] [--json]",
		ShortHelp: "show statistics",
		LongHelp: "Shows record counts and average fidelity per store, associations, the raw journal\n" +
			"and dream counters of the namespace of --namespace, or with --all-namespaces of\n" +
			"every namespace together (--json: the API's answer).",
		Flags: fs,
		Exec: cli.NoArgs("stats takes no arguments", func(ctx context.Context) error {
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				stats := svc.Stats
				if *all {
					stats = svc.StatsAll
				}
				s, err := stats(ctx)
				return printAnswer(r.stdout, *asJSON, s, err, printStats)
			})
		}),
	}
}

func (r *root) forgetCmd() *ff.Command {
	fs := r.subFlags("forget")
	cascade := fs.BoolLong("cascade", "also delete the records this one links to directly (links a client made, dream and consolidation provenance; never similarity links)")
	confirm := fs.BoolLong("confirm", "confirm permanent deletion (required when not asked interactively)")
	asJSON := jsonFlag(fs)
	return &ff.Command{
		Name:      "forget",
		Usage:     "memsvc forget <RECORD_ID> --confirm [--cascade]",
		ShortHelp: "delete a record permanently",
		LongHelp: "Deletes a curated record for good. Without --confirm, asks on a terminal and\n" +
			"refuses otherwise (exit 2). Associations other records hold to it are removed too.\n\n" +
			"--cascade also deletes the records it links to directly (one hop): the links a\n" +
			"client gave when storing it, and derivation links between a dream summary and its\n" +
			"semantic node or a consolidated copy and its source. The similarity links memsvc\n" +
			"adds on its own between alike records are never followed.",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			id, err := recordIDArg(args)
			if err != nil {
				return err
			}
			if !*confirm {
				if ok, err := r.askConfirm(fmt.Sprintf("Permanently delete record %s%s? [y/N] ", id, map[bool]string{true: " and its direct associations", false: ""}[*cascade]), "delete", "deleted"); !ok {
					return err
				}
			}
			yes := true
			return r.withService(ctx, func(ctx context.Context, svc memory.Service) error {
				resp, err := svc.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{id}, Cascade: *cascade, Confirm: &yes})
				if err == nil && resp.RecordsDeleted == 0 {
					err = memory.NotFound(id)
				}
				return printAnswer(r.stdout, *asJSON, resp, err, func(w io.Writer, resp *memory.ForgetResponse) error {
					_, err := fmt.Fprintf(w, "Deleted %d record(s)\n", resp.RecordsDeleted)
					return err
				})
			})
		},
	}
}

// askConfirm asks before a step that --confirm would have confirmed (verb
// it: "delete", "migrate"): prompt goes to stderr and a y or Y line from
// stdin confirms. Without a terminal there is no one to ask, and the
// answer is a usage error saying that --confirm is needed. Any other
// answer says on stderr that nothing was done ("deleted", "changed").
func (r *root) askConfirm(prompt, verb, done string) (bool, error) {
	if !r.terminal(r.stdin) {
		return false, cli.Usagef("refusing to %s without --confirm (stdin is not a terminal, so there is no one to ask); nothing was %s", verb, done)
	}
	fmt.Fprint(r.stderr, prompt)
	line, _ := bufio.NewReader(r.stdin).ReadString('\n')
	if a := strings.TrimSpace(line); a == "y" || a == "Y" {
		return true, nil
	}
	fmt.Fprintf(r.stderr, "Aborted; nothing was %s.\n", done)
	return false, nil
}
