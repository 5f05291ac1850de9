package recordercmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/recorder"
	"memsvc.dev/memsvc/pkg/spool"
)

func (r *root) ingestCmd() *ff.Command {
	fs := ff.NewFlagSet("ingest").SetParent(r.flags)
	serverURL := fs.StringLong("server-url", "", serverURLUsage)
	spoolDir := fs.StringLong("spool-dir", "", spoolDirUsage)
	nsFlag := fs.StringLong("namespace", "", namespaceUsage)
	maxEvent := fs.IntLong("max-event-bytes", recorder.DefaultMaxEventBytes, "largest accepted input line, counting surrounding white space (1 to 1048576)")
	batchMax := fs.IntLong("batch-max-records", recorder.DefaultBatchMaxRecords, "events per batch (1 to 1000)")
	flushMS := fs.IntLong("flush-interval-ms", int(recorder.DefaultFlushInterval/time.Millisecond), "longest wait, in milliseconds, before an incomplete batch is sent")
	return &ff.Command{
		Name:      "ingest",
		Usage:     "memsvc-recorder ingest [--server-url URL] [--spool-dir DIR] [--namespace NAME] [FLAGS] < events.jsonl",
		ShortHelp: "send Capture Events from stdin to the server",
		LongHelp: "Sends pending spool files first, then reads Capture Events from stdin, one JSON\n" +
			"object per line: session_id, event_type (user_message, assistant_message,\n" +
			"tool_call, tool_result, command, file_change, session_summary, error) and content\n" +
			"are required; turn_id, topic_id, action_id, source, speaker, timestamp,\n" +
			"visibility (default normal), secrecy_level (default sensitive), metadata and meta\n" +
			"are optional. Secrets in content, metadata and meta are redacted before anything\n" +
			"is sent or spooled. An event with a turn_id, action_id or timestamp that repeats\n" +
			"a recent one with the same content is dropped as a duplicate. Entries go to the\n" +
			"namespace of --namespace (or MEMSVC_NAMESPACE); what is spooled for a namespace\n" +
			"is kept apart (<spool-dir>/namespaces/<name>) and replayed only into it.\n\n" +
			"A line over the size limit or an invalid event is reported with its line number\n" +
			"and skipped; the other lines go through and the exit code is 1. Batches that\n" +
			"cannot be sent because the server is unreachable, rate limiting (429) or failing\n" +
			"(5xx) are spooled and the exit code stays 0; when the server refuses the API key\n" +
			"(401) they are spooled and the exit code is 1. A summary goes to stderr:\n" +
			"  memsvc-recorder: accepted=2 duplicate=0 rejected=0 sent=2 spooled=0 replayed=0 quarantined=0\n\n" +
			"Examples:\n" +
			"  memsvc-recorder ingest < session.jsonl\n" +
			"  tail -F agent-events.jsonl | MEMSVC_SERVER_API_KEY=... memsvc-recorder ingest --server-url https://memsvc.example.com",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("ingest takes no arguments (events come from stdin)")
			}
			switch {
			case *maxEvent < 1 || *maxEvent > memory.MaxTextBlockBytes:
				return cli.Usagef("--max-event-bytes: %d is out of range 1 to %d", *maxEvent, memory.MaxTextBlockBytes)
			case *batchMax < 1 || *batchMax > memory.MaxBatchRecords:
				return cli.Usagef("--batch-max-records: %d is out of range 1 to %d", *batchMax, memory.MaxBatchRecords)
			case *flushMS < 1:
				return cli.Usagef("--flush-interval-ms: %d must be at least 1", *flushMS)
			}
			ns, err := r.namespace(*nsFlag)
			if err != nil {
				return err
			}
			url := r.serverURL(*serverURL)
			c, err := recorder.NewClient(url, recorder.ClientOptions{APIKey: r.apiKey(), Namespace: ns})
			if err != nil {
				return err
			}
			log := r.logger()
			if recorder.PlainHTTPRemote(url) {
				log.Warn("sending journal text over plain http to another host; use https", "server_url", url)
			}
			dir, err := r.openSpool(*spoolDir, ns)
			if err != nil {
				return err
			}
			cwd, _ := os.Getwd()
			rec, err := recorder.New(recorder.Config{
				Sender:          c,
				Spool:           dir,
				Logger:          log,
				WorkDir:         cwd,
				MaxEventBytes:   *maxEvent,
				MaxBatchRecords: *batchMax,
				FlushInterval:   time.Duration(*flushMS) * time.Millisecond,
			})
			if err != nil {
				return err
			}
			err = rec.Ingest(ctx, r.stdin)
			fmt.Fprintf(r.stderr, "memsvc-recorder: %s\n", rec.Stats())
			return err
		},
	}
}

