// Package cli holds what the four command trees (memsvc, memsvc-recorder,
// memsvc-mcp, memsvc-admin) share: the exit-code contract, usage errors,
// flag reordering and output helpers. The trees themselves live in the
// subpackages.
//
// Exit codes: 0 success (and --help), 1 the command ran and failed,
// 2 the command line was wrong (unknown flag, missing argument); usage
// errors also print the command's help to stderr.
package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/peterbourgon/ff/v4"
	"github.com/peterbourgon/ff/v4/ffhelp"
	"github.com/peterbourgon/ff/v4/ffval"
	"golang.org/x/term"
)

// Version is the release of every memsvc binary (memsvc, memsvc-recorder,
// memsvc-mcp, memsvc-admin); they are built and shipped together.
const Version = "0.1.0"

// Exit codes.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// UsageError marks a mistake in the command line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Main runs a command tree's Run with the process's arguments, streams
// and environment, under a context that SIGINT and SIGTERM cancel, and
// returns its exit code: the whole main of every memsvc binary.
func Main(run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
}

// RootExec is the Exec of a command tree's root, which does nothing of
// its own: with version set (--version) it prints "name Version" to
// stdout; an argument names an unknown command, a usage error; otherwise
// it shows the help. version may be nil for a tree without --version.
func RootExec(name string, version *bool, stdout io.Writer) func(context.Context, []string) error {
	group := GroupExec("")
	return func(ctx context.Context, args []string) error {
		if version != nil && *version {
			_, err := fmt.Fprintf(stdout, "%s %s\n", name, Version)
			return err
		}
		return group(ctx, args)
	}
}

// GroupExec is the Exec of a command that only holds subcommands, such as
// `memsvc namespace` (kind "namespace"; "" for a tree's root): an argument
// names an unknown subcommand, a usage error ("unknown namespace command
// \"x\""); none shows the help.
func GroupExec(kind string) func(context.Context, []string) error {
	unknown := "unknown command %q"
	if kind != "" {
		unknown = "unknown " + kind + " command %q"
	}
	return func(_ context.Context, args []string) error {
		if len(args) > 0 {
			return &UsageError{Err: fmt.Errorf(unknown, args[0])}
		}
		return ff.ErrHelp
	}
}

// NoArgs is the Exec of a command that takes no positional arguments:
// any argument is a usage error saying refusal ("stats takes no
// arguments"); otherwise it runs run.
func NoArgs(refusal string, run func(context.Context) error) func(context.Context, []string) error {
	return func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return &UsageError{Err: errors.New(refusal)}
		}
		return run(ctx)
	}
}

// Run parses args against root (reordering flags that follow positional
// arguments, so `store "text" --store semantic` works), runs the selected
// command, reports errors on stderr and returns the exit code.
func Run(ctx context.Context, root *ff.Command, args []string, stderr io.Writer, opts ...ff.Option) int {
	err := root.Parse(Intersperse(root, args), opts...)
	if err == nil {
		err = root.Run(ctx)
	} else if !errors.Is(err, ff.ErrHelp) {
		err = &UsageError{Err: parseError(err, args)}
	}
	return Report(root, err, stderr)
}

// flagValueRE finds the flag and the value in ff's "--limit: set "-1": ..."
// errors.
var flagValueRE = regexp.MustCompile(`(--?[A-Za-z0-9][-A-Za-z0-9]*): set ("(?:[^"\\]|\\.)*"): `)

