package recordercmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/recorder"
)

// watchUnitName is the systemd user unit --print-systemd-unit writes.
const watchUnitName = "memsvc-recorder-watch.service"

func (r *root) watchCmd() *ff.Command {
	fs := ff.NewFlagSet("watch").SetParent(r.flags)
	conn := r.addConnFlags(fs)
	agent := fs.StringLong("agent", "all", "whose transcripts to follow: claude, codex or all")
	claudeDir := fs.StringLong("claude-dir", "", "Claude Code transcripts (default $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)")
	codexDir := fs.StringLong("codex-dir", "", "Codex session rollouts (default $CODEX_HOME/sessions, else ~/.codex/sessions)")
	backfill := fs.BoolLong("backfill", "when a directory is followed for the first time, record what its transcripts already hold")
	rescan := fs.DurationLong("rescan-interval", recorder.DefaultRescanInterval, "how often the directories are walked again, for missed notifications")
	maxLine := fs.IntLong("max-line-bytes", recorder.DefaultMaxTranscriptLine, "longest transcript line read; longer ones are skipped")
	unit := fs.BoolLong("print-systemd-unit", "print a systemd user unit that runs this command, and exit")
	return &ff.Command{
		Name:      "watch",
		Usage:     "memsvc-recorder watch [--agent claude|codex|all] [--server-url URL] [--spool-dir DIR] [--namespace NAME] [FLAGS]",
		ShortHelp: "follow Claude Code and Codex session transcripts and record the assistant's side",
		LongHelp: "Follows the session transcripts the agents write (*.jsonl below the directories)\n" +
			"and records what no hook delivers: the assistant's messages (assistant_message) and\n" +
			"the tool calls it made (tool_call, spoken by the assistant, the call id as action_id,\n" +
			"so the hook's tool_result of the same call joins it). User prompts and tool results\n" +
			"come from the hooks; reasoning is not recorded. Events are redacted, sent and\n" +
			"spooled as ingest does.\n\n" +
			"Each transcript is read to its last complete line; a line still being written\n" +
			"waits for its newline. Offsets are kept in the spool directory (transcript-offsets)\n" +
			"and saved after each batch is sent or spooled, so a restart goes on where the last\n" +
			"run stopped; every event's record id comes from its line, so lines read twice\n" +
			"(after a crash) are stored once. A file replaced or truncated (its inode or first\n" +
			"bytes changed, or it shrank) is read from the start. The first time a directory is\n" +
			"followed, what its files already hold is left out unless --backfill is given;\n" +
			"files that appear later are read whole.\n\n" +
			"It reads when notified of changes (and walks the directories every\n" +
			"--rescan-interval, for missed notifications); otherwise it sleeps. It runs until\n" +
			"interrupted (exit 0), or exits 1 when the server refuses the API key (what was\n" +
			"read is spooled). One watch per spool directory.\n\n" +
			"Everything it records goes to one namespace: that of --namespace (or\n" +
			"MEMSVC_NAMESPACE), else the server's default (or the only one the API key is bound\n" +
			"to). It does not derive a namespace from a transcript's project, as install-hook\n" +
			"does for the hooks: to keep the assistant's side of a project beside its hook\n" +
			"events, give watch the project's namespace, or leave both in the default one. Its\n" +
			"spool and offsets are those of the namespace (<spool-dir>/namespaces/<name>), so\n" +
			"one watch per namespace may run, each reading every transcript.\n\n" +
			"Examples:\n" +
			"  memsvc-recorder watch\n" +
			"  memsvc-recorder watch --agent codex --server-url https://memsvc.example.com\n" +
			"  memsvc-recorder watch --print-systemd-unit > ~/.config/systemd/user/" + watchUnitName,
		Flags: fs,
		Exec: cli.NoArgs("watch takes no arguments", func(ctx context.Context) error {
			var agents []recorder.Agent
			switch a := strings.ToLower(strings.TrimSpace(*agent)); a {
			case "all", "":
				agents = recorder.Agents()
			default:
				ag, err := recorder.ParseAgent(a)
				if err != nil {
					return cli.Usagef("--agent: %v (or all)", err)
				}
				agents = []recorder.Agent{ag}
			}
			switch {
			case *rescan < time.Second:
				return cli.Usagef("--rescan-interval: %s is below the 1s minimum", *rescan)
			case *maxLine < 1024 || *maxLine > 1<<30:
				return cli.Usagef("--max-line-bytes: %d is out of range 1024 to %d", *maxLine, 1<<30)
			}
			var sources []recorder.TranscriptSource
			for _, a := range agents {
				dir := map[recorder.Agent]string{recorder.Claude: *claudeDir, recorder.Codex: *codexDir}[a]
				if strings.TrimSpace(dir) == "" {
					d, err := recorder.DefaultTranscriptDir(a, r.getenv)
					if err != nil {
						return err
					}
					dir = d
				}
				sources = append(sources, recorder.TranscriptSource{Agent: a, Dir: dir})
			}
			ns, err := conn.ns()
			if err != nil {
				return err
			}
			if *unit {
				return r.printWatchUnit(sources, conn, ns, *backfill)
			}
			log := r.logger()
			rec, err := conn.newRecorder(ns, recorder.Config{Logger: log})
			if err != nil {
				return err
			}
			conn.warnPlainHTTP(log)
			w, err := recorder.NewTranscriptWatcher(recorder.WatchConfig{Recorder: rec, Sources: sources, Backfill: *backfill,
				RescanInterval: *rescan, MaxLineBytes: *maxLine})
			if err != nil {
				return err
			}
			err = w.Run(ctx)
			fmt.Fprintf(r.stderr, "memsvc-recorder watch: %s; %s\n", w.Stats(), rec.Stats())
			return err
		}),
	}
}

