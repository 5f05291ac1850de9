// Package mcpproxy is memsvc's MCP server: it speaks the Model Context
// Protocol (JSON-RPC 2.0, one message per line) on stdin and stdout and
// serves fifteen tools by calling a memory.Service, in practice pkg/client
// talking HTTP to a running `memsvc serve`. The memsvc-mcp binary and the
// `memsvc mcp` subcommand both run it.
//
// Process rules:
//   - stdout carries nothing but JSON-RPC messages; logs go to the injected
//     logger (stderr in the binaries).
//   - Starting records nothing and calls nothing: the server is contacted
//     only when a tool is called, so the proxy starts while the server is
//     down, reports that per call, and picks the server up again after a
//     restart (the HTTP client keeps no state but idle connections).
//   - A tool failure is a tool result with isError set, whose text says
//     what went wrong and what to do (the table is Proxy.describe); only
//     protocol problems (unknown tool, malformed message) are JSON-RPC
//     errors.
//   - When stdin ends, the answers still being worked on are written and
//     Serve returns nil.
//
// The tools follow the upstream reference (tool names, arguments, the
// flattened recall results) with these departures: input schemas carry
// enum, default, minimum and maximum keywords and refuse undeclared
// arguments; list and object arguments are JSON arrays and objects
// (record_ids, stores, secrecy_levels, meta_json, and the batches' records,
// formerly records_json), while the older string forms are still
// understood; every tool has an outputSchema and answers with
// structuredContent plus the same JSON, compact, as text (update and
// export answer with JSON objects too); out-of-range numbers are refused
// rather than clamped; associate's depth defaults to 2 like the HTTP API
// (upstream's MCP tool used 1); records in inspect, timeline and associate
// results show their text instead of byte arrays; export can include
// sealed and secret raw entries on request.
package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
)

// Options configure a Proxy, and for Run the client it builds.
type Options struct {
	// ServerURL is the memsvc server's base URL. Run connects to it; New
	// only names it in error messages.
	ServerURL string
	// APIKey is the server's Bearer key (Run). New only uses whether it is
	// set, to say which one is wrong when the server refuses a call.
	APIKey string
	// Timeout bounds each server call (Run); 0 means no bound.
	Timeout time.Duration
	// Version is reported in the initialize result.
	Version string
	// Logger receives the proxy's log. Nil: New discards it; Run writes
	// text at info level to stderr.
	Logger *slog.Logger
	// Now is the clock for timeline's default range; nil selects time.Now.
	Now func() time.Time
	// ExportDir is the only directory export writes into, by a name
	// relative to it (DefaultExportDir is the commands' default). Empty:
	// export refuses to write anything.
	ExportDir string
	// Namespace is the namespace every tool acts in; empty names none
	// (the server's default, or the only namespace its key is bound to).
	Namespace string
}

// DefaultExportDir is the export directory of a proxy started without
// one: memsvc/exports under the user's data directory ($XDG_DATA_HOME, or
// ~/.local/share; %LOCALAPPDATA% on Windows), found through getenv. It is
// "" when none of those is set.
func DefaultExportDir(getenv func(string) string) string {
	base := getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(base) {
		base = ""
	}
	if base == "" && runtime.GOOS == "windows" {
		base = getenv("LOCALAPPDATA")
	}
	if base == "" {
		if home := getenv("HOME"); filepath.IsAbs(home) {
			base = filepath.Join(home, ".local", "share")
		}
	}
	if base == "" {
		return ""
	}
	return filepath.Join(base, "memsvc", "exports")
}

const (
	// maxMessageBytes bounds one JSON-RPC message; the server refuses
	// bodies over 64 MiB anyway.
	maxMessageBytes = 64 << 20
	// maxConcurrent bounds the requests served at once.
	maxConcurrent = 4
	// connectTimeout bounds connecting to the server (Run).
	connectTimeout = 10 * time.Second
)

// Proxy serves the MCP tools over a memory.Service.
type Proxy struct {
	svc    memory.Service
	opts   Options
	log    *slog.Logger
	ids    *memory.IDSource // record ids of raw stores
	server *server.MCPServer
	calls  map[string]toolFunc // the tools by name, for plain calls (handle)
	// maxMessage bounds one input line (maxMessageBytes; tests lower it).
	maxMessage int
}

