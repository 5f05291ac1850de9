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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/peterbourgon/ff/v4"
	"github.com/peterbourgon/ff/v4/ffhelp"
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

// Run parses args against root (reordering flags that follow positional
// arguments, so `store "text" --store semantic` works), runs the selected
// command, reports errors on stderr and returns the exit code.
func Run(ctx context.Context, root *ff.Command, args []string, stderr io.Writer, opts ...ff.Option) int {
	err := root.Parse(Intersperse(root, args), opts...)
	if err == nil {
		err = root.Run(ctx)
	} else if !errors.Is(err, ff.ErrHelp) {
		err = &UsageError{Err: err}
	}
	return Report(root, err, stderr)
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

// IsTerminal reports whether r is an interactive terminal.
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewLogger returns a logger writing to w at the named level ("trace",
// "debug", "info", "warn", "error") in the named format ("pretty" or
// "json").
func NewLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	switch level {
	case "trace":
		l = slog.LevelDebug - 4
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
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
