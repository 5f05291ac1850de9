package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/engine/textindex"
)

const (
	mcpCallTimeout    = 30 * time.Second
	npmInstallTimeout = 5 * time.Minute
)

// mcpReport is the MCP stdio comparison: the same workload against
// memsvc-mcp and the npm peer.
type mcpReport struct {
	Notes    int          `json:"notes"`
	Searches int          `json:"searches"`
	Servers  []*mcpResult `json:"servers"`
	// PeerSkipped says why the peer did not run, when it did not.
	PeerSkipped string `json:"peer_skipped,omitempty"`
	// StoreRatio and SearchRatio are memsvc-mcp's throughput divided by
	// the peer's.
	StoreRatio  float64 `json:"store_ratio,omitempty"`
	SearchRatio float64 `json:"search_ratio,omitempty"`
}

// mcpResult is one MCP server's run of the workload.
type mcpResult struct {
	Name      string  `json:"name"`    // as the driver calls it
	Server    string  `json:"server"`  // serverInfo from initialize
	Version   string  `json:"version"` // of the npm package or serverInfo
	StartupMs float64 `json:"startup_ms"`
	Store     row     `json:"store"`
	Search    row     `json:"search"`
	HitRate   float64 `json:"hit_rate"`       // searches with at least one result
	Results   float64 `json:"mean_results"`   // results per search
	ResultKiB float64 `json:"mean_reply_kib"` // size of a search answer's text
}

// mcpTarget says how the workload speaks to one server.
type mcpTarget struct {
	name       string
	storeTool  string
	searchTool string
	storeArgs  func(i int, text string) map[string]any
	// batchTool stores several notes in one call (the targets run loads
	// its notes with it); batchArgs are its arguments for texts, the
	// first of them note number first.
	batchTool   string
	batchArgs   func(first int, texts []string) map[string]any
	searchArgs  func(query string) map[string]any
	resultCount func(text string) (int, error)
}

func memsvcTarget() mcpTarget {
	return mcpTarget{
		name: "memsvc-mcp", storeTool: "store", searchTool: "recall",
		storeArgs: func(_ int, text string) map[string]any { return map[string]any{"content": text} },
		batchTool: "batch_store",
		batchArgs: func(_ int, texts []string) map[string]any {
			recs := make([]map[string]any, len(texts))
			for i, t := range texts {
				recs[i] = map[string]any{"content": t}
			}
			return map[string]any{"records": recs}
		},
		searchArgs: func(q string) map[string]any { return map[string]any{"query": q, "limit": 10} },
		resultCount: func(text string) (int, error) {
			var v struct {
				Memories []json.RawMessage `json:"memories"`
			}
			err := json.Unmarshal([]byte(text), &v)
			return len(v.Memories), err
		},
	}
}

func peerTarget() mcpTarget {
	return mcpTarget{
		name: "server-memory", storeTool: "create_entities", searchTool: "search_nodes",
		storeArgs: func(i int, text string) map[string]any {
			return map[string]any{"entities": []map[string]any{peerEntity(i, text)}}
		},
		batchTool: "create_entities",
		batchArgs: func(first int, texts []string) map[string]any {
			ents := make([]map[string]any, len(texts))
			for i, t := range texts {
				ents[i] = peerEntity(first+i, t)
			}
			return map[string]any{"entities": ents}
		},
		searchArgs: func(q string) map[string]any { return map[string]any{"query": q} },
		resultCount: func(text string) (int, error) {
			var v struct {
				Entities []json.RawMessage `json:"entities"`
			}
			err := json.Unmarshal([]byte(text), &v)
			return len(v.Entities), err
		},
	}
}

// peerEntity is note i as an entity of the peer's knowledge graph.
func peerEntity(i int, text string) map[string]any {
	return map[string]any{"name": fmt.Sprintf("note-%06d", i), "entityType": "note", "observations": []string{text}}
}