// New returns a Proxy that calls svc.
func New(svc memory.Service, opts Options) *Proxy {
	p := &Proxy{svc: svc, opts: opts, log: opts.Logger, ids: memory.NewIDSource(opts.Now, nil), maxMessage: maxMessageBytes}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	p.server = server.NewMCPServer("memsvc", version,
		server.WithToolCapabilities(false),
		server.WithInstructions(instructions),
	)
	p.calls = map[string]toolFunc{}
	for _, t := range p.tools() {
		p.server.AddTool(t.def, p.wrap(t))
		p.calls[t.def.Name] = p.run(t)
	}
	return p
}

func (p *Proxy) now() time.Time {
	if p.opts.Now != nil {
		return p.opts.Now()
	}
	return time.Now()
}

// wrap adapts a handler to mcp-go (see run).
func (p *Proxy) wrap(t tool) server.ToolHandlerFunc {
	run := p.run(t)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return run(ctx, req.Params.Arguments), nil
	}
}

// toolFunc runs one tool on the arguments of a call and returns its
// result; it does not fail: failures are isError results.
type toolFunc func(ctx context.Context, arguments any) *mcp.CallToolResult

// run returns the function that calls a tool: it reads and checks the
// arguments, turns every error into an isError result and logs the
// outcome (never the content).
func (p *Proxy) run(t tool) toolFunc {
	name := t.def.Name
	known := make([]string, 0, len(t.def.InputSchema.Properties))
	for k := range t.def.InputSchema.Properties {
		known = append(known, k)
	}
	slices.Sort(known)
	accepted := append(slices.Clone(known), t.aliases...)
	return func(ctx context.Context, arguments any) (res *mcp.CallToolResult) {
		start := time.Now()
		defer func() {
			if r := recover(); r != nil {
				p.log.Error("tool panicked", "tool", name, "panic", r)
				res = mcp.NewToolResultError("The memsvc MCP proxy failed unexpectedly while running " + name + ". This is a bug; its log (stderr) has details.")
			}
		}()
		var err error
		m, ok := arguments.(map[string]any)
		switch {
		case arguments == nil:
			m = map[string]any{}
		case !ok:
			err = badArg("arguments", "must be a JSON object of named arguments, got %s", jsonType(arguments))
		}
		if err == nil {
			a := args{m: m}
			if err = a.unknown(accepted, known); err == nil {
				var v any
				if v, err = t.handler(memory.WithNamespace(ctx, p.opts.Namespace), a); err == nil {
					res, err = structured(v)
				}
			}
		}
		took := time.Since(start)
		if err != nil {
			f := p.describe(err)
			p.log.Log(ctx, f.level, "tool call failed", "tool", name, "kind", f.kind, "err", err, "took", took)
			return mcp.NewToolResultError(f.text)
		}
		p.log.Debug("tool call", "tool", name, "took", took)
		return res
	}
}

// Run serves MCP on stdin and stdout until stdin ends or ctx is done,
// calling the memsvc server at opts.ServerURL. It contacts the server
// only when a tool is called.
func Run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	tr := serverTransport(http.ProxyFromEnvironment)
	ua := "memsvc-mcp"
	if opts.Version != "" {
		ua += "/" + opts.Version
	}
	c, err := client.New(opts.ServerURL, client.Options{
		APIKey:     opts.APIKey,
		Timeout:    opts.Timeout,
		HTTPClient: &http.Client{Transport: tr},
		UserAgent:  ua,
	})
	if err != nil {
		return err
	}
	defer tr.CloseIdleConnections()
	opts.ServerURL = c.URL()
	p := New(c, opts)
	p.log.Info("MCP proxy serving on stdio", "server", c.URL(), "api_key", opts.APIKey != "", "namespace", opts.Namespace, "timeout", opts.Timeout, "version", opts.Version)
	err = p.Serve(ctx, stdin, stdout)
	p.log.Info("MCP proxy stopped", "err", err)
	return err
}

// serverTransport is the HTTP transport for the server at serverURL:
// net/http's, reaching it through proxy when that says so, and keeping
// one idle connection for each tool call that may run at once.
func serverTransport(proxy func(*http.Request) (*url.URL, error)) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.Proxy = proxy
	tr.MaxIdleConnsPerHost = maxConcurrent
	return tr
}