// openSpool opens the spool of namespace ns: the spool directory itself
// for none (and default), else its subdirectory namespaces/<ns>, so a
// batch spooled for one namespace is only ever replayed into it, whichever
// project's run replays it. The spool package ignores subdirectories.
func (r *root) openSpool(flag, ns string) (*spool.Dir, error) {
	path, err := r.spoolDir(flag)
	if err != nil {
		return nil, err
	}
	if ns != "" && ns != memory.DefaultNamespace {
		path = filepath.Join(path, "namespaces", ns)
	}
	return spool.Open(path, spool.Options{})
}

func (r *root) doctorCmd() *ff.Command {
	fs := ff.NewFlagSet("doctor").SetParent(r.flags)
	serverURL := fs.StringLong("server-url", "", serverURLUsage)
	spoolDir := fs.StringLong("spool-dir", "", spoolDirUsage)
	skip := fs.BoolLong("skip-raw-ingest-probe", "check authentication with a raw recall of limit 0 instead of writing a probe record")
	nsFlag := fs.StringLong("namespace", "", namespaceUsage+"; the probes use it")
	return &ff.Command{
		Name:      "doctor",
		Usage:     "memsvc-recorder doctor [--server-url URL] [--spool-dir DIR] [--namespace NAME] [--skip-raw-ingest-probe]",
		ShortHelp: "check the server, the spool directory and the API key",
		LongHelp: "Runs four checks and prints one line per check, \"ok|fail <check> - <detail>\":\n" +
			"  health      GET /health\n" +
			"  readiness   GET /readiness\n" +
			"  spool       the spool directory is private and writable\n" +
			"  raw_ingest  an authenticated raw batch: one record with visibility private_scratch\n" +
			"              (reported as \"auth\" when the server refuses the API key)\n" +
			"With --skip-raw-ingest-probe nothing is written: an \"auth\" check makes a raw recall\n" +
			"with limit 0 instead. Exits 1 when a check fails.\n\n" +
			"Examples:\n" +
			"  memsvc-recorder doctor\n" +
			"  MEMSVC_SERVER_API_KEY=... memsvc-recorder doctor --server-url https://memsvc.example.com --skip-raw-ingest-probe",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("doctor takes no arguments")
			}
			ns, err := r.namespace(*nsFlag)
			if err != nil {
				return err
			}
			url := r.serverURL(*serverURL)
			c, err := recorder.NewClient(url, recorder.ClientOptions{APIKey: r.apiKey(), Namespace: ns})
			if err != nil {
				return err
			}
			path, spoolErr := r.spoolDir(*spoolDir)
			checks := recorder.Doctor(ctx, recorder.DoctorOptions{
				Service:            c,
				ServerURL:          c.URL(),
				SpoolDir:           path,
				SpoolErr:           spoolErr,
				SkipRawIngestProbe: *skip,
				APIKeySet:          r.apiKey() != "",
			})
			if err := recorder.WriteReport(r.stdout, checks); err != nil {
				return err
			}
			if n := recorder.FailedChecks(checks); n > 0 {
				return fmt.Errorf("doctor found %d failing check(s)", n)
			}
			return nil
		},
	}
}