// runMCP runs the workload against memsvc-mcp (over a fresh server) and
// against the npm peer.
func (b *bench) runMCP(ctx context.Context) error {
	rep := &mcpReport{Notes: b.cfg.mcpNotes, Searches: b.cfg.mcpSearches}
	b.result.MCP = rep
	docs := textindex.NewCorpusGen(b.cfg.seed + 2)
	notes := make([]string, rep.Notes)
	for i := range notes {
		notes[i] = docs.Document()
	}
	// One word per search: the peer matches the query as one substring,
	// so longer queries would find nothing there.
	words := textindex.NewCorpusGen(b.cfg.seed + 3)
	searches := make([]string, rep.Searches)
	for i := range searches {
		searches[i] = words.Query(1)
	}

	res, err := b.mcpMemsvc(ctx, notes, searches)
	if err != nil {
		return fmt.Errorf("memsvc-mcp: %w", err)
	}
	rep.Servers = append(rep.Servers, res)
	if b.cfg.skipPeer {
		rep.PeerSkipped = "skipped with --skip-peer"
		return nil
	}
	peer, err := b.mcpPeer(ctx, notes, searches)
	if err != nil {
		return fmt.Errorf("%s: %w", b.cfg.peerPackage, err)
	}
	if peer == nil {
		return nil // skipped, rep.PeerSkipped says why
	}
	rep.compare(res, peer)
	return nil
}

// compare adds the peer's run after ours and sets the throughput ratios,
// ours over the peer's (above 1 means memsvc-mcp is faster).
func (m *mcpReport) compare(ours, peer *mcpResult) {
	m.Servers = append(m.Servers, peer)
	m.StoreRatio = ours.Store.Throughput / peer.Store.Throughput
	m.SearchRatio = ours.Search.Throughput / peer.Search.Throughput
}

func (b *bench) mcpMemsvc(ctx context.Context, notes, searches []string) (*mcpResult, error) {
	b.logf("MCP: memsvc-mcp, %d notes and %d searches", len(notes), len(searches))
	dir, err := b.scratch("mcp")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	srv, err := startServer(ctx, b.kids, b.cfg.memsvcBin, filepath.Join(dir, "data"), dir)
	if err != nil {
		return nil, err
	}
	defer srv.kill()
	cmd := exec.Command(b.cfg.mcpBin, "--server-url", srv.url())
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	res, err := b.mcpWorkload(ctx, cmd, memsvcTarget(), notes, searches)
	if err != nil {
		return nil, err
	}
	return res, srv.stop()
}

// peerServer is the stdio MCP server memsvc-mcp is compared with: the
// command that starts it (not yet started), how the workload speaks to it,
// and the version to report.
type peerServer struct {
	cmd     *exec.Cmd
	target  mcpTarget
	version string // "" reports the serverInfo version from initialize
}

// peerStarter prepares the peer; dir is a scratch directory for its data,
// removed once the workload is done. A *skipError leaves the peer out of
// the comparison instead of failing the run.
type peerStarter func(ctx context.Context, dir string) (*peerServer, error)

// mcpPeer prepares the peer (b.peer, or the npm package by default) and
// runs the workload against it. It returns nil, with PeerSkipped set, when
// the peer cannot be had, such as when npm cannot reach the registry.
func (b *bench) mcpPeer(ctx context.Context, notes, searches []string) (*mcpResult, error) {
	start := b.peer
	if start == nil {
		start = b.npmPeer
	}
	dir, err := b.scratch("peer")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ps, err := start(ctx, dir)
	if err != nil {
		var skip *skipError
		if errors.As(err, &skip) {
			b.result.MCP.PeerSkipped = skip.Error()
			b.logf("MCP: %s", skip)
			return nil, nil
		}
		return nil, err
	}
	b.logf("MCP: %s %s, %d notes and %d searches", ps.target.name, ps.version, len(notes), len(searches))
	res, err := b.mcpWorkload(ctx, ps.cmd, ps.target, notes, searches)
	if err != nil {
		return nil, err
	}
	if ps.version != "" {
		res.Version = ps.version
	}
	return res, nil
}

// npmPeer is the default peer: --peer-package run with node, installed
// with npm under --peer-dir when missing, keeping its memory file in dir.
func (b *bench) npmPeer(ctx context.Context, dir string) (*peerServer, error) {
	entry, version, err := b.ensurePeer(ctx)
	if err != nil {
		return nil, err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("node is needed to run the peer: %w", err)
	}
	cmd := exec.Command(node, entry)
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "MEMORY_FILE_PATH=" + filepath.Join(dir, "memory.jsonl")}
	return &peerServer{cmd: cmd, target: peerTarget(), version: version}, nil
}

// skipError is a reason to leave the peer out of the comparison.
type skipError struct{ msg string }

func (e *skipError) Error() string { return e.msg }

