package mcpproxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
)

// failure is a failed tool call: the text the model reads (an isError
// result) and how the proxy logs it.
type failure struct {
	kind  string // short class for logs and tests: "invalid_argument", "unreachable", ...
	level slog.Level
	text  string
}

// localError is a failure of the proxy's own work (writing an export
// file) whose message already says what happened and what to do.
type localError struct{ msg string }

func (e *localError) Error() string { return e.msg }

// describe is the MCP transport's one error table: every error a tool
// handler returns becomes a failure whose text says what went wrong and
// what to do about it. Nothing becomes a JSON-RPC error.
func (p *Proxy) describe(err error) failure {
	var (
		arg       *argError
		local     *localError
		down      *client.UnavailableError
		exhausted *client.RetriesExhaustedError
		me        *memory.Error
	)
	switch {
	case errors.As(err, &arg):
		return failure{"invalid_argument", slog.LevelDebug,
			fmt.Sprintf("Invalid argument %s: %s. Nothing was sent to the memsvc server; correct the argument and call again.", memory.Quote(arg.name), arg.msg)}

	case errors.As(err, &local):
		return failure{"local", slog.LevelWarn, local.msg}

	case errors.Is(err, context.Canceled):
		return failure{"cancelled", slog.LevelInfo,
			"The call was cancelled before the memsvc server answered; it may or may not have taken effect."}

	case errors.As(err, &down) && errors.Is(err, context.DeadlineExceeded):
		return failure{"timeout", slog.LevelWarn, fmt.Sprintf(
			"The memsvc server at %s did not answer within the time limit (--server-timeout-secs). "+
				"The call may or may not have taken effect: check (with recall, inspect or stats) before repeating a change. Retry later if the server is busy.",
			down.URL)}

	case errors.As(err, &down):
		return failure{"unreachable", slog.LevelWarn, fmt.Sprintf(
			"The memsvc server is unreachable at %s (%v). Start it with `memsvc serve` on that machine "+
				"(or correct --server-url in this MCP server's configuration), then call again. The MCP server keeps running and reconnects by itself.",
			down.URL, down.Err)}

	case errors.As(err, &exhausted) && errors.As(err, &me):
		f := p.describeServer(me)
		f.text = fmt.Sprintf("%s The MCP proxy already retried %d times over %s.", f.text, exhausted.Attempts-1, exhausted.Waited.Round(time.Second))
		return f

	case errors.As(err, &me):
		return p.describeServer(me)

	default:
		return failure{"internal", slog.LevelError,
			fmt.Sprintf("The memsvc MCP proxy failed: %v. This is a bug in the proxy; its log (stderr) has details.", err)}
	}
}

// describeServer maps an error the server answered with, by CMP code.
func (p *Proxy) describeServer(e *memory.Error) failure {
	msg := strings.TrimSuffix(e.Message, ".")
	if e.Code == memory.CodeContentTooLarge && strings.HasPrefix(msg, memory.AnswerTooLarge) {
		// The answer, not the input, was too large; the message says to
		// ask for less.
		return failure{"invalid_argument", slog.LevelDebug, fmt.Sprintf("The memsvc server refused to answer: %s.", msg)}
	}
	switch e.Code {
	case memory.CodeNotFound:
		return failure{"not_found", slog.LevelDebug, fmt.Sprintf(
			"Not found: %s. Check the record id; recall, recall_raw and timeline list the ids that exist.", msg)}

	case memory.CodeValidation, memory.CodeStoreInvalid, memory.CodeVersionMismatch:
		return failure{"invalid_argument", slog.LevelDebug, fmt.Sprintf(
			"The memsvc server rejected the request as invalid: %s. Correct the argument it names and call again.", msg)}

	case memory.CodeContentTooLarge:
		return failure{"invalid_argument", slog.LevelDebug, fmt.Sprintf(
			"Too large: %s. Shorten the content or split it into several memories.", msg)}

	case memory.CodeModalityUnsupported:
		return failure{"invalid_argument", slog.LevelDebug, fmt.Sprintf("Not supported by the memsvc server: %s.", msg)}

	case memory.CodeForgetUnconfirmed:
		return failure{"invalid_argument", slog.LevelDebug,
			"Nothing was deleted: forget needs confirm=true. Make sure the user wants the deletion, then call again with confirm=true."}

	case memory.CodeUnauthorized:
		what := "No API key is configured for this MCP server"
		if p.opts.APIKey != "" {
			what = "The API key configured for this MCP server was refused"
		}
		return failure{"unauthorized", slog.LevelWarn, fmt.Sprintf(
			"Unauthorized: the memsvc server at %s answered %q. %s: set MEMSVC_SERVER_API_KEY (or --server-api-key) in the MCP client's configuration "+
				"to one of the server's API keys (auth.api_keys), then restart the MCP server.",
			p.opts.ServerURL, msg, what)}

	case memory.CodeRateLimited:
		return failure{"rate_limited", slog.LevelWarn, fmt.Sprintf(
			"Rate limited by the memsvc server (%s). Retry after %d s.", msg, max(e.RetryAfter, 1))}

	case memory.CodeWorkingMemoryFull, memory.CodeDecayEngineBusy, memory.CodeConsolidationInProgress:
		return failure{"busy", slog.LevelWarn, fmt.Sprintf(
			"The memsvc server is busy (%s: %s). Retry after %d s.", e.Code, msg, max(e.RetryAfter, 1))}

	case memory.CodeForbidden:
		return failure{"forbidden", slog.LevelWarn, fmt.Sprintf(
			"Forbidden: %s. The API key configured for this MCP server (MEMSVC_SERVER_API_KEY) is not bound to this namespace: "+
				"set --namespace (MEMSVC_NAMESPACE) to one the key may use, or ask the server's operator to bind the key to it.", msg)}

	case memory.CodeInsufficientStorage:
		return failure{"insufficient_storage", slog.LevelWarn, fmt.Sprintf(
			"The memsvc server is low on disk space and refused to write: %s. Nothing was changed. "+
				"Reading (recall, inspect, stats, export) still works; the server's operator must free disk space before writes succeed again.", msg)}

	case memory.CodeExportFailed:
		return failure{"server_error", slog.LevelError, fmt.Sprintf(
			"The memsvc server could not build the archive: %s. The server's log has details; retry later.", msg)}

	case memory.CodeImportConflict:
		return failure{"conflict", slog.LevelWarn, fmt.Sprintf("Conflict: %s.", msg)}

	default: // INTERNAL_ERROR, or an answer that was not a memsvc error
		return failure{"server_error", slog.LevelError, fmt.Sprintf(
			"The memsvc server at %s failed: %s. The server's log has details; retry later.", p.opts.ServerURL, msg)}
	}
}