func (r *root) installHookCmd() *ff.Command {
	fs := ff.NewFlagSet("install-hook").SetParent(r.flags)
	serverURL := fs.StringLong("server-url", "", serverURLUsage+"; written into the script")
	target := fs.StringLong("target-dir", "", "project directory (default: the current directory)")
	force := fs.BoolLong("force", "overwrite existing hook files (never symlinks)")
	nsFlag := fs.StringLong("namespace", "", "namespace the project's events go to, written into the script (default: derived from the project directory's name)")
	return &ff.Command{
		Name:      "install-hook",
		Usage:     "memsvc-recorder install-hook <claude|codex> [--server-url URL] [--target-dir DIR] [--namespace NAME] [--force]",
		ShortHelp: "write the hook helper for Claude Code or Codex into a project",
		LongHelp: "Writes two files into the project's hidden agent directory, .claude/hooks/ for\n" +
			"Claude Code and .codex/hooks/ for Codex:\n" +
			"  memsvc-recorder-<agent>-hook.sh   a POSIX sh helper that passes each hook payload\n" +
			"                                    to `memsvc-recorder hook <agent>` in the background\n" +
			"                                    and always exits 0\n" +
			"  memsvc-recorder.example.json      how to register the helper for UserPromptSubmit,\n" +
			"                                    PreToolUse, PostToolUse, Notification, Stop and\n" +
			"                                    SubagentStop\n" +
			"The script records into the project's namespace: --namespace, else the project\n" +
			"directory's name made a namespace name (\"My App\" becomes my-app); it sets\n" +
			"MEMSVC_NAMESPACE for the recorder, whatever the agent's environment holds.\n" +
			"Both targets are checked before either is written. Existing files are kept unless\n" +
			"--force is given; symlinks are refused even then. Agent settings files are never\n" +
			"edited: copy the registration from the example yourself.\n\n" +
			"Examples:\n" +
			"  memsvc-recorder install-hook claude\n" +
			"  memsvc-recorder install-hook codex --server-url https://memsvc.example.com --target-dir ~/src/app",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) != 1 {
				return cli.Usagef("want exactly one agent: claude or codex")
			}
			agent, err := recorder.ParseAgent(args[0])
			if err != nil {
				return cli.Usagef("%v", err)
			}
			if ns := strings.TrimSpace(*nsFlag); ns != "" {
				if err := memory.ValidateNamespace(ns); err != nil {
					return cli.Usagef("--namespace: %s", strings.TrimPrefix(err.Error(), "namespace: "))
				}
			}
			url := r.serverURL(*serverURL)
			inst, err := recorder.InstallHook(recorder.InstallOptions{Agent: agent, ServerURL: url, TargetDir: *target, Force: *force, Namespace: strings.TrimSpace(*nsFlag)})
			if err != nil {
				return err
			}
			fmt.Fprintf(r.stdout, "script: %s\nexample: %s\nnamespace: %s\n", inst.Script, inst.Example, inst.Namespace)
			fmt.Fprintf(r.stdout, "\nNext: register the script for the hook events as shown in the example (%s\n"+
				"settings were not changed). If the server requires an API key, set MEMSVC_SERVER_API_KEY\n"+
				"in the environment %s runs in.\n", agent.Name(), agent.Name())
			if recorder.PlainHTTPRemote(url) {
				fmt.Fprintf(r.stderr, "warning: %s is plain http to another host: the recorder will send journal text unencrypted, and will refuse to send an API key there; use https\n", url)
			}
			return nil
		},
	}
}

// Hook timing: the whole hook run, the part spent flushing old spool
// files, and each server call. The helper script's own timeout (15 s) is
// a backstop above these.
const (
	hookBudget      = 10 * time.Second
	hookFlushBudget = 4 * time.Second
	hookCallTimeout = 4 * time.Second
	hookReadBudget  = 5 * time.Second
	hookMaxPayload  = 16 << 20
)

