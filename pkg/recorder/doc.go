// Package recorder is the capture pipeline of memsvc-recorder: it reads
// Capture Events (or coding-agent hook payloads), validates and redacts
// them, drops duplicates, batches them to POST /v1/encode/raw/batch and
// spools what cannot be sent (pkg/spool). It never links the storage
// engine; the server is reached through pkg/client.
//
// # Pipeline
//
// Ingest first sends pending spool files, then reads input lines with a
// LineReader: a line over the limit (256 KiB, surrounding white space
// included, terminator excluded) is rejected before it is parsed and
// without ever being held in memory whole; white-space-only lines are
// size-checked, then skipped. A rejected line is logged with its number,
// counted, and skipped: the lines around it go through, and the run ends
// with an error. The error names the field and what was wanted but never
// quotes the offending value, only its length: a field may hold a secret
// where a valid value was expected. Each valid event becomes one raw request (below), is
// checked against the recent identities, and joins the current batch. A
// batch is sent when it holds Config.MaxBatchRecords events (50) or would
// pass Config.MaxBatchBytes (8 MiB of estimated JSON; content bytes travel
// as integer arrays, so this keeps requests far below the server's 64 MiB
// body limit), on every Config.FlushInterval tick (1 s) and at the end of
// the input. Record runs events built in code (the hook) through the same
// steps.
//
// # Capture Event to raw request
//
//	record_id      a fresh client-generated UUIDv7 per event; the server
//	               skips an id it already has, so a replayed or retried
//	               batch never duplicates an entry
//	session_id     trimmed, redacted
//	turn_id        trimmed, redacted; null when absent
//	topic_id       trimmed, redacted; null when absent
//	source         by event type: user_message and assistant_message ->
//	               conversation; session_summary -> summary; tool_call,
//	               tool_result, command, file_change, error -> tool_io
//	speaker        the event's speaker, else by type: user_message -> user,
//	               assistant_message -> assistant, tool_call, tool_result,
//	               command -> tool, file_change, error, session_summary ->
//	               system
//	visibility     the event's, default normal
//	secrecy_level  the event's, default sensitive
//	content        one text/plain block: a string content as is, any other
//	               JSON value as written (member order and spacing kept)
//	               after structural redaction (redact.JSON: the value of a
//	               secret key is replaced whatever its type); then
//	               redact.Text over the whole text
//	metadata       {"recorder":"memsvc-recorder", "event_type":...,
//	               "action_id":..., "capture_source": the event's source,
//	               "observed_at": the timestamp in UTC RFC 3339,
//	               "recorder_cwd":..., "capture_metadata": the event's
//	               metadata after redact.JSON}; absent keys are left out;
//	               action_id, capture_source and recorder_cwd are redacted
//	meta           the event's meta-memory, redacted structurally (as
//	               JSON, then parsed back), or null; never invented
//
// Everything is redacted before it is sent and before it is spooled;
// spooled records are redacted again when they are replayed (redaction is
// idempotent, and an older recorder may have written them).
//
// # Duplicates
//
// An event is a duplicate when it carries an explicit identity — a turn_id,
// an action_id or a timestamp — and its session, event type, turn id,
// action id, timestamp (in UTC), capture source and content text (all as
// redacted) equal those of one of the 512 most recent identified events.
// Visibility, secrecy, topic and metadata are not part of the identity;
// events without an identity are never dropped. The identity is kept as a
// 16-byte SHA-256 prefix over the length-prefixed fields.
//
// Events that carry their own record id (transcript capture, below) skip
// this check: the server drops an id it has already stored, which is exact.
//
// Hooks start one recorder process per event, so a window in memory alone
// would never see a repeat. The spool directory therefore holds
// "recent-events": a header line and the hex identities of the 512 most
// recent identified events, oldest first. Before a batch is delivered, the
// recorder takes the file's lock ("recent-events.lock", flock), reads it,
// drops the batch's events whose identity is already there, appends the
// others and rewrites it atomically. Only hashes are stored, never text. The
// file is a cache: a missing or unreadable one starts empty, and a lock
// that cannot be had within 2 s skips the cross-process check (the
// in-process window still applies).
//
// # Failures
//
//	network error, timeout,       spool the batch, keep going, exit 0; wait
//	408, 429, 5xx                 (Retry-After, else 1 s doubling to 30 s)
//	                              before trying the server again, spooling
//	                              meanwhile; after the next success the spool
//	                              is flushed again
//	401, 403                      spool, stop sending (the rest is spooled),
//	                              exit 1
//	400, 413, 422                 the batch is re-sent record by record; the
//	                              records the server refuses are kept in a
//	                              quarantined spool file; exit 1
//	anything else (404, redirect, spool, stop sending, exit 1: probably the
//	unexpected answer)            wrong URL
//	the spool cannot be written   the records are lost: logged, exit 1
//
// Flushing the spool takes the "flush" lock of the spool directory; a
// recorder that finds it held skips the flush, so concurrent hooks do not
// send the same files. Files are sent oldest first, in chunks of the batch
// bounds; after each chunk the file is rewritten with what is left (or
// removed). A malformed file — or one whose records are not raw requests
// with record ids — is quarantined as *.bad-<uuid> and the flush goes on.
// The first retryable failure ends the flush (the files wait for the next
// run) without delaying the new input, which gets its own attempt: a
// spooled batch the server keeps failing on cannot hold back what is
// recorded after it. An authentication failure stops sending for the run,
// and the new input is then spooled instead of being dropped.
//
// # Hooks
//
// HookEvents maps Claude Code and Codex hook payloads (and the Codex notify
// program's argument) to Capture Events; see its comment for the table.
// InstallHook writes the helper script and example configuration from the
// templates in the repository's hooks/ directory. Doctor runs the four
// checks of `memsvc-recorder doctor`.
//
// Events keep their order. The helper queues each event in the foreground
// (a Recorder without a Sender spools every batch: a local write, never the
// network) and sends the spool in the background (FlushSpoolWait). The
// agent fires a hook only after the previous one returned, so the spool
// holds the events in firing order, and spool names sort in write order
// across processes (pkg/spool). One flusher at a time sends the spool
// oldest first, picking up files queued meanwhile and stopping at the first
// failure, so no event overtakes an earlier one.
//
// # Transcripts
//
// TranscriptWatcher follows the session transcripts the agents write
// (Claude Code: ~/.claude/projects/<project>/<session>.jsonl; Codex:
// ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl) and records
// what no hook delivers:
//
//	Claude Code  "type":"assistant" lines: each text block an
//	             assistant_message, each tool_use block a tool_call
//	             (action_id: the tool_use id); Claude Code's own API error
//	             notes an error event; thinking is left out
//	Codex        response items: an assistant message an
//	             assistant_message (its output_text parts joined), a
//	             function_call, custom_tool_call, local_shell_call or
//	             web_search_call a tool_call (action_id: the call id; turn_id
//	             from the turn_context line before it); reasoning is left out
//
// Both are spoken by the assistant; capture_metadata says "origin":
// "transcript" and carries the transcript path, the model, the message id
// and entry uuid (Claude Code) or the phase (Codex), and the tool name and
// call id, so that a hook's tool_result (action_id: the same id) joins its
// call. User prompts and tool results come from the hooks.
//
// Every transcript event's record id is derived from its line (the entry
// uuid for Claude Code, the line's SHA-256 for Codex, the block's index): a
// version 7 UUID carrying the line's time. Reading a line twice therefore
// stores nothing twice, which makes the offsets safe to save after the
// batch is sent or spooled: a crash in between reads the lines again.
// Offsets live in the spool directory in "transcript-offsets" (JSON: per
// file its agent, device, inode, the SHA-256 of its first bytes up to 1
// KiB, the offset, the modification time when it was read that far, and
// the parser's context), replaced atomically and durably after every
// batch. A rescan opens only files whose size, inode or modification time
// moved; a file whose first bytes changed is read from the start even when
// its size did not.
package recorder
