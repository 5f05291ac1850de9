package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/memory"
)

// mcpTimeout bounds every wait on the proxy.
const mcpTimeout = 30 * time.Second

// lineProcess is a child process spoken to one line at a time: every line
// it writes to stdout arrives on lines (and is kept in stdout), and its
// stderr is kept for failure messages.
type lineProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // stdout, one line at a time, without the newline
	exited chan error

	mu     sync.Mutex
	stdout [][]byte           // every stdout line as written
	stderr testkit.SyncBuffer // the process's log
}

// startLines starts cmd. The process is killed when the test ends, unless
// it has exited by then.
func startLines(t testing.TB, cmd *exec.Cmd) *lineProcess {
	t.Helper()
	p := &lineProcess{cmd: cmd, lines: make(chan []byte, 64), exited: make(chan error, 1)}
	cmd.Stderr = &p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer close(p.lines)
		br := bufio.NewReader(out)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				p.mu.Lock()
				p.stdout = append(p.stdout, line)
				p.mu.Unlock()
				p.lines <- bytes.TrimRight(line, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		<-read // Wait closes the pipe: read everything first
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			go p.drain()
			<-p.exited
		}
	})
	return p
}

func (p *lineProcess) log() string { return p.stderr.String() }

// drain discards the rest of stdout, so that the process can finish.
func (p *lineProcess) drain() {
	for range p.lines {
	}
}

// next returns the next stdout line; the test fails when the process ends
// or says nothing within mcpTimeout.
func (p *lineProcess) next(t testing.TB, what string) []byte {
	t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			t.Fatalf("%s ended its output before %s:\n%s", filepath.Base(p.cmd.Path), what, p.log())
		}
		return line
	case <-time.After(mcpTimeout):
		t.Fatalf("no %s from %s within %v:\n%s", what, filepath.Base(p.cmd.Path), mcpTimeout, p.log())
	}
	return nil
}

// closeAndWait ends stdin and requires the process to exit with status 0
// within mcpTimeout.
func (p *lineProcess) closeAndWait(t testing.TB) {
	t.Helper()
	if err := p.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	go p.drain()
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("%s exit after stdin closed: %v\n%s", filepath.Base(p.cmd.Path), err, p.log())
		}
	case <-time.After(mcpTimeout):
		t.Fatalf("%s did not exit after stdin closed:\n%s", filepath.Base(p.cmd.Path), p.log())
	}
}

// mcpClient drives a memsvc-mcp process the way an MCP client does:
// newline-delimited JSON-RPC on its stdin, answers read from its stdout.
type mcpClient struct {
	*lineProcess
	t      testing.TB
	nextID int
	// schemas are the tools' output schemas (listTools); call checks
	// every successful answer against them.
	schemas map[string][]*jsonschema.Schema
}

// rpcMessage is any JSON-RPC 2.0 message the proxy may write.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// validRPC reports whether line is one JSON-RPC 2.0 message: a response
// (id and exactly one of result and error) or a request/notification.
func validRPC(line []byte) bool {
	var m rpcMessage
	if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
		return false
	}
	if m.Method != "" {
		return m.Result == nil && m.Error == nil
	}
	return len(m.ID) > 0 && (m.Result == nil) != (m.Error == nil)
}

// startMCP starts the built memsvc-mcp with args and a clean environment
// (plus env).
func startMCP(t testing.TB, env []string, args ...string) *mcpClient {
	t.Helper()
	return startMCPBinary(t, "memsvc-mcp", env, args...)
}

// startMCPBinary starts one of the built binaries as an MCP server.
func startMCPBinary(t testing.TB, bin string, env []string, args ...string) *mcpClient {
	t.Helper()
	return &mcpClient{lineProcess: startLines(t, binCmd(t, bin, env, args...)), t: t}
}

func (c *mcpClient) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write to memsvc-mcp: %v\n%s", err, c.log())
	}
}