// Serve reads JSON-RPC messages, one per line, from stdin and writes the
// answers to stdout. Tool calls are served concurrently (a few at a time),
// everything else in order. It returns nil when stdin ends (after writing
// the answers still outstanding) or ctx is done, and an error when reading
// stdin or writing stdout fails.
func (p *Proxy) Serve(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &session{
		p: p, ctx: ctx,
		in:    &lineReader{br: bufio.NewReaderSize(stdin, 64<<10), limit: p.maxMessage},
		out:   &messageWriter{w: stdout, cancel: cancel},
		sem:   make(chan struct{}, maxConcurrent),
		ended: make(chan error, 1),
	}
	go s.read()
	var err error
	select {
	case err = <-s.ended:
	case <-ctx.Done():
	}
	s.close()
	s.wg.Wait()
	if werr := s.out.failure(); werr != nil {
		return werr
	}
	return err
}

// session is one run of Serve. One goroutine at a time reads stdin: it
// answers the messages other than tool calls itself, in order, and on a
// tool call hands the reading on to a new goroutine and answers the call.
// The call's answer so follows its request without a hand-off between
// goroutines, which on a loaded machine costs a search more than the
// proxy's own work does.
type session struct {
	p     *Proxy
	ctx   context.Context
	in    *lineReader
	out   *messageWriter
	sem   chan struct{} // tool calls being answered
	ended chan error    // the end of stdin: nil at EOF

	mu     sync.Mutex
	closed bool           // Serve is returning: no new work
	wg     sync.WaitGroup // work begun
}

// read reads and answers messages until stdin ends, or until a tool call,
// which it answers after starting the next reader.
func (s *session) read() {
	for {
		m := s.in.next()
		if !s.begin() {
			return
		}
		switch {
		case m.tooLong:
			s.out.write(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INVALID_REQUEST,
				fmt.Sprintf("message longer than the limit of %d bytes", s.in.limit), nil))
		case len(m.data) > 0:
			tc, isCall := s.p.readToolCall(m.data)
			if isCall {
				s.call(tc, m)
				return
			}
			// Everything but tool calls is quick and local: initialize,
			// tools/list, ping, notifications, and malformed messages
			// (answered with a parse error), in order.
			if resp := s.p.server.HandleMessage(s.ctx, m.data); resp != nil {
				s.out.write(resp)
			}
		}
		s.wg.Done()
		if m.err != nil {
			s.end(m.err)
			return
		}
	}
}

// call answers the tool call tc, read from m, once there is room for it,
// with the next message read by a new goroutine.
func (s *session) call(tc toolCall, m message) {
	defer s.wg.Done()
	select {
	case s.sem <- struct{}{}:
	case <-s.ctx.Done():
		return
	}
	defer func() { <-s.sem }()
	if m.err != nil {
		s.end(m.err)
	} else {
		go s.read()
	}
	if resp := s.p.answer(s.ctx, tc, m.data); resp != nil {
		s.out.write(resp)
	}
}

// begin counts a message as work Serve waits for, unless it is returning.
func (s *session) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

func (s *session) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// end reports the end of stdin, err, to Serve.
func (s *session) end(err error) {
	if !errors.Is(err, io.EOF) {
		err = fmt.Errorf("read stdin: %w", err)
	} else {
		err = nil
	}
	s.ended <- err
}

// message is one line of input; err ends the input.
type message struct {
	data    []byte
	tooLong bool
	err     error
}

// lineReader reads the lines of stdin. Lines longer than limit, not
// counting their "\n", are skipped and reported as tooLong.
type lineReader struct {
	br    *bufio.Reader
	limit int
}

// next returns the next line; the last one carries the error that ended
// the input.
func (r *lineReader) next() message {
	var m message
	for {
		frag, err := r.br.ReadSlice('\n')
		if !m.tooLong {
			if len(m.data)+len(bytes.TrimSuffix(frag, []byte("\n"))) > r.limit {
				m.tooLong, m.data = true, nil
			} else {
				m.data = append(m.data, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		m.err = err
		break
	}
	m.data = trimSpace(m.data)
	return m
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// messageWriter writes whole messages, one per line, from any goroutine.
// The first write error cancels serving.
type messageWriter struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	cancel context.CancelFunc
}

func (w *messageWriter) write(v any) {
	b, err := encodeMessage(v)
	if err != nil {
		b, _ = json.Marshal(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INTERNAL_ERROR, "encode answer: "+err.Error(), nil))
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("write stdout: %w", err)
		w.cancel()
	}
}

func (w *messageWriter) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