// npmNetworkRE matches npm's complaints about a registry it cannot reach.
var npmNetworkRE = regexp.MustCompile(`(?i)\bE(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT|NETUNREACH|HOSTUNREACH)\b|network|fetch failed|request to \S+ failed`)

// ensurePeer installs the peer package under --peer-dir unless it is
// there, and returns the script to run with node and the package version.
func (b *bench) ensurePeer(ctx context.Context) (entry, version string, err error) {
	pkgDir := filepath.Join(b.cfg.peerDir, "node_modules", filepath.FromSlash(b.cfg.peerPackage))
	manifest := filepath.Join(pkgDir, "package.json")
	if _, err := os.Stat(manifest); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			return "", "", &skipError{fmt.Sprintf("%s not compared: npm is not installed, so the registry cannot be reached", b.cfg.peerPackage)}
		}
		if err := os.MkdirAll(b.cfg.peerDir, 0o755); err != nil {
			return "", "", fmt.Errorf("peer directory: %w", err)
		}
		b.logf("MCP: installing %s into %s with npm", b.cfg.peerPackage, b.cfg.peerDir)
		ictx, cancel := context.WithTimeout(ctx, npmInstallTimeout)
		defer cancel()
		cmd := exec.CommandContext(ictx, npm, "install", "--prefix", b.cfg.peerDir, "--no-audit", "--no-fund", "--loglevel", "error", b.cfg.peerPackage)
		cmd.SysProcAttr = childAttr()
		out, err := cmd.CombinedOutput()
		if err != nil {
			if ctx.Err() != nil {
				return "", "", ctx.Err()
			}
			if ictx.Err() != nil || npmNetworkRE.Match(out) {
				return "", "", &skipError{fmt.Sprintf("%s not compared: npm cannot reach the registry (%s)", b.cfg.peerPackage, lastLine(out, err))}
			}
			return "", "", fmt.Errorf("npm install: %w\n%s", err, out)
		}
	}
	data, err := os.ReadFile(manifest)
	if err != nil {
		return "", "", fmt.Errorf("peer package: %w", err)
	}
	var pkg struct {
		Version string          `json:"version"`
		Bin     json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", "", fmt.Errorf("peer package.json: %w", err)
	}
	// "bin" is a path or a map from command names to paths.
	var one string
	var many map[string]string
	switch {
	case json.Unmarshal(pkg.Bin, &one) == nil && one != "":
	case json.Unmarshal(pkg.Bin, &many) == nil && len(many) > 0:
		names := make([]string, 0, len(many))
		for k := range many {
			names = append(names, k)
		}
		slices.Sort(names)
		one = many[names[0]]
	default:
		return "", "", fmt.Errorf("peer package.json names no program in \"bin\"")
	}
	return filepath.Join(pkgDir, filepath.FromSlash(one)), pkg.Version, nil
}

func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}

// mcpWorkload starts cmd as an MCP stdio server, checks its tools, stores
// the notes one call each, then runs the searches.
func (b *bench) mcpWorkload(ctx context.Context, cmd *exec.Cmd, tg mcpTarget, notes, searches []string) (*mcpResult, error) {
	start := time.Now()
	conn, err := startRPC(b.kids, cmd)
	if err != nil {
		return nil, err
	}
	defer conn.close()
	res := &mcpResult{Name: tg.name}
	if res.Server, res.Version, err = conn.initialize(ctx); err != nil {
		return nil, err
	}
	res.StartupMs = ms(time.Since(start))
	if err := conn.requireTools(ctx, tg.storeTool, tg.searchTool); err != nil {
		return nil, err
	}
	t, err := timeOps(ctx, len(notes), mcpCallTimeout, func(ctx context.Context, i int) (int, error) {
		_, err := conn.tool(ctx, tg.storeTool, tg.storeArgs(i, notes[i]))
		return 1, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tg.storeTool, err)
	}
	res.Store = t.row("store ("+tg.storeTool+")", len(notes), "calls/s", "")
	if err := res.search(ctx, conn, tg, searches, len(notes)); err != nil {
		return nil, err
	}
	return res, nil
}