// request sends a request and returns its answer.
func (c *mcpClient) request(method string, params any) rpcMessage {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.send(msg)
	deadline := time.After(mcpTimeout)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("memsvc-mcp closed stdout waiting for %s:\n%s", method, c.log())
			}
			if !validRPC(line) {
				c.t.Fatalf("stdout line is not a JSON-RPC message: %q", line)
			}
			var m rpcMessage
			_ = json.Unmarshal(line, &m)
			if string(m.ID) == strconv.Itoa(id) {
				return m
			}
		case <-deadline:
			c.t.Fatalf("no answer to %s within %v:\n%s", method, mcpTimeout, c.log())
		}
	}
}

func (c *mcpClient) notify(method string) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "method": method})
}

// initialize performs the MCP handshake and returns the initialize result.
func (c *mcpClient) initialize() map[string]any {
	c.t.Helper()
	ans := c.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
	})
	if ans.Error != nil {
		c.t.Fatalf("initialize: %+v", ans.Error)
	}
	var res map[string]any
	if err := json.Unmarshal(ans.Result, &res); err != nil {
		c.t.Fatal(err)
	}
	c.notify("notifications/initialized")
	return res
}

// call runs a tool and returns the result text and whether it is an error
// result. Tool failures must be results, never JSON-RPC errors.
func (c *mcpClient) call(tool string, args map[string]any) (string, bool) {
	c.t.Helper()
	ans := c.request("tools/call", map[string]any{"name": tool, "arguments": args})
	if ans.Error != nil {
		c.t.Fatalf("%s: JSON-RPC error %+v instead of a tool result", tool, ans.Error)
	}
	var res struct {
		Content           []struct{ Type, Text string }
		StructuredContent json.RawMessage
		IsError           bool
	}
	if err := json.Unmarshal(ans.Result, &res); err != nil || len(res.Content) != 1 || res.Content[0].Type != "text" {
		c.t.Fatalf("%s: result %s (%v)", tool, ans.Result, err)
	}
	if !res.IsError && c.schemas != nil {
		checkStructured(c.t, c.schemas, tool, res.StructuredContent, res.Content[0].Text)
	}
	return res.Content[0].Text, res.IsError
}

// listTools returns the tools/list answer's tools and makes call check
// every later answer against their output schemas.
func (c *mcpClient) listTools() []map[string]any {
	c.t.Helper()
	ans := c.request("tools/list", nil)
	var list struct{ Tools []map[string]any }
	if ans.Error != nil || json.Unmarshal(ans.Result, &list) != nil {
		c.t.Fatalf("tools/list: %s %+v", ans.Result, ans.Error)
	}
	c.schemas = outputSchemas(c.t, list.Tools)
	return list.Tools
}

// ok runs a tool that must succeed and returns its text.
func (c *mcpClient) ok(tool string, args map[string]any, want ...string) string {
	c.t.Helper()
	text, isErr := c.call(tool, args)
	if isErr {
		c.t.Fatalf("%s %v failed: %s", tool, args, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			c.t.Fatalf("%s %v: result lacks %q:\n%s", tool, args, w, text)
		}
	}
	return text
}

// fails runs a tool that must fail with an error result containing want.
func (c *mcpClient) fails(tool string, args map[string]any, want ...string) string {
	c.t.Helper()
	text, isErr := c.call(tool, args)
	if !isErr {
		c.t.Fatalf("%s %v succeeded, want an error: %s", tool, args, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			c.t.Fatalf("%s %v: error lacks %q:\n%s", tool, args, w, text)
		}
	}
	return text
}

// close ends stdin and requires exit code 0 and a stdout that held nothing
// but JSON-RPC messages.
func (c *mcpClient) close() {
	c.t.Helper()
	c.closeAndWait(c.t)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.stdout) == 0 {
		c.t.Fatal("memsvc-mcp wrote nothing to stdout")
	}
	for _, line := range c.stdout {
		if !bytes.HasSuffix(line, []byte("\n")) || !validRPC(bytes.TrimSuffix(line, []byte("\n"))) {
			c.t.Fatalf("stdout held something other than a JSON-RPC message: %q", line)
		}
	}
}

func recordID(t testing.TB, text string) string {
	t.Helper()
	var r memory.EncodeStoreResponse
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("not an encode result: %v\n%s", err, text)
	}
	return r.RecordID.String()
}