// parseError rewrites a command-line parse error in plain words: which
// flag, what value, what it should have been, without Go's parser names
// ("strconv.ParseUint"). args is the command line, used to name the flag
// of a "missing value" error.
func parseError(err error, args []string) error {
	msg := err.Error()
	cmd, rest, ok := strings.Cut(msg, ": parse args: ")
	if !ok {
		return err
	}
	prefix := cmd + ": "
	if m := flagValueRE.FindStringSubmatch(rest); m != nil {
		flag, value := m[1], m[2]
		if ne, ok := errors.AsType[*strconv.NumError](err); ok {
			return errors.New(prefix + numberMessage(flag, value, ne))
		}
		if strings.Contains(rest, "time: invalid duration") || strings.Contains(rest, "time: unknown unit") || strings.Contains(rest, "time: missing unit") {
			return fmt.Errorf("%s%s must be a duration such as 90s, 5m or 2h, not %s", prefix, flag, value)
		}
		if _, why, ok := strings.Cut(rest, "parse error: "); ok {
			return fmt.Errorf("%s%s %s: %s", prefix, flag, value, why)
		}
		return err
	}
	if errors.Is(err, ff.ErrUnknownFlag) {
		name := strings.Trim(strings.TrimPrefix(rest, ff.ErrUnknownFlag.Error()), ` "`)
		dashes := "--"
		if len(name) == 1 {
			dashes = "-"
		}
		return fmt.Errorf("%sunknown flag %s%s (see --help for the flags it takes)", prefix, dashes, name)
	}
	if rest == "missing value" {
		for i := len(args) - 1; i >= 0; i-- {
			if strings.HasPrefix(args[i], "-") && args[i] != "--" {
				return fmt.Errorf("%sflag %s needs a value", prefix, args[i])
			}
		}
	}
	return err
}

// numberMessage says what a numeric flag wants.
func numberMessage(flag, value string, ne *strconv.NumError) string {
	if errors.Is(ne.Err, strconv.ErrRange) {
		return fmt.Sprintf("%s %s is out of range", flag, value)
	}
	switch ne.Func {
	case "ParseUint":
		return fmt.Sprintf("%s must be a whole number of 0 or more, not %s", flag, value)
	case "ParseInt", "Atoi":
		return fmt.Sprintf("%s must be a whole number, not %s", flag, value)
	case "ParseFloat":
		return fmt.Sprintf("%s must be a number, not %s", flag, value)
	case "ParseBool":
		return fmt.Sprintf("%s must be true or false, not %s", flag, value)
	default:
		return fmt.Sprintf("%s: %s is not a valid value", flag, value)
	}
}

// Port adds a --name flag that holds a TCP port (0 to 65535), shown as N
// in help and without a default, so that leaving it out is different from
// any port. The returned function reports the port and whether the flag
// was given.
func Port(fs *ff.FlagSet, name, usage string) func() (uint16, bool) {
	var port uint16
	v := ffval.NewValue(&port)
	if _, err := fs.AddFlag(ff.FlagConfig{LongName: name, Value: v, Placeholder: "N", NoDefault: true, Usage: usage}); err != nil {
		panic(err) // a programming error: the flag set already has it
	}
	return func() (uint16, bool) { return port, v.IsSet() }
}

// Report prints err (if any) and returns the exit code for it.
func Report(root *ff.Command, err error, stderr io.Writer) int {
	var usage *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ff.ErrHelp):
		fmt.Fprintf(stderr, "%s\n", ffhelp.Command(selected(root)))
		return ExitOK
	case errors.Is(err, ff.ErrNoExec):
		fmt.Fprintf(stderr, "%s\n", ffhelp.Command(selected(root)))
		return ExitUsage
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "Error: %v\n\n%s\n", usage.Err, ffhelp.Command(selected(root)))
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return ExitError
	}
}

func selected(root *ff.Command) *ff.Command {
	if s := root.GetSelected(); s != nil {
		return s
	}
	return root
}