// search times the searches, one call each, and sets res.Search and the
// result statistics; notes is how many notes the server holds. A search
// is timed from writing the request to its answer decoded (the JSON-RPC
// message read once, the result's text in hand), which is what an MCP
// client does before it hands the text on; counting the results is the
// report's bookkeeping and happens after the timing.
func (res *mcpResult) search(ctx context.Context, conn *rpcConn, tg mcpTarget, searches []string, notes int) error {
	texts := make([]string, len(searches))
	t, err := timeOps(ctx, len(searches), mcpCallTimeout, func(ctx context.Context, i int) (int, error) {
		text, err := conn.tool(ctx, tg.searchTool, tg.searchArgs(searches[i]))
		texts[i] = text
		return 1, err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", tg.searchTool, err)
	}
	var hits, results, replyBytes int
	for _, text := range texts {
		k, err := tg.resultCount(text)
		if err != nil {
			return fmt.Errorf("read %s answer: %w", tg.searchTool, err)
		}
		results += k
		replyBytes += len(text)
		if k > 0 {
			hits++
		}
	}
	res.Search = t.row("search ("+tg.searchTool+")", notes, "calls/s", "")
	res.HitRate = float64(hits) / float64(len(searches))
	res.Results = float64(results) / float64(len(searches))
	res.ResultKiB = float64(replyBytes) / float64(len(searches)) / 1024
	return nil
}

// rpcConn speaks newline-delimited JSON-RPC 2.0 with a child process over
// its stdin and stdout, one request at a time.
type rpcConn struct {
	p     *process
	stdin io.WriteCloser
	lines chan []byte // stdout, one message per line; closed at EOF
	next  int
}

func startRPC(kids *children, cmd *exec.Cmd) (*rpcConn, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p, err := startProcess(kids, cmd, nil)
	if err != nil {
		return nil, err
	}
	c := &rpcConn{p: p, stdin: stdin, lines: make(chan []byte, 16)}
	go func() {
		defer close(c.lines)
		br := bufio.NewReaderSize(stdout, 1<<16)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case c.lines <- line:
				case <-p.exited:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return c, nil
}

// close ends stdin, which asks a stdio server to exit, and kills it if it
// has not within a few seconds.
func (c *rpcConn) close() {
	_ = c.stdin.Close()
	select {
	case <-c.p.exited:
	case <-time.After(5 * time.Second):
	}
	c.p.kill()
}

func (c *rpcConn) send(msg map[string]any) error {
	msg["jsonrpc"] = "2.0"
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := c.stdin.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("write to %s: %w\n%s", c.p.cmd.Path, err, c.p.tail)
	}
	return nil
}

// call sends a request and waits for its answer. Notifications are
// ignored; requests from the server are refused.
func (c *rpcConn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	res, err := rpcCall[json.RawMessage](ctx, c, method, params)
	if err != nil {
		return nil, err
	}
	return *res, nil
}

// rpcMessage is one message from the server, its result decoded as T.
type rpcMessage[T any] struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result *T              `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpcCall is call with the result decoded as T in the same pass as the
// rest of the message: each answer is read once, as an MCP client reads
// it.
func rpcCall[T any](ctx context.Context, c *rpcConn, method string, params any) (*T, error) {
	c.next++
	id := strconv.Itoa(c.next)
	msg := map[string]any{"id": c.next, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if err := c.send(msg); err != nil {
		return nil, err
	}
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				return nil, fmt.Errorf("%s closed stdout waiting for %s:\n%s", c.p.cmd.Path, method, c.p.tail)
			}
			var m rpcMessage[T]
			if err := json.Unmarshal(line, &m); err != nil {
				// Not a result of T's shape: another message (ignored as
				// below), or a malformed answer.
				var other rpcMessage[json.RawMessage]
				if json.Unmarshal(line, &other) != nil || (other.Method == "" && string(other.ID) == id) {
					return nil, fmt.Errorf("stdout line is not a JSON-RPC answer to %s (%v): %.200q", method, err, line)
				}
				m = rpcMessage[T]{ID: other.ID, Method: other.Method}
			}
			if m.Method != "" {
				if len(m.ID) > 0 && string(m.ID) != "null" {
					refuse := map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}}
					if err := c.send(refuse); err != nil {
						return nil, err
					}
				}
				continue
			}
			if string(m.ID) != id {
				continue
			}
			if m.Error != nil {
				return nil, fmt.Errorf("%s: JSON-RPC error %d: %s", method, m.Error.Code, m.Error.Message)
			}
			if m.Result == nil {
				return nil, fmt.Errorf("%s: answer without a result", method)
			}
			return m.Result, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("no answer to %s: %w\n%s", method, ctx.Err(), c.p.tail)
		}
	}
}

// initialize performs the MCP handshake and returns the server's name and
// version.
func (c *rpcConn) initialize(ctx context.Context) (name, version string, err error) {
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	res, err := c.call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "memsvc-bench", "version": "1"},
	})
	if err != nil {
		return "", "", err
	}
	var v struct {
		ServerInfo struct{ Name, Version string } `json:"serverInfo"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return "", "", fmt.Errorf("initialize result: %w", err)
	}
	return v.ServerInfo.Name, v.ServerInfo.Version, c.send(map[string]any{"method": "notifications/initialized"})
}