// printWatchUnit prints a systemd user unit running watch with the
// resolved settings, namespace ns ("" for none) among them (never the API
// key: that comes from an environment file).
func (r *root) printWatchUnit(sources []recorder.TranscriptSource, conn *connFlags, ns string, backfill bool) error {
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this program for the unit's ExecStart: %w", err)
	}
	args := []string{bin, "watch", "--server-url", conn.url()}
	if *conn.spoolDir != "" {
		args = append(args, "--spool-dir", *conn.spoolDir)
	}
	if ns != "" {
		args = append(args, "--namespace", ns)
	}
	if len(sources) == 1 {
		args = append(args, "--agent", string(sources[0].Agent))
	}
	for _, s := range sources {
		args = append(args, "--"+string(s.Agent)+"-dir", s.Dir)
	}
	if backfill {
		args = append(args, "--backfill")
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "\n\r") {
			return fmt.Errorf("cannot write %q into a unit's command line: it holds a line break", a)
		}
		quoted[i] = systemdQuote(a)
	}
	_, err = fmt.Fprintf(r.stdout, `# %s: records the assistant's side of Claude Code and Codex sessions
# into memsvc. Install and start it:
#   memsvc-recorder watch ... --print-systemd-unit > ~/.config/systemd/user/%s
#   systemctl --user daemon-reload && systemctl --user enable --now %s
# If the server requires an API key, put MEMSVC_SERVER_API_KEY=... into
# ~/.config/memsvc/recorder.env (mode 0600); it is never written here.
[Unit]
Description=memsvc-recorder: record Claude Code and Codex transcripts into memsvc
After=network-online.target

[Service]
ExecStart=%s
EnvironmentFile=-%%h/.config/memsvc/recorder.env
Restart=on-failure
RestartSec=30s
Nice=10

[Install]
WantedBy=default.target
`, watchUnitName, watchUnitName, watchUnitName, strings.Join(quoted, " "))
	return err
}

// systemdQuote quotes an argument of a unit's command line: double quotes
// with backslash escapes, and the specifier and variable signs doubled.
func systemdQuote(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$").Replace(s)
	if s == "" || strings.ContainsAny(s, " \t\n'\"\\;") {
		return `"` + s + `"`
	}
	return s
}