// Intersperse moves flags that appear after positional arguments in front
// of them (ending with "--" so positional text that starts with a dash
// stays text). It walks the command tree to know which flags take values.
func Intersperse(root *ff.Command, args []string) []string {
	var out []string
	cmd := root
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			out = append(out, a)
			if strings.Contains(a, "=") {
				continue
			}
			name := strings.TrimLeft(a, "-")
			f := findFlag(cmd, name)
			if f == nil {
				continue // unknown: let the parser report it
			}
			if isBool(f) {
				if i+1 < len(args) {
					if _, err := strconv.ParseBool(args[i+1]); err == nil {
						out = append(out, args[i+1])
						i++
					}
				}
				continue
			}
			if i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
			continue
		}
		if len(positional) == 0 {
			if sub := findSub(cmd, a); sub != nil {
				out = append(out, a)
				cmd = sub
				continue
			}
		}
		positional = append(positional, a)
	}
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

func findSub(cmd *ff.Command, name string) *ff.Command {
	for _, s := range cmd.Subcommands {
		if strings.EqualFold(s.Name, name) {
			return s
		}
	}
	return nil
}

func findFlag(cmd *ff.Command, name string) ff.Flag {
	if cmd.Flags == nil {
		return nil
	}
	var found ff.Flag
	_ = cmd.Flags.WalkFlags(func(f ff.Flag) error {
		if l, ok := f.GetLongName(); ok && l == name {
			found = f
		}
		if s, ok := f.GetShortName(); ok && len(name) == 1 && string(s) == name {
			found = f
		}
		return nil
	})
	return found
}

// isBool recognises boolean flags: ff gives them the placeholder "" (default
// false) or "BOOL" (default true), and their value parses as a bool.
func isBool(f ff.Flag) bool {
	if p := f.GetPlaceholder(); p != "" && p != "BOOL" {
		return false
	}
	_, err := strconv.ParseBool(f.GetValue())
	return err == nil
}

// PrintJSON writes v as indented JSON followed by a newline.
func PrintJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// IsTerminal reports whether stream (a reader or writer) is an
// interactive terminal.
func IsTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Confirm writes prompt to stderr, reads one line from stdin and reports
// whether it is want (surrounding white space aside). It is for
// destructive commands on a terminal; without a terminal they require a
// flag (--yes, --confirm) instead of asking.
func Confirm(stdin io.Reader, stderr io.Writer, prompt, want string) (bool, error) {
	fmt.Fprint(stderr, prompt)
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read confirmation: %w", err)
	}
	return strings.TrimSpace(line) == want, nil
}

// NewLogger returns a logger writing to w at the named level ("trace",
// "debug", "info", "warn", "error") in the named format ("pretty" or
// "json").
func NewLogger(w io.Writer, level, format string) *slog.Logger {
	return NewLevelLogger(w, LogLevel(level), format)
}

// NewLevelLogger is NewLogger with a level that may change while the
// logger is in use (a *slog.LevelVar).
func NewLevelLogger(w io.Writer, level slog.Leveler, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// LogLevel is the slog level of a level name ("trace", "debug", "info",
// "warn", "error"); other names are info.
func LogLevel(name string) slog.Level {
	switch name {
	case "trace":
		return slog.LevelDebug - 4
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

// Getenv returns the value of name in environ ("KEY=value" entries), or
// "". Like os.Getenv, the first entry for a name wins.
func Getenv(environ []string, name string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// CheckVerifiable returns an error naming path when a verifier would have
// nothing to check there: no such file, not a regular file, an empty file
// or one that cannot be read. what names the kind of file ("audit log").
// A verifier must not report success on nothing.
func CheckVerifiable(what, path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no %s at %s: nothing to verify (check the path)", what, path)
	case err != nil:
		return fmt.Errorf("cannot read %s %s: %w", what, path, err)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s %s is not a regular file (%s)", what, path, st.Mode().Type())
	case st.Size() == 0:
		return fmt.Errorf("%s %s is empty: nothing to verify", what, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read %s %s: %w", what, path, err)
	}
	defer f.Close()
	if _, err := f.Read(make([]byte, 1)); err != nil {
		return fmt.Errorf("cannot read %s %s: %w", what, path, err)
	}
	return nil
}