// requireTools fails unless tools/list offers every tool of want.
func (c *rpcConn) requireTools(ctx context.Context, want ...string) error {
	tools, err := c.tools(ctx)
	if err != nil {
		return err
	}
	for _, w := range want {
		if !slices.Contains(tools, w) {
			return fmt.Errorf("no tool %q; tools/list offers %s", w, strings.Join(tools, ", "))
		}
	}
	return nil
}

// tools returns the names tools/list offers.
func (c *rpcConn) tools(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	res, err := c.call(ctx, "tools/list", map[string]any{})
	if err != nil {
		return nil, err
	}
	var v struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return nil, fmt.Errorf("tools/list result: %w", err)
	}
	names := make([]string, len(v.Tools))
	for i, t := range v.Tools {
		names[i] = t.Name
	}
	return names, nil
}

// toolResult is the part of a tools/call result the driver reads.
type toolResult struct {
	Content []struct{ Type, Text string } `json:"content"`
	IsError bool                          `json:"isError"`
}

// tool calls a tool and returns the text of its result; an isError
// result is an error.
func (c *rpcConn) tool(ctx context.Context, name string, args map[string]any) (string, error) {
	v, err := rpcCall[toolResult](ctx, c, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", err
	}
	text := ""
	if len(v.Content) == 1 && v.Content[0].Type == "text" {
		text = v.Content[0].Text
	} else {
		var sb strings.Builder
		for _, c := range v.Content {
			if c.Type == "text" {
				sb.WriteString(c.Text)
			}
		}
		text = sb.String()
	}
	if v.IsError {
		return "", fmt.Errorf("%s failed: %s", name, text)
	}
	return text, nil
}

// markdown writes the MCP section of the report.
func (m *mcpReport) markdown(sb *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(sb, format, a...) }
	p("\n### MCP stdio workload\n\n")
	p("One client, one call at a time over stdin/stdout: store %s notes (one call each), then %s one-word searches. "+
		"memsvc-mcp talks to a fresh memsvc server over loopback HTTP; every store is synced to disk. "+
		"server-memory keeps a JSONL file that it reads whole on every call and rewrites whole on every store (no fsync).\n\n",
		group(m.Notes), group(m.Searches))
	p("| Server | Version | Start-up ms | Operation | Calls | p50 ms | p95 ms | p99 ms | Throughput | Search results |\n")
	p("|---|---|---:|---|---:|---:|---:|---:|---:|---|\n")
	for _, s := range m.Servers {
		for _, r := range []row{s.Store, s.Search} {
			res := ""
			if r.Operation == s.Search.Operation {
				res = fmt.Sprintf("%.0f%% of searches found something; %.1f results, %.1f KiB per answer", 100*s.HitRate, s.Results, s.ResultKiB)
			}
			p("| %s | %s | %s | %s | %d | %s | %s | %s | %s | %s |\n", s.Name, s.Version, msf(s.StartupMs), r.Operation, r.Ops,
				msf(r.P50ms), msf(r.P95ms), msf(r.P99ms), rate(r.Throughput, r.Unit), res)
		}
	}
	if m.PeerSkipped != "" {
		p("\nThe peer did not run: %s.\n", m.PeerSkipped)
	}
	if len(m.Servers) == 2 {
		a, b := m.Servers[0], m.Servers[1]
		p("\nRatio %s / %s: store throughput %.2f× (p50 %s ms vs %s ms), search throughput %.2f× (p50 %s ms vs %s ms).\n",
			a.Name, b.Name, m.StoreRatio, msf(a.Store.P50ms), msf(b.Store.P50ms), m.SearchRatio, msf(a.Search.P50ms), msf(b.Search.P50ms))
	}
}
