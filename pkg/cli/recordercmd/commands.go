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
	conn := r.addConnFlags(fs)
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
		Exec: cli.NoArgs("ingest takes no arguments (events come from stdin)", func(ctx context.Context) error {
			switch {
			case *maxEvent < 1 || *maxEvent > memory.MaxTextBlockBytes:
				return cli.Usagef("--max-event-bytes: %d is out of range 1 to %d", *maxEvent, memory.MaxTextBlockBytes)
			case *batchMax < 1 || *batchMax > memory.MaxBatchRecords:
				return cli.Usagef("--batch-max-records: %d is out of range 1 to %d", *batchMax, memory.MaxBatchRecords)
			case *flushMS < 1:
				return cli.Usagef("--flush-interval-ms: %d must be at least 1", *flushMS)
			}
			ns, err := conn.ns()
			if err != nil {
				return err
			}
			log := r.logger()
			cwd, _ := os.Getwd()
			rec, err := conn.newRecorder(ns, recorder.Config{
				Logger:          log,
				WorkDir:         cwd,
				MaxEventBytes:   *maxEvent,
				MaxBatchRecords: *batchMax,
				FlushInterval:   time.Duration(*flushMS) * time.Millisecond,
			})
			if err != nil {
				return err
			}
			conn.warnPlainHTTP(log)
			err = rec.Ingest(ctx, r.stdin)
			fmt.Fprintf(r.stderr, "memsvc-recorder: %s\n", rec.Stats())
			return err
		}),
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
		Exec: cli.NoArgs("doctor takes no arguments", func(ctx context.Context) error {
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
		}),
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
			"  memsvc-recorder-<agent>-hook.sh   a POSIX sh helper that queues each hook payload\n" +
			"                                    with `memsvc-recorder hook <agent> --queue-only`,\n" +
			"                                    sends the queue with `memsvc-recorder flush` in the\n" +
			"                                    background and always exits 0\n" +
			"  memsvc-recorder.example.json      the hook registration: Claude Code's for\n" +
			"                                    UserPromptSubmit, PreToolUse, PostToolUse,\n" +
			"                                    Notification, Stop and SubagentStop; for Codex a\n" +
			"                                    complete .codex/hooks.json (UserPromptSubmit,\n" +
			"                                    PreToolUse, PostToolUse, Stop, SubagentStop)\n" +
			"The registered command finds the helper relative to the project ($CLAUDE_PROJECT_DIR\n" +
			"for Claude Code, the git work tree for Codex), so a registration checked into the\n" +
			"repository works in every clone.\n" +
			"The script records into the project's namespace: --namespace, else the project\n" +
			"directory's name made a namespace name (\"My App\" becomes my-app); it sets\n" +
			"MEMSVC_NAMESPACE for the recorder, whatever the agent's environment holds.\n\n" +
			"Both targets are checked before either is written. Existing files are kept unless\n" +
			"--force is given; symlinks are refused even then. Settings are never edited: copy\n" +
			"the example's \"hooks\" into .claude/settings.json yourself. Codex reads its hooks\n" +
			"from .codex/hooks.json: install-hook codex writes it when there is none and leaves an\n" +
			"existing one alone (merge the example into it).\n\n" +
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
				if err := cli.CheckNamespace("--namespace", ns); err != nil {
					return err
				}
			}
			url := r.serverURL(*serverURL)
			inst, err := recorder.InstallHook(recorder.InstallOptions{Agent: agent, ServerURL: url, TargetDir: *target, Force: *force, Namespace: strings.TrimSpace(*nsFlag)})
			if err != nil {
				return err
			}
			fmt.Fprintf(r.stdout, "script: %s\nexample: %s\nnamespace: %s\n", inst.Script, inst.Example, inst.Namespace)
			if inst.Registration != "" {
				state := "written"
				if !inst.RegistrationWritten {
					state = "exists; left as it was"
				}
				fmt.Fprintf(r.stdout, "registration: %s (%s)\n", inst.Registration, state)
			}
			fmt.Fprintf(r.stdout, "command: %s\n\nNext:\n", inst.Command)
			switch {
			case agent == recorder.Claude:
				fmt.Fprintf(r.stdout, "  - Copy the \"hooks\" object of %s into\n"+
					"    .claude/settings.json (settings were not changed). Check it and the script in to\n"+
					"    share them with your team.\n", inst.Example)
			case inst.RegistrationWritten:
				fmt.Fprintf(r.stdout, "  - Codex runs project hooks once you trust them: review them with /hooks in Codex.\n"+
					"    Check .codex/hooks.json and the script in to share them with your team.\n")
			default:
				fmt.Fprintf(r.stdout, "  - Merge the \"hooks\" object of %s into %s, then review\n"+
					"    them with /hooks in Codex.\n", inst.Example, inst.Registration)
			}
			fmt.Fprintf(r.stdout, "  - If the server requires an API key, set MEMSVC_SERVER_API_KEY in the environment\n"+
				"    %s runs in.\n", agent.Name())
			watch := "memsvc-recorder watch --agent " + string(agent) + " --server-url " + shellWord(url)
			fmt.Fprintf(r.stdout, "  - Hooks do not see the assistant's messages; its session transcripts hold them.\n"+
				"    To record them too, keep this running (once per user, not per project):\n"+
				"      %s\n"+
				"    or install it as a systemd user service:\n"+
				"      %s --print-systemd-unit > ~/.config/systemd/user/%s\n"+
				"      systemctl --user daemon-reload && systemctl --user enable --now %s\n",
				watch, watch, watchUnitName, watchUnitName)
			if recorder.PlainHTTPRemote(url) {
				fmt.Fprintf(r.stderr, "warning: %s is plain http to another host: the recorder will send journal text unencrypted, and will refuse to send an API key there; use https\n", url)
			}
			return nil
		},
	}
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
	conn := r.addConnFlags(fs)
	queueOnly := fs.BoolLong("queue-only", "queue the events in the spool and return without sending them (memsvc-recorder flush sends them)")
	return &ff.Command{
		Name:      "hook",
		Usage:     "memsvc-recorder hook <claude|codex> [--queue-only] [--server-url URL] [--spool-dir DIR] [--namespace NAME] [PAYLOAD] < payload.json",
		ShortHelp: "record one coding-agent hook payload (run by the hook helper script)",
		LongHelp: "Reads the agent's native hook payload (JSON on stdin, or the PAYLOAD argument as\n" +
			"Codex's notify program passes it), maps it to Capture Events and records them the\n" +
			"way ingest does, in this process: UserPromptSubmit becomes user_message, PreToolUse\n" +
			"tool_call, PostToolUse tool_result, and Stop, SubagentStop and Notification\n" +
			"session_summary (the assistant's last message, when Stop or SubagentStop carries\n" +
			"it, is attributed to the assistant). A payload that is not JSON is recorded as a\n" +
			"session_summary holding the (redacted) text.\n\n" +
			"With --queue-only the events are only queued in the spool (a local write of a few\n" +
			"milliseconds); `memsvc-recorder flush` sends the queue, oldest first. The hook\n" +
			"helper does both, the first in the foreground, so that events reach the server in\n" +
			"the order the agent fired them.\n\n" +
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
			ns, err := conn.ns()
			if err != nil {
				log.Error("hook event not recorded", "err", err)
				return nil
			}
			dir, err := conn.spool(ns)
			if err != nil {
				log.Error("hook event not recorded", "err", err)
				return nil
			}
			var sender recorder.Sender // none: every batch is queued in the spool
			if !*queueOnly {
				if sender, err = conn.sender(ns, hookCallTimeout); err != nil {
					log.Error("not sending; the event goes to the spool", "err", err)
				}
			}
			cwd, _ := os.Getwd()
			rec, err := recorder.New(recorder.Config{Sender: sender, Spool: dir, Logger: log, WorkDir: cwd})
			if err != nil {
				log.Error("hook event not recorded", "err", err)
				return nil
			}
			if sender != nil {
				fctx, fcancel := context.WithTimeout(ctx, hookFlushBudget)
				rec.FlushSpoolWait(fctx, hookFlushBudget)
				fcancel()
			}
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