func (r *root) hookCmd() *ff.Command {
	fs := ff.NewFlagSet("hook").SetParent(r.flags)
	serverURL := fs.StringLong("server-url", "", serverURLUsage)
	spoolDir := fs.StringLong("spool-dir", "", spoolDirUsage)
	nsFlag := fs.StringLong("namespace", "", namespaceUsage)
	return &ff.Command{
		Name:      "hook",
		Usage:     "memsvc-recorder hook <claude|codex> [--server-url URL] [--spool-dir DIR] [--namespace NAME] [PAYLOAD] < payload.json",
		ShortHelp: "record one coding-agent hook payload (run by the hook helper script)",
		LongHelp: "Reads the agent's native hook payload (JSON on stdin, or the PAYLOAD argument as\n" +
			"Codex's notify program passes it), maps it to Capture Events and records them the\n" +
			"way ingest does, in this process: UserPromptSubmit becomes user_message, PreToolUse\n" +
			"tool_call, PostToolUse tool_result, and Stop, SubagentStop and Notification\n" +
			"session_summary. A payload that is not JSON is recorded as a session_summary\n" +
			"holding the (redacted) text.\n\n" +
			"Best effort: the run takes at most 10 seconds, failures are logged to stderr and\n" +
			"the exit code is always 0, so the agent is never blocked or failed.\n\n" +
			"Examples:\n" +
			"  echo '{\"session_id\":\"s1\",\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"hi\"}' | memsvc-recorder hook claude",
		Flags: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return cli.Usagef("want an agent (claude or codex) and at most one PAYLOAD argument")
			}
			agent, err := recorder.ParseAgent(args[0])
			if err != nil {
				return cli.Usagef("%v", err)
			}
			ctx, cancel := context.WithTimeout(ctx, hookBudget)
			defer cancel()
			log := r.logger().With("agent", string(agent))
			var payload []byte
			if len(args) == 2 {
				payload = []byte(args[1])
			} else {
				payload = readBounded(ctx, r.stdin, hookMaxPayload, hookReadBudget)
			}
			events := recorder.HookEvents(recorder.HookInput{Agent: agent, Payload: payload, Getenv: r.getenv, Now: time.Now()})
			if len(events) == 0 {
				log.Info("empty hook payload; nothing recorded")
				return nil
			}
			ns, err := r.namespace(*nsFlag)
			if err != nil {
				log.Error("hook event not recorded", "err", err)
				return nil
			}
			dir, err := r.openSpool(*spoolDir, ns)
			if err != nil {
				log.Error("hook event not recorded", "err", err)
				return nil
			}
			var sender recorder.Sender
			c, err := recorder.NewClient(r.serverURL(*serverURL), recorder.ClientOptions{APIKey: r.apiKey(), Namespace: ns, Timeout: hookCallTimeout})
			if err != nil {
				log.Error("not sending; the event goes to the spool", "err", err)
			} else {
				sender = c
			}
			cwd, _ := os.Getwd()
			rec, err := recorder.New(recorder.Config{Sender: sender, Spool: dir, Logger: log, WorkDir: cwd})
			if err != nil {
				log.Error("hook event not recorded", "err", err)
				return nil
			}
			fctx, fcancel := context.WithTimeout(ctx, hookFlushBudget)
			rec.FlushSpool(fctx)
			fcancel()
			if err := rec.Record(ctx, events); err != nil {
				log.Error("hook event not fully recorded", "err", err)
			}
			fmt.Fprintf(r.stderr, "memsvc-recorder hook: %s\n", rec.Stats())
			return nil
		},
	}
}

// readBounded reads r until EOF, limit bytes or wait, whichever comes
// first, and returns what it got. Past the limit the rest is drained in the
// background, so the writer (the agent) never blocks on a full pipe.
func readBounded(ctx context.Context, r io.Reader, limit int, wait time.Duration) []byte {
	var (
		mu   sync.Mutex
		buf  []byte
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		chunk := make([]byte, 64<<10)
		for {
			n, err := r.Read(chunk)
			mu.Lock()
			if room := limit - len(buf); room > 0 {
				buf = append(buf, chunk[:min(n, room)]...)
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]byte(nil), buf...)
}