// TestMCPEndToEnd runs memsvc serve and the built memsvc-mcp as Claude Code
// or Codex would, and calls every tool with valid and invalid arguments.
func TestMCPEndToEnd(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	out := t.TempDir()
	c := startMCP(t, nil, "--server-url", srv.url(""), "--export-dir", out)

	init := c.initialize()
	info, _ := init["serverInfo"].(map[string]any)
	if info["name"] != "memsvc" || init["protocolVersion"] != "2025-06-18" || !strings.Contains(fmt.Sprint(init["instructions"]), "meta_json") {
		t.Fatalf("initialize: %v", init)
	}
	var names []string
	for _, tl := range c.listTools() {
		names = append(names, tl["name"].(string))
	}
	want := []string{"associate", "batch_store", "batch_store_raw", "consolidate", "dream_tick", "export", "forget",
		"inspect", "recall", "recall_raw", "stats", "store", "store_raw", "timeline", "update"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	// Being connected records nothing.
	var s memory.Stats
	if code := call(t, "GET", srv.url("/v1/introspect/stats"), nil, &s); code != 200 || s.TotalRecords != 0 || s.RawJournalRecords != 0 {
		t.Fatalf("stats after connecting: %d %+v", code, s)
	}

	missing := "0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f"

	// The older argument forms keep working here: comma-separated lists,
	// JSON text in strings, records_json. TestMCPGoSDK and
	// TestMCPTypeScriptSDK send arrays and objects.

	// store
	id := recordID(t, c.ok("store", map[string]any{"content": "the deploy key rotates on Fridays", "store": "semantic", "emotion": "trust",
		"meta_json": `{"intent":"remember the rotation","tags":["ops"]}`}, `"store":"semantic"`))
	c.fails("store", map[string]any{}, `Invalid argument "content": required`)
	c.fails("store", map[string]any{"content": "x", "store": "facts"}, `"store": "facts" is not accepted; use one of: episodic, semantic, procedural, emotional, working`)

	// store_raw
	c.ok("store_raw", map[string]any{"content": "user: when do keys rotate?", "session_id": "s1", "topic_id": "keys"}, `"session_id":"s1"`, `"secrecy_level":"public"`)
	c.fails("store_raw", map[string]any{"content": "x"}, `"session_id": required`)

	// batch_store: sequential links between the records
	text := c.ok("batch_store", map[string]any{"records_json": `[{"content":"release step one: build"},{"content":"release step two: deploy","store":"procedural"}]`}, `"associations_inferred":2`)
	var batch memory.EncodeBatchResponse
	if err := json.Unmarshal([]byte(text), &batch); err != nil || len(batch.Results) != 2 {
		t.Fatalf("batch_store: %v %s", err, text)
	}
	c.fails("batch_store", map[string]any{"records_json": "build, deploy"}, `"records_json": not a JSON array`)

	// batch_store_raw
	c.ok("batch_store_raw", map[string]any{"records_json": `[{"content":"assistant: every Friday","session_id":"s1","speaker":"assistant","topic_id":"keys"}]`}, `"results"`)
	c.fails("batch_store_raw", map[string]any{"records_json": `[{"content":"x"}]`}, `"records_json[0].session_id": required`)

	// update
	c.ok("update", map[string]any{"record_id": id, "content": "the deploy key rotates every Friday"}, `{"record_id":"`+id+`","updated":["content"]}`)
	c.fails("update", map[string]any{"record_id": id}, "nothing to update")
	c.fails("update", map[string]any{"record_id": missing, "emotion": "joy"}, "Not found: record not found: "+missing)

	// recall, with and without a query
	c.ok("recall", map[string]any{"query": "deploy key rotation", "stores": "semantic, episodic"}, `"text":"the deploy key rotates every Friday"`, `"record_id":"`+id+`"`)
	recent := c.ok("recall", map[string]any{"limit": 10, "reconsolidate": false})
	var flat struct{ Memories []map[string]any }
	if err := json.Unmarshal([]byte(recent), &flat); err != nil || len(flat.Memories) != 3 {
		t.Fatalf("recall without a query: %v %s", err, recent)
	}
	c.fails("recall", map[string]any{"limit": 0}, `"limit": must be between 1 and 1000`)

	// recall_raw
	c.ok("recall_raw", map[string]any{"session_id": "s1", "secrecy_levels": "public,sensitive"}, `"text":"user: when do keys rotate?"`, `"text":"assistant: every Friday"`, `"total_candidates":2`)
	c.fails("recall_raw", map[string]any{"start": "last week", "end": "now"}, "is not an RFC 3339 time")

	// timeline
	c.ok("timeline", map[string]any{"granularity": "day"}, `"text":"the deploy key rotates every Friday"`)
	c.fails("timeline", map[string]any{"granularity": "year"}, `"granularity": "year" is not accepted`)

	// associate: the batch linked its two records
	c.ok("associate", map[string]any{"record_id": batch.Results[0].RecordID.String()}, `"id":"`+batch.Results[1].RecordID.String()+`"`)
	c.fails("associate", map[string]any{"record_id": "step-one"}, `"record_id": "step-one" is not a record id`)

	// inspect
	c.ok("inspect", map[string]any{"record_id": id}, `"text":"the deploy key rotates every Friday"`, `"version":2`, `"intent":"remember the rotation"`)
	c.fails("inspect", map[string]any{"record_id": missing}, "Not found")

	// dream_tick, consolidate, stats
	c.ok("dream_tick", map[string]any{"session_id": "s1"}, `"raw_records_processed"`)
	c.fails("dream_tick", map[string]any{"max_groups": 0}, `"max_groups": must be between 1 and 1000`)
	c.ok("consolidate", map[string]any{"strategy": "full", "dry_run": true}, `"records_processed"`)
	c.fails("consolidate", map[string]any{"strategy": "all"}, `"strategy": "all" is not accepted`)
	c.ok("stats", map[string]any{}, `"raw_journal_records":2`)
	c.fails("stats", map[string]any{"verbose": true}, `"verbose": unknown argument`)

	// export to a new file in the export directory, never over an
	// existing one, never elsewhere
	archive := filepath.Join(out, "backup.cma")
	text = c.ok("export", map[string]any{"output_path": "backup.cma"}, `"path":"`+archive+`"`, `"record_count":`)
	st, err := os.Stat(archive)
	if err != nil || st.Mode().Perm() != 0o600 || !strings.Contains(text, fmt.Sprintf(`"size_bytes":%d,`, st.Size())) {
		t.Fatalf("archive %v %v:\n%s", st, err, text)
	}
	c.fails("export", map[string]any{"output_path": archive}, "already exists in the export directory "+out+"; export never overwrites")
	c.fails("export", map[string]any{"output_path": out + "/../x.cma"}, "is outside the export directory "+out)
	c.fails("export", map[string]any{"output_path": filepath.Join(t.TempDir(), "x.cma")}, "is outside the export directory "+out)

	// forget, confirmation first
	c.fails("forget", map[string]any{"record_ids": id, "confirm": false}, "nothing was deleted")
	c.ok("forget", map[string]any{"record_ids": id + ", " + missing, "confirm": true}, `{"records_deleted":1}`)
	c.fails("inspect", map[string]any{"record_id": id}, "Not found")

	// An unknown tool is a protocol error, still a JSON-RPC message.
	if ans := c.request("tools/call", map[string]any{"name": "remember", "arguments": map[string]any{}}); ans.Error == nil || ans.Error.Code != -32602 {
		t.Fatalf("unknown tool: %+v", ans)
	}

	c.close()
	if !strings.Contains(c.log(), "MCP proxy serving on stdio") {
		t.Errorf("no startup log on stderr:\n%s", c.log())
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// TestMCPServerRestart stops the server in the middle of a session: the
// next call says it is unreachable; after a restart on the same data
// directory and port, calls work again without restarting the proxy.
func TestMCPServerRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	_, port, err := net.SplitHostPort(srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	c := startMCP(t, nil, "--server-url", srv.url(""), "--server-timeout-secs", "20")
	c.initialize()
	id := recordID(t, c.ok("store", map[string]any{"content": "written before the restart"}))

	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	c.fails("recall", map[string]any{"query": "restart"}, "The memsvc server is unreachable at "+srv.url(""), "memsvc serve")

	srv = startCmd(t, binCmd(t, "memsvc", nil, "serve", "--data-dir", dir, "--port", port))
	c.ok("recall", map[string]any{"query": "restart"}, `"record_id":"`+id+`"`, "written before the restart")

	c.close()
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// TestMCPUsage: both front ends refuse to start without --server-url.
func TestMCPUsage(t *testing.T) {
	tests := []struct {
		bin  string
		args []string
	}{
		{"memsvc-mcp", nil},
		{"memsvc", []string{"mcp"}},
		{"memsvc-mcp", []string{"--server-url", "localhost:8420"}},
	}
	for _, tc := range tests {
		r := runBin(t, 30*time.Second, nil, tc.bin, tc.args...)
		if r.code != 2 || r.stdout != "" || !regexp.MustCompile(`--server-url|http:// or https://`).MatchString(r.stderr) {
			t.Errorf("%s %v: exit %d, stdout %q, stderr %q", tc.bin, tc.args, r.code, r.stdout, r.stderr)
		}
	}
}

// snippet is one documented way to start the proxy.
type snippet struct {
	where   string
	command string
	args    []string
	env     map[string]string
}

var (
	fenceRE    = regexp.MustCompile("(?s)```(json|toml|sh)\n(.*?)```")
	tomlCmdRE  = regexp.MustCompile(`(?m)^command = "([^"]+)"$`)
	tomlArgsRE = regexp.MustCompile(`(?m)^args = (\[.*\])$`)
	tomlEnvRE  = regexp.MustCompile(`(?m)^env = \{ (\w+) = "([^"]*)" \}$`)
)

// docSnippets extracts the MCP client configurations of a document: JSON
// mcpServers entries, Codex TOML tables and `claude|codex mcp add` lines.
func docSnippets(t *testing.T, path, section string) []snippet {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, name := string(b), filepath.Base(path)
	if section != "" {
		i := strings.Index(doc, section)
		if i < 0 {
			t.Fatalf("%s: no section %q", path, section)
		}
		doc = doc[i:]
		if j := strings.Index(doc[len(section):], "\n## "); j >= 0 {
			doc = doc[:len(section)+j]
		}
	}
	var out []snippet
	for _, m := range fenceRE.FindAllStringSubmatch(doc, -1) {
		lang, body := m[1], m[2]
		switch {
		case lang == "json" && strings.Contains(body, "mcpServers"):
			var cfg struct {
				MCPServers map[string]struct {
					Command string            `json:"command"`
					Args    []string          `json:"args"`
					Env     map[string]string `json:"env"`
				} `json:"mcpServers"`
			}
			if err := json.Unmarshal([]byte(body), &cfg); err != nil {
				t.Fatalf("%s: JSON snippet does not parse: %v\n%s", path, err, body)
			}
			e, ok := cfg.MCPServers["memsvc"]
			if !ok {
				t.Fatalf("%s: no memsvc entry in\n%s", path, body)
			}
			out = append(out, snippet{name + " json", e.Command, e.Args, e.Env})
		case lang == "toml" && strings.Contains(body, "[mcp_servers.memsvc]"):
			cmd, args := tomlCmdRE.FindStringSubmatch(body), tomlArgsRE.FindStringSubmatch(body)
			if cmd == nil || args == nil {
				t.Fatalf("%s: TOML snippet without command or args:\n%s", path, body)
			}
			sn := snippet{where: name + " toml", command: cmd[1], env: map[string]string{}}
			if err := json.Unmarshal([]byte(args[1]), &sn.args); err != nil {
				t.Fatalf("%s: TOML args %s: %v", path, args[1], err)
			}
			if env := tomlEnvRE.FindStringSubmatch(body); env != nil {
				sn.env[env[1]] = env[2]
			}
			out = append(out, sn)
		case lang == "sh":
			for _, line := range strings.Split(body, "\n") {
				if !strings.HasPrefix(line, "claude mcp add ") && !strings.HasPrefix(line, "codex mcp add ") {
					continue
				}
				before, after, ok := strings.Cut(line, " -- ")
				if !ok {
					t.Fatalf("%s: no -- in %q", path, line)
				}
				sn := snippet{where: name + " " + strings.Fields(line)[0], env: map[string]string{}}
				f := strings.Fields(after)
				sn.command, sn.args = f[0], f[1:]
				bf := strings.Fields(before)
				for i, w := range bf {
					if (w == "-e" || w == "--env") && i+1 < len(bf) {
						k, v, _ := strings.Cut(bf[i+1], "=")
						sn.env[k] = v
					}
				}
				out = append(out, sn)
			}
		}
	}
	return out
}

// TestMCPDocSnippets starts the proxy exactly as every documented client
// configuration does (with the server URL swapped for a test server's) and
// makes a tool call through it.
func TestMCPDocSnippets(t *testing.T) {
	srv := startServer(t, t.TempDir())
	readme := docSnippets(t, "../README.md", "## MCP clients")
	guide := docSnippets(t, "../deploy-docs/mcp-clients.md", "")
	if len(readme) != 4 || len(guide) != 6 {
		t.Fatalf("found %d snippets in the README and %d in deploy-docs/mcp-clients.md, want 4 and 6", len(readme), len(guide))
	}
	for _, sn := range append(readme, guide...) {
		t.Run(sn.where, func(t *testing.T) {
			bin := filepath.Base(sn.command)
			if bin != "memsvc-mcp" && bin != "memsvc" {
				t.Fatalf("command %q", sn.command)
			}
			args := slices.Clone(sn.args)
			i := slices.Index(args, "--server-url")
			if i < 0 || i+1 >= len(args) || args[i+1] != "http://127.0.0.1:8420" {
				t.Fatalf("args %q: want --server-url http://127.0.0.1:8420", args)
			}
			args[i+1] = srv.url("")
			var env []string
			for k, v := range sn.env {
				if k != "MEMSVC_SERVER_API_KEY" {
					t.Fatalf("env %s: only MEMSVC_SERVER_API_KEY is documented", k)
				}
				if strings.HasPrefix(v, "${") {
					v = "expanded-by-the-client"
				}
				env = append(env, k+"="+v)
			}
			var c *mcpClient
			if bin == "memsvc" {
				c = startMCPBinary(t, "memsvc", env, args...)
			} else {
				c = startMCP(t, env, args...)
			}
			c.initialize()
			c.ok("stats", map[string]any{}, `"total_records"`)
			c.close()
		})
	}
}

// BenchmarkMCPRoundTrip measures one tool call through memsvc-mcp:
// JSON-RPC over the pipes, HTTP to memsvc serve, and back.
func BenchmarkMCPRoundTrip(b *testing.B) {
	addr := serveForBenchmark(b, b.TempDir())
	c := startMCP(b, nil, "--server-url", "http://"+addr)
	c.initialize()
	for i := range 1000 {
		c.ok("store", map[string]any{"content": fmt.Sprintf("note %d about deploy keys, caches and release steps", i)})
	}
	b.Run("store", func(b *testing.B) {
		c.t = b
		for i := 0; b.Loop(); i++ {
			c.ok("store", map[string]any{"content": fmt.Sprint("benchmark note ", i)})
		}
	})
	b.Run("recall", func(b *testing.B) {
		c.t = b
		for b.Loop() {
			c.ok("recall", map[string]any{"query": "deploy keys", "reconsolidate": false})
		}
	})
	c.t = b
	c.close()
}

// serveForBenchmark runs memsvc serve on a free port and returns its
// address; the server is killed when the benchmark ends.
func serveForBenchmark(tb testing.TB, dir string) string {
	tb.Helper()
	// No rate limit: the benchmark measures latency, not the limiter.
	return startCmd(tb, binCmd(tb, "memsvc", []string{"MEMSVC_RATE_LIMIT__REQUESTS_PER_SECOND=1000000", "MEMSVC_RATE_LIMIT__BURST=1000000"},
		"serve", "--data-dir", dir, "--port", "0")).addr
}
