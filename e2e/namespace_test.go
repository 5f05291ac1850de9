package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/internal/testtls"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// The namespaces and keys of the namespace tests. keyAll may use every
// namespace (auth.api_keys); keyA and keyB are bound to one each
// (auth.keys).
const (
	nsA    = "proj-a"
	nsB    = "proj-b"
	keyAll = "all-namespaces-key-0123456789abcdef"
	keyA   = "key-of-proj-a-0123456789abcdef"
	keyB   = "key-of-proj-b-0123456789abcdef"
)

// nsServer is a running memsvc serve with authentication, bound keys,
// gRPC over TLS and metrics.
type nsServer struct {
	srv  *server
	dir  string
	conn *grpc.ClientConn
	rpc  pb.MemsvcServiceClient
}

func startNamespaceServer(t *testing.T) *nsServer {
	t.Helper()
	certFile, keyFile, pool := testtls.SelfSigned(t, t.TempDir())
	dir := t.TempDir()
	cmd := binCmd(t, "memsvc", []string{
		"MEMSVC_AUTH__ENABLED=true",
		"MEMSVC_AUTH_API_KEYS=" + keyAll,
		"MEMSVC_AUTH_KEYS=" + keyA + "=" + nsA + "," + keyB + "=" + nsB,
		"MEMSVC_GRPC__TLS_CERT_PATH=" + certFile, "MEMSVC_GRPC__TLS_KEY_PATH=" + keyFile,
		"MEMSVC_HTTP__METRICS_ENABLED=true",
		// Nothing changes by itself while the test compares states.
		"MEMSVC_DECAY__BACKGROUND_INTERVAL_SECS=86400", "MEMSVC_DREAM__BACKGROUND_INTERVAL_SECS=86400",
		"MEMSVC_RATE_LIMIT__REQUESTS_PER_SECOND=1000000", "MEMSVC_RATE_LIMIT__BURST=1000000",
	}, "serve", "--data-dir", dir, "--port", "0", "--grpc-port", "0")
	s := &nsServer{srv: startCmd(t, cmd), dir: dir}
	conn, err := grpc.NewClient(grpcAddr(t, s.srv), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	s.conn, s.rpc = conn, pb.NewMemsvcServiceClient(conn)
	return s
}

// answer is an HTTP answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request with key and, unless ns is "", the namespace
// header; body is JSON-encoded unless it is []byte (sent as an archive).
func (s *nsServer) do(t *testing.T, method, path, key, ns string, body any) answer {
	t.Helper()
	a := testkit.Do(t, testkit.Request{Method: method, URL: s.srv.url(path), Body: body, Key: key, Namespace: ns})
	return answer{a.Status, a.Header, a.Body}
}

// ok sends a request with keyAll in namespace ns, requires a 2xx answer
// and decodes it into out (when not nil).
func (s *nsServer) ok(t *testing.T, method, path, ns string, body, out any) answer {
	t.Helper()
	a := s.do(t, method, path, keyAll, ns, body)
	if a.status < 200 || a.status > 299 {
		t.Fatalf("%s %s in %q: %d %s", method, path, ns, a.status, a.body)
	}
	if out != nil {
		if err := json.Unmarshal(a.body, out); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, a.body)
		}
	}
	return a
}

// forbidden requires a 403 FORBIDDEN envelope that says want.
func forbiddenHTTP(t *testing.T, what string, a answer, want string) {
	t.Helper()
	env, ok := wire.DecodeEnvelope(a.body)
	if a.status != http.StatusForbidden || !ok || env.Code != memory.CodeForbidden || !strings.Contains(env.Message, want) {
		t.Errorf("%s: %d %s; want 403 FORBIDDEN saying %q", what, a.status, a.body, want)
	}
}

// rpcCtx is a context for a gRPC call with key and, unless ns is "", the
// namespace metadata.
func rpcCtx(t *testing.T, key, ns string) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	kv := []string{"authorization", "Bearer " + key}
	if ns != "" {
		kv = append(kv, "memsvc-namespace", ns)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

func forbiddenRPC(t *testing.T, what string, err error, want string) {
	t.Helper()
	reason := errorReason(err)
	if status.Code(err) != codes.PermissionDenied || reason != string(memory.CodeForbidden) || !strings.Contains(status.Convert(err).Message(), want) {
		t.Errorf("%s: %v (reason %q); want PERMISSION_DENIED, FORBIDDEN, saying %q", what, err, reason, want)
	}
}

// errorReason is the reason of the google.rpc.ErrorInfo detail of err
// (field 1 of the message), read without its generated type.
func errorReason(err error) string {
	for _, d := range status.Convert(err).Proto().GetDetails() {
		if !strings.HasSuffix(d.GetTypeUrl(), "/google.rpc.ErrorInfo") {
			continue
		}
		b := d.GetValue()
		for len(b) > 0 {
			num, typ, n := protowire.ConsumeTag(b)
			if n < 0 {
				return ""
			}
			b = b[n:]
			if num == 1 && typ == protowire.BytesType {
				v, m := protowire.ConsumeBytes(b)
				if m < 0 {
					return ""
				}
				return string(v)
			}
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return ""
			}
			b = b[m:]
		}
	}
	return ""
}

// nsText are the texts stored in both namespaces, with an embedding each
// (orthogonal, so no two are similar) except the last.
var nsText = []struct {
	text  string
	store memory.StoreType
	vec   []float32
}{
	{"the deploy key rotates every friday at noon", memory.StoreEpisodic, []float32{1, 0, 0, 0}},
	{"postgres backups land in bucket pg-archive-eu", memory.StoreSemantic, []float32{0, 1, 0, 0}},
	{"alice prefers tabs over spaces in go code", memory.StoreEpisodic, []float32{0, 0, 1, 0}},
	{"the staging cluster runs kubernetes version thirty", memory.StoreProcedural, []float32{0, 0, 0, 1}},
	{"lunch orders close at eleven thirty sharp", memory.StoreEpisodic, nil},
}

// rawIDs are the client ids of the raw entries stored in both namespaces:
// the same ids in each, as an archive imported into a second namespace
// would bring them.
var rawIDs = []string{"0196a9e2-5c1d-7f00-8a00-0000000000a1", "0196a9e2-5c1d-7f00-8a00-0000000000a2", "0196a9e2-5c1d-7f00-8a00-0000000000a3"}

var rawText = []string{"user: when do deploy keys rotate?", "assistant: every friday at noon", "user: and who rotates them?"}

// marker is text that only namespace B holds.
const marker = "zebra"

func textRequest(text string, st memory.StoreType, vec []float32) memory.EncodeStoreRequest {
	c := memory.TextContent(text)
	c.Blocks[0].Embedding = vec
	return memory.EncodeStoreRequest{Content: c, Store: &st}
}

func rawRequest(id, text string) memory.EncodeStoreRawRequest {
	rid := memory.MustParseID(id)
	topic := "keys"
	return memory.EncodeStoreRawRequest{
		RecordID: &rid, SessionID: "s1", TopicID: &topic,
		Source: memory.SourceConversation, Speaker: memory.SpeakerUser,
		Visibility: memory.VisibilityNormal, SecrecyLevel: memory.SecrecyPublic,
		Content: memory.TextContent(text),
	}
}

// mcpToolArgs are arguments every MCP tool accepts, by tool name; id is a
// record id to act on and file an export file name.
func mcpToolArgs(id, file string) map[string]map[string]any {
	return map[string]map[string]any{
		"store":           {"content": "the deploy key rotates every friday at noon"},
		"batch_store":     {"records_json": `[{"content":"release step one: build"},{"content":"release step two: deploy"}]`},
		"store_raw":       {"content": "user: is the deploy key rotated today?", "session_id": "s1", "topic_id": "keys"},
		"batch_store_raw": {"records_json": `[{"content":"assistant: yes, at noon","session_id":"s1","speaker":"assistant","topic_id":"keys"}]`},
		"update":          {"record_id": id, "content": "the deploy key rotates every friday at one"},
		"recall":          {"query": "deploy key", "limit": 50},
		"recall_raw":      {"session_id": "s1", "limit": 50},
		"associate":       {"record_id": id},
		"timeline":        {"granularity": "day"},
		"inspect":         {"record_id": id},
		"forget":          {"record_ids": id, "confirm": true},
		"stats":           {},
		"consolidate":     {"strategy": "full"},
		"dream_tick":      {"session_id": "s1"},
		"export":          {"output_path": file},
	}
}

// mcpTools lists the tools the proxy serves.
func mcpTools(t *testing.T, c *mcpClient) []string {
	t.Helper()
	list := c.request("tools/list", nil)
	var tools struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(list.Result, &tools); err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %v %s", err, list.Result)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// routePath fills the path parameters of a route template: id for a
// record, ns for a namespace.
func routePath(template string, id memory.ID, ns string) string {
	if template == wire.PathNamespace {
		return wire.NamespacePath(ns)
	}
	return wire.RecordPath(template, id)
}

// TestNamespaceAccess runs memsvc serve with keys bound to namespaces and
// proves, for every route of wire.Routes(), every method of the gRPC
// service descriptor, every MCP tool and the CLI, that a key bound to one
// namespace is refused on another (403 FORBIDDEN, PERMISSION_DENIED, an MCP
// tool error, exit 1), before anything is done, and that malformed
// namespace names are refused naming where they came from. It needs
// nothing of the engine: the transports decide all of it.
func TestNamespaceAccess(t *testing.T) {
	s := startNamespaceServer(t)
	unknown := memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000ff")

	t.Run("http", func(t *testing.T) {
		for _, rt := range wire.Routes() {
			what := rt.Method + " " + rt.Path
			var body any
			if rt.Body {
				body = map[string]any{}
			}
			if rt.Path == wire.PathImportStream {
				body = []byte("archive")
			}
			switch {
			case !rt.Protected:
				if a := s.do(t, rt.Method, rt.Path, keyA, nsB, nil); a.status != http.StatusOK {
					t.Errorf("%s: %d %s", what, a.status, a.body)
				}
			case rt.Namespace == wire.InHeader:
				path := routePath(rt.Path, unknown, nsA)
				forbiddenHTTP(t, what+" key A in B", s.do(t, rt.Method, path, keyA, nsB, body), `namespace "proj-b"`)
				forbiddenHTTP(t, what+" key B in A", s.do(t, rt.Method, path, keyB, nsA, body), `namespace "proj-a"`)
				forbiddenHTTP(t, what+" key A in default", s.do(t, rt.Method, path, keyA, memory.DefaultNamespace, body), `namespace "default"`)
			case rt.Namespace == wire.InPath:
				forbiddenHTTP(t, what+" key A on B", s.do(t, rt.Method, routePath(rt.Path, unknown, nsB), keyA, nsA, map[string]any{"confirm": true}), `namespace "proj-b"`)
			case rt.Namespace == wire.KeyWide:
				for key, want := range map[string]string{keyA: nsA, keyB: nsB} {
					var got memory.NamespacesResponse
					a := s.do(t, rt.Method, rt.Path, key, "", nil)
					if a.status != 200 || json.Unmarshal(a.body, &got) != nil || len(got.Namespaces) != 1 || got.Namespaces[0].Name != want {
						t.Errorf("%s with the key of %s: %d %s", what, want, a.status, a.body)
					}
				}
			case rt.Namespace == wire.ServerWide:
				forbiddenHTTP(t, what+" key A", s.do(t, rt.Method, rt.Path, keyA, "", nil), "bound to namespaces")
				if a := s.do(t, rt.Method, rt.Path, keyAll, "", nil); a.status != 200 {
					t.Errorf("%s with the all-namespace key: %d", what, a.status)
				}
			default:
				t.Errorf("%s: reach %v has no case", what, rt.Namespace)
			}
		}
		forbiddenHTTP(t, "stats of all namespaces, key A", s.do(t, "GET", wire.PathStats+"?all_namespaces=true", keyA, "", nil), "stats of all namespaces")
		forbiddenHTTP(t, "export of proj-b, key A", s.do(t, "POST", wire.PathExport, keyA, nsA, map[string]any{"namespaces": []string{nsA, nsB}}), `namespace "proj-b"`)
		forbiddenHTTP(t, "export of every namespace, key A", s.do(t, "POST", wire.PathExportStream, keyA, nsA, map[string]any{"namespaces": []string{"*"}}), "export of every namespace")
		forbiddenHTTP(t, "import into the archive's namespaces, key A", s.do(t, "POST", wire.PathImportStream+"?archive_id=x&preserve_namespaces=true", keyA, nsA, []byte("archive")), "preserve_namespaces")
		if a := s.do(t, "GET", wire.PathStats+"?all_namespaces=true", keyAll, "", nil); a.status != 200 {
			t.Errorf("stats of all namespaces, all-namespace key: %d %s", a.status, a.body)
		}
		for _, bad := range []string{"Proj-B", "proj b", "../b", strings.Repeat("p", 65)} {
			a := s.do(t, "POST", wire.PathRecallQuery, keyAll, bad, map[string]any{})
			env, _ := wire.DecodeEnvelope(a.body)
			if a.status != 400 || env == nil || env.Code != memory.CodeValidation || !strings.Contains(env.Message, wire.HeaderNamespace) {
				t.Errorf("header %q: %d %s", bad, a.status, a.body)
			}
		}
		// A key bound to one namespace acts in it without naming it.
		var stored memory.EncodeStoreResponse
		if a := s.do(t, "POST", wire.PathEncode, keyA, "", textRequest("stored with the key of proj-a", memory.StoreEpisodic, nil)); a.status != 200 || json.Unmarshal(a.body, &stored) != nil {
			t.Fatalf("store with key A and no header: %d %s", a.status, a.body)
		}
		if a := s.do(t, "GET", wire.RecordPath(wire.PathRecord, stored.RecordID), keyA, nsA, nil); a.status != 200 {
			t.Errorf("inspect in proj-a of what key A stored without a header: %d %s", a.status, a.body)
		}
	})

	t.Run("grpc", func(t *testing.T) {
		for _, m := range testkit.ServiceMethods(t) {
			name := string(m.Name())
			in := dynamicpb.NewMessage(m.Input())
			switch name {
			case "Namespaces":
				resp, err := s.rpc.Namespaces(rpcCtx(t, keyA, nsB), &pb.NamespacesRequest{})
				if err != nil || len(resp.GetNamespaces()) != 1 || resp.GetNamespaces()[0].GetName() != nsA {
					t.Errorf("Namespaces with key A: %v %v", resp, err)
				}
				continue
			case "DropNamespace":
				_, err := s.rpc.DropNamespace(rpcCtx(t, keyA, nsA), &pb.DropNamespaceRequest{Name: nsB, Confirm: true})
				forbiddenRPC(t, "DropNamespace of proj-b with key A", err, `namespace "proj-b"`)
				continue
			}
			_, err := testkit.Invoke(rpcCtx(t, keyA, nsB), s.conn, m, in)
			forbiddenRPC(t, name+" key A in proj-b", err, `namespace "proj-b"`)
			_, err = testkit.Invoke(rpcCtx(t, keyB, ""), s.conn, m, in)
			if status.Code(err) == codes.PermissionDenied {
				t.Errorf("%s with key B and no metadata (its own namespace): %v", name, err)
			}
		}
		_, err := s.rpc.Stats(rpcCtx(t, keyA, ""), &pb.StatsRequest{AllNamespaces: true})
		forbiddenRPC(t, "Stats of all namespaces, key A", err, "stats of all namespaces")
		_, err = s.rpc.Stats(rpcCtx(t, keyAll, "Bad Name"), &pb.StatsRequest{})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "memsvc-namespace metadata") {
			t.Errorf("bad metadata: %v", err)
		}
	})

	t.Run("mcp", func(t *testing.T) {
		c := startMCP(t, []string{"MEMSVC_SERVER_API_KEY=" + keyA}, "--server-url", s.srv.url(""), "--namespace", nsB, "--export-dir", t.TempDir())
		c.initialize()
		args := mcpToolArgs(unknown.String(), "out.cma")
		for _, tool := range mcpTools(t, c) {
			a, ok := args[tool]
			if !ok {
				t.Errorf("tool %s has no arguments in mcpToolArgs", tool)
				continue
			}
			c.fails(tool, a, "Forbidden:", `namespace "proj-b"`)
		}
		c.close()
	})

	t.Run("cli", func(t *testing.T) {
		env := []string{"MEMSVC_SERVER_URL=" + s.srv.url(""), "MEMSVC_SERVER_API_KEY=" + keyA}
		r := runBin(t, 30*time.Second, env, "memsvc", "--namespace", nsB, "stats")
		if r.code != 1 || !strings.Contains(r.stderr, `may not use namespace "proj-b"`) {
			t.Errorf("memsvc --namespace proj-b stats with key A: %+v", r)
		}
		r = runBin(t, 30*time.Second, append(env, "MEMSVC_NAMESPACE="+nsB), "memsvc", "recall", "x")
		if r.code != 1 || !strings.Contains(r.stderr, `may not use namespace "proj-b"`) {
			t.Errorf("MEMSVC_NAMESPACE=proj-b memsvc recall with key A: %+v", r)
		}
		r = runBin(t, 30*time.Second, env, "memsvc", "namespace", "drop", nsB, "--confirm")
		if r.code != 1 || !strings.Contains(r.stderr, `may not use namespace "proj-b"`) {
			t.Errorf("memsvc namespace drop proj-b with key A: %+v", r)
		}
		r = runBin(t, 30*time.Second, env, "memsvc", "stats", "--all-namespaces")
		if r.code != 1 || !strings.Contains(r.stderr, "stats of all namespaces") {
			t.Errorf("memsvc stats --all-namespaces with key A: %+v", r)
		}
		r = runBin(t, 30*time.Second, env, "memsvc", "namespaces")
		if r.code != 0 || !strings.Contains(r.stdout, nsA) || strings.Contains(r.stdout, nsB) {
			t.Errorf("memsvc namespaces with key A: %+v", r)
		}
	})
}

// isolation holds what TestNamespaceIsolation knows about the two
// namespaces.
type isolation struct {
	*nsServer
	ids map[string][]memory.ID // curated records stored, by namespace
}

// seed stores the same texts and raw entries in ns (B also gets the
// marker), ages them by 30 days of decay, and waits until the background
// similarity linker has linked a last record, identical to the first, so
// nothing the seed started is still changing the namespace.
func (x *isolation) seed(t *testing.T, ns string) {
	var batch memory.EncodeBatchResponse
	req := memory.EncodeBatchRequest{InferAssociations: true}
	for _, r := range nsText {
		req.Records = append(req.Records, textRequest(r.text, r.store, r.vec))
	}
	if ns == nsB {
		req.Records = append(req.Records, textRequest("a "+marker+" crossing is painted near the office", memory.StoreEpisodic, nil))
	}
	x.ok(t, "POST", wire.PathEncodeBatch, ns, req, &batch)
	for _, r := range batch.Results {
		x.ids[ns] = append(x.ids[ns], r.RecordID)
	}
	raw := memory.EncodeBatchStoreRawRequest{}
	for i, id := range rawIDs {
		raw.Records = append(raw.Records, rawRequest(id, rawText[i]))
	}
	if ns == nsB {
		raw.Records = append(raw.Records, rawRequest("0196a9e2-5c1d-7f00-8a00-0000000000b9", "user: the "+marker+" raw entry"))
	}
	x.ok(t, "POST", wire.PathEncodeRawBatch, ns, raw, nil)
	x.ok(t, "POST", wire.PathDecayTick, ns, map[string]any{"tick_duration_seconds": 30 * 24 * 3600}, nil)
	x.settle(t, ns, textRequest(nsText[0].text, nsText[0].store, nsText[0].vec))
}

// settle stores req in ns and waits (bounded) until the similarity linker
// has linked it; the linker works in order, so everything stored before
// is linked by then.
func (x *isolation) settle(t *testing.T, ns string, req memory.EncodeStoreRequest) memory.ID {
	var stored memory.EncodeStoreResponse
	x.ok(t, "POST", wire.PathEncode, ns, req, &stored)
	x.ids[ns] = append(x.ids[ns], stored.RecordID)
	waitFor(t, nil, 20*time.Second, "the record stored in "+ns+" linked to its twin", func() bool {
		var rec memory.MemoryRecord
		x.ok(t, "GET", wire.RecordPath(wire.PathRecord, stored.RecordID), ns, nil, &rec)
		return len(rec.Associations) > 0
	})
	return stored.RecordID
}

// fingerprint is everything ns shows about itself: every record and raw
// entry as an export holds them, its statistics and its evolution.
func (x *isolation) fingerprint(t *testing.T, ns string) string {
	var exp wire.ExportArchiveResponse
	x.ok(t, "POST", wire.PathExport, ns, map[string]any{"include_raw_journal": true, "include_sealed": true, "include_secret": true}, &exp)
	lines := strings.Split(strings.TrimSpace(string(exp.ArchiveData)), "\n")
	if len(lines) < 2 {
		t.Fatalf("export of %s: %q", ns, exp.ArchiveData)
	}
	entries := slices.Clone(lines[1 : len(lines)-1]) // without header and footer
	sort.Strings(entries)
	var stats, evo map[string]any
	x.ok(t, "GET", wire.PathStats, ns, nil, &stats)
	x.ok(t, "GET", wire.PathEvolution, ns, nil, &evo)
	sb, _ := json.Marshal(stats)
	eb, _ := json.Marshal(evo)
	return strings.Join(entries, "\n") + "\nstats " + string(sb) + "\nevolution " + string(eb)
}

// unchanged fails when ns's fingerprint differs from before.
func (x *isolation) unchanged(t *testing.T, ns, before, after string) {
	t.Helper()
	if before == after {
		return
	}
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Errorf("%s changed: first difference\n before: %.400s\n after:  %.400s", ns, b[i], a[i])
			return
		}
	}
	t.Errorf("%s changed: %d lines before, %d after", ns, len(b), len(a))
}

// hasMarker reports whether text holds the marker of namespace B, as
// text or as the JSON array of byte values content travels as.
func hasMarker(text string) bool {
	arr := make([]string, len(marker))
	for i := range len(marker) {
		arr[i] = fmt.Sprint(marker[i])
	}
	return strings.Contains(text, marker) || strings.Contains(strings.Join(strings.Fields(text), ""), strings.Join(arr, ","))
}

// clean fails when text shows anything of namespace B: one of its record
// ids or its marker.
func (x *isolation) clean(t *testing.T, what, text string) {
	t.Helper()
	x.cleanOfMarker(t, what, text)
	for _, id := range x.ids[nsB] {
		if strings.Contains(text, id.String()) {
			t.Errorf("%s shows record %s of %s", what, id, nsB)
		}
	}
}

// cleanOfMarker fails when text shows the marker of namespace B (for
// answers that may repeat an id the request named).
func (x *isolation) cleanOfMarker(t *testing.T, what, text string) {
	t.Helper()
	if hasMarker(text) {
		t.Errorf("%s shows the marker of %s: %.300s", what, nsB, text)
	}
}

// count is the number of curated and raw records of ns by its own stats.
func (x *isolation) count(t *testing.T, ns string) (curated, raw uint32) {
	var s memory.Stats
	x.ok(t, "GET", wire.PathStats, ns, nil, &s)
	return s.TotalRecords, s.RawJournalRecords
}

// walkCase is one operation of the walk, in namespace A; it checks A's
// answer itself.
type walkCase struct {
	route string // "METHOD /path/template" of wire.Routes(), the RPC or the tool it covers
	name  string
	run   func(t *testing.T)
}

// TestNamespaceIsolation is the isolation test of issue 15: it stores the
// same texts (and raw entries with the same ids) in two namespaces and,
// for every route of wire.Routes(), every method of the gRPC service
// descriptor and every MCP tool, acts in namespace A and proves that
// nothing of namespace B is visible in the answer (no record id, no
// marker), that nothing of B changed (every record and raw entry as an
// export shows them, its statistics and evolution) and that nothing of B
// is counted in A's numbers. A route, method or tool without a case fails
// the test. At the end the embedded CLI sees the same separation on the
// data directory.
//
// It needs the engine to keep namespaces apart (the transports carry the
// namespace; the engine must act in it).
func TestNamespaceIsolation(t *testing.T) {
	x := &isolation{nsServer: startNamespaceServer(t), ids: map[string][]memory.ID{}}
	x.seed(t, nsA)
	x.seed(t, nsB)

	// Each namespace counts its own records only.
	if c, r := x.count(t, nsA); c != uint32(len(x.ids[nsA])) || r != uint32(len(rawIDs)) {
		t.Errorf("%s counts %d records and %d raw entries, want %d and %d", nsA, c, r, len(x.ids[nsA]), len(rawIDs))
	}
	if c, r := x.count(t, nsB); c != uint32(len(x.ids[nsB])) || r != uint32(len(rawIDs)+1) {
		t.Errorf("%s counts %d records and %d raw entries, want %d and %d (the raw entries with the ids of %s's are its own)", nsB, c, r, len(x.ids[nsB]), len(rawIDs)+1, nsA)
	}

	t.Run("http", func(t *testing.T) { x.walkHTTP(t) })
	t.Run("grpc", func(t *testing.T) { x.walkGRPC(t) })
	t.Run("mcp", func(t *testing.T) { x.walkMCP(t) })
	t.Run("embedded cli", func(t *testing.T) { x.embedded(t) })
}

// run runs the cases in order, each between two fingerprints of B. The
// function thenB holds for a route, if any, looks at B after the second
// fingerprint: it may change B itself (a recall counts).
func (x *isolation) run(t *testing.T, cases []walkCase, thenB map[string]func(t *testing.T)) {
	for _, c := range cases {
		t.Run(c.route+" "+c.name, func(t *testing.T) {
			before := x.fingerprint(t, nsB)
			c.run(t)
			x.unchanged(t, nsB, before, x.fingerprint(t, nsB))
			if f := thenB[c.route]; f != nil {
				f(t)
			}
		})
	}
}

// covered fails for each of want that no case covers.
func covered(t *testing.T, what string, cases []walkCase, want []string) {
	t.Helper()
	have := map[string]bool{}
	for _, c := range cases {
		have[c.route] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("%s %s has no case in the isolation walk; add one", what, w)
		}
	}
}

// recalled decodes a recall answer into its record ids and texts.
func recalled(t *testing.T, body []byte) ([]string, []string) {
	t.Helper()
	var r memory.RecallQueryResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("recall answer: %v\n%.300s", err, body)
	}
	var ids, texts []string
	for _, m := range r.Memories {
		ids = append(ids, m.Record.ID.String())
		text, _ := m.RenderedContent.Text()
		texts = append(texts, text)
	}
	return ids, texts
}

// walkHTTP acts in namespace A on every route, in an order in which each
// operation has something to act on.
func (x *isolation) walkHTTP(t *testing.T) {
	aID, bID := x.ids[nsA][0], x.ids[nsB][0]
	inA := func(t *testing.T, method, path string, body any) answer {
		t.Helper()
		a := x.ok(t, method, path, nsA, body, nil)
		x.clean(t, method+" "+path, string(a.body))
		return a
	}
	notFoundInA := func(t *testing.T, method, path string, body any) {
		t.Helper()
		a := x.do(t, method, path, keyAll, nsA, body)
		if a.status != http.StatusNotFound {
			t.Errorf("%s %s in %s, of a record of %s: %d %s; want 404", method, path, nsA, nsB, a.status, a.body)
		}
		x.cleanOfMarker(t, method+" "+path, string(a.body))
	}
	key := func(method, path string) string { return method + " " + path }
	recentAll := map[string]any{"cue": map[string]any{}, "limit": 1000, "reconsolidate": false}
	var archive []byte
	cases := []walkCase{
		{key("GET", wire.PathHealth), "probe", func(t *testing.T) { inA(t, "GET", wire.PathHealth, nil) }},
		{key("GET", wire.PathReadiness), "probe", func(t *testing.T) { inA(t, "GET", wire.PathReadiness, nil) }},
		{key("GET", wire.PathMetrics), "no namespace label", func(t *testing.T) {
			a := inA(t, "GET", wire.PathMetrics, nil)
			if strings.Contains(string(a.body), nsA) || strings.Contains(string(a.body), nsB) {
				t.Errorf("metrics name a namespace")
			}
		}},
		{key("POST", wire.PathEncode), "a twin of a text B holds links only in A", func(t *testing.T) {
			id := x.settle(t, nsA, textRequest(nsText[1].text, nsText[1].store, nsText[1].vec))
			a := inA(t, "GET", wire.RecordPath(wire.PathRecord, id), nil)
			var rec memory.MemoryRecord
			if err := json.Unmarshal(a.body, &rec); err != nil {
				t.Fatal(err)
			}
			for _, as := range rec.Associations {
				if !slices.Contains(x.ids[nsA], as.TargetID) {
					t.Errorf("the new record of %s is linked to %s, not a record of %s", nsA, as.TargetID, nsA)
				}
			}
		}},
		{key("POST", wire.PathEncodeBatch), "with inferred links", func(t *testing.T) {
			var resp memory.EncodeBatchResponse
			a := inA(t, "POST", wire.PathEncodeBatch, memory.EncodeBatchRequest{InferAssociations: true, Records: []memory.EncodeStoreRequest{
				textRequest(nsText[2].text, nsText[2].store, nil), textRequest(nsText[4].text, nsText[4].store, nil),
			}})
			if err := json.Unmarshal(a.body, &resp); err != nil {
				t.Fatal(err)
			}
			for _, r := range resp.Results {
				x.ids[nsA] = append(x.ids[nsA], r.RecordID)
			}
		}},
		{key("POST", wire.PathEncodeRaw), "same session", func(t *testing.T) {
			inA(t, "POST", wire.PathEncodeRaw, rawRequest("0196a9e2-5c1d-7f00-8a00-0000000000a4", "assistant: the platform team rotates them"))
		}},
		{key("POST", wire.PathEncodeRawBatch), "an id B holds too", func(t *testing.T) {
			inA(t, "POST", wire.PathEncodeRawBatch, memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{
				rawRequest("0196a9e2-5c1d-7f00-8a00-0000000000b9", "user: an entry with the id of one of proj-b's"),
			}})
			if _, raw := x.count(t, nsA); raw != uint32(len(rawIDs))+2 {
				t.Errorf("%s holds %d raw entries, want %d: an id %s holds is not a duplicate in %s", nsA, raw, len(rawIDs)+2, nsB, nsA)
			}
		}},
		{key("PATCH", wire.PathEncodeUpdate), "own record; B's is not found", func(t *testing.T) {
			a := x.do(t, "PATCH", wire.RecordPath(wire.PathEncodeUpdate, aID), keyAll, nsA, map[string]any{"metadata": map[string]any{"checked": true}})
			if a.status != http.StatusNoContent {
				t.Errorf("update of a record of %s: %d %s", nsA, a.status, a.body)
			}
			notFoundInA(t, "PATCH", wire.RecordPath(wire.PathEncodeUpdate, bID), map[string]any{"metadata": map[string]any{"checked": true}})
		}},
		{key("POST", wire.PathRecallQuery), "text, vector and recent", func(t *testing.T) {
			for _, cue := range []map[string]any{
				{"text": "deploy key rotates friday"},
				{"text": marker},
				{"embedding": nsText[0].vec},
				{},
			} {
				a := inA(t, "POST", wire.PathRecallQuery, map[string]any{"cue": cue, "limit": 1000, "include_decayed": true})
				if ids, _ := recalled(t, a.body); len(ids) == 0 && cue["text"] != marker {
					t.Errorf("recall %v in %s found nothing", cue, nsA)
				}
				var r memory.RecallQueryResponse
				_ = json.Unmarshal(a.body, &r)
				if curated, _ := x.count(t, nsA); r.TotalCandidates > curated {
					t.Errorf("recall %v in %s saw %d candidates; %s holds %d records", cue, nsA, r.TotalCandidates, nsA, curated)
				}
			}
		}},
		{key("POST", wire.PathRecallRaw), "the shared session", func(t *testing.T) {
			var r memory.RecallRawQueryResponse
			a := inA(t, "POST", wire.PathRecallRaw, map[string]any{"session_id": "s1", "limit": 1000})
			if err := json.Unmarshal(a.body, &r); err != nil {
				t.Fatal(err)
			}
			if _, raw := x.count(t, nsA); r.TotalCandidates != raw || uint32(len(r.Records)) != raw {
				t.Errorf("raw recall of session s1 in %s: %d of %d candidates; %s holds %d entries", nsA, len(r.Records), r.TotalCandidates, nsA, raw)
			}
		}},
		{key("POST", wire.PathRecallAssociate), "from A's record; B's is not found", func(t *testing.T) {
			inA(t, "POST", wire.RecordPath(wire.PathRecallAssociate, aID), map[string]any{"depth": 3})
			notFoundInA(t, "POST", wire.RecordPath(wire.PathRecallAssociate, bID), map[string]any{})
		}},
		{key("POST", wire.PathRecallTimeline), "everything", func(t *testing.T) {
			var r memory.RecallTimelineResponse
			a := inA(t, "POST", wire.PathRecallTimeline, map[string]any{
				"range": map[string]any{"start": "2000-01-01T00:00:00Z", "end": "2100-01-01T00:00:00Z"}, "granularity": "day", "limit": 1000,
			})
			if err := json.Unmarshal(a.body, &r); err != nil {
				t.Fatal(err)
			}
			var n uint32
			for _, b := range r.Buckets {
				n += b.Count
			}
			if curated, _ := x.count(t, nsA); n > curated {
				t.Errorf("the timeline of %s counts %d records; it holds %d", nsA, n, curated)
			}
		}},
		{key("POST", wire.PathRecallGraph), "whole; around B's record empty", func(t *testing.T) {
			var r memory.RecallGraphResponse
			a := inA(t, "POST", wire.PathRecallGraph, map[string]any{"limit_nodes": 1000, "depth": 5})
			if err := json.Unmarshal(a.body, &r); err != nil {
				t.Fatal(err)
			}
			if curated, _ := x.count(t, nsA); r.TotalNodes > curated {
				t.Errorf("the graph of %s has %d nodes; it holds %d records", nsA, r.TotalNodes, curated)
			}
			// Around B's record: nothing, as around any unknown id.
			a = inA(t, "POST", wire.PathRecallGraph, map[string]any{"center_id": bID.String()})
			if err := json.Unmarshal(a.body, &r); err != nil || len(r.Nodes) != 0 {
				t.Errorf("the graph in %s around a record of %s: %s", nsA, nsB, a.body)
			}
		}},
		{key("POST", wire.PathConsolidate), "full", func(t *testing.T) {
			var r memory.ConsolidateResponse
			a := inA(t, "POST", wire.PathConsolidate, map[string]any{"strategy": "full"})
			if err := json.Unmarshal(a.body, &r); err != nil {
				t.Fatal(err)
			}
			if curated, _ := x.count(t, nsA); r.RecordsProcessed > curated {
				t.Errorf("consolidation in %s processed %d records; it holds %d", nsA, r.RecordsProcessed, curated)
			}
		}},
		{key("POST", wire.PathDreamTick), "the shared session", func(t *testing.T) {
			var r memory.DreamTickResponse
			a := inA(t, "POST", wire.PathDreamTick, map[string]any{})
			if err := json.Unmarshal(a.body, &r); err != nil {
				t.Fatal(err)
			}
			if _, raw := x.count(t, nsA); r.RawRecordsProcessed > raw || r.GroupsProcessed == 0 {
				t.Errorf("dream tick in %s: %+v; it holds %d raw entries", nsA, r, raw)
			}
		}},
		{key("POST", wire.PathDecayTick), "a week", func(t *testing.T) {
			var r memory.DecayTickResponse
			a := inA(t, "POST", wire.PathDecayTick, map[string]any{"tick_duration_seconds": 7 * 24 * 3600})
			if err := json.Unmarshal(a.body, &r); err != nil {
				t.Fatal(err)
			}
			if curated, _ := x.count(t, nsA); r.RecordsUpdated > curated {
				t.Errorf("decay tick in %s updated %d records; it holds %d", nsA, r.RecordsUpdated, curated)
			}
		}},
		{key("PUT", wire.PathMode), "perfect in A, B stays human", func(t *testing.T) {
			a := x.do(t, "PUT", wire.PathMode, keyAll, nsA, map[string]any{"mode": "perfect"})
			if a.status != http.StatusNoContent {
				t.Fatalf("set mode: %d %s", a.status, a.body)
			}
			// A, now perfect: its faded records come back exact.
			idsA, textsA := recalled(t, inA(t, "POST", wire.PathRecallQuery, recentAll).body)
			for i, id := range idsA {
				if j := slices.Index(x.ids[nsA], memory.MustParseID(id)); j >= 0 && j < len(nsText) && textsA[i] != nsText[j].text {
					t.Errorf("%s is in perfect mode, yet record %s comes back as %q", nsA, id, textsA[i])
				}
			}
		}},
		{key("DELETE", wire.PathForget), "own record; B's id deletes nothing", func(t *testing.T) {
			var r memory.ForgetResponse
			a := inA(t, "DELETE", wire.PathForget, map[string]any{"record_ids": []string{bID.String()}, "confirm": true})
			if json.Unmarshal(a.body, &r) != nil || r.RecordsDeleted != 0 {
				t.Errorf("forget in %s of a record of %s: %s", nsA, nsB, a.body)
			}
			a = inA(t, "DELETE", wire.PathForget, map[string]any{"record_ids": []string{x.ids[nsA][2].String()}, "confirm": true})
			if json.Unmarshal(a.body, &r) != nil || r.RecordsDeleted != 1 {
				t.Errorf("forget in %s of its own record: %s", nsA, a.body)
			}
			a = inA(t, "DELETE", wire.PathForget, map[string]any{"store": "procedural", "confirm": true})
			if json.Unmarshal(a.body, &r) != nil || r.RecordsDeleted == 0 {
				t.Errorf("forget in %s of its procedural store: %s", nsA, a.body)
			}
		}},
		{key("POST", wire.PathExport), "A only", func(t *testing.T) {
			var r wire.ExportArchiveResponse
			a := inA(t, "POST", wire.PathExport, map[string]any{"include_raw_journal": true})
			if err := json.Unmarshal(a.body, &r); err != nil {
				t.Fatal(err)
			}
			x.clean(t, "the archive of "+nsA, string(r.ArchiveData))
			curated, raw := x.count(t, nsA)
			if r.RecordCount != curated+raw {
				t.Errorf("the archive of %s holds %d entries; %s holds %d records and %d raw entries", nsA, r.RecordCount, nsA, curated, raw)
			}
			archive = r.ArchiveData
			// An archive of both namespaces holds both.
			var both wire.ExportArchiveResponse
			x.ok(t, "POST", wire.PathExport, nsA, map[string]any{"namespaces": []string{nsA, nsB}, "include_raw_journal": true}, &both)
			if !hasMarker(string(both.ArchiveData)) || !strings.Contains(string(both.ArchiveData), x.ids[nsB][1].String()) || both.RecordCount <= r.RecordCount {
				t.Errorf("the archive of %s and %s (%d entries) lacks %s's records", nsA, nsB, both.RecordCount, nsB)
			}
		}},
		{key("POST", wire.PathExportStream), "A only", func(t *testing.T) {
			a := inA(t, "POST", wire.PathExportStream, map[string]any{"include_raw_journal": true})
			if !bytes.Equal(bytes.SplitN(a.body, []byte("\n"), 2)[1], bytes.SplitN(archive, []byte("\n"), 2)[1]) {
				t.Errorf("the streamed archive of %s differs from the JSON one beyond its header", nsA)
			}
		}},
		{key("POST", wire.PathImport), "A's archive into a third namespace", func(t *testing.T) {
			var r memory.ImportResponse
			a := x.ok(t, "POST", wire.PathImport, "proj-c", map[string]any{"archive_id": "a-to-c", "archive_data": archive}, &r)
			x.clean(t, "import", string(a.body))
			c, raw := x.count(t, "proj-c")
			if r.RecordsSkipped != 0 || r.RecordsImported != c+raw || c == 0 {
				t.Errorf("import of %s's archive into proj-c: %+v, proj-c holds %d and %d; nothing may count as already there", nsA, r, c, raw)
			}
		}},
		{key("POST", wire.PathImportStream), "A's archive into a fourth namespace", func(t *testing.T) {
			var r memory.ImportResponse
			a := x.do(t, "POST", wire.PathImportStream+"?archive_id=a-to-d", keyAll, "proj-d", archive)
			if a.status != 200 || json.Unmarshal(a.body, &r) != nil || r.RecordsSkipped != 0 || r.RecordsImported == 0 {
				t.Errorf("streamed import into proj-d: %d %s", a.status, a.body)
			}
		}},
		{key("GET", wire.PathStats), "A's own and the totals", func(t *testing.T) {
			var own, all memory.Stats
			x.ok(t, "GET", wire.PathStats, nsA, nil, &own)
			x.ok(t, "GET", wire.PathStats+"?all_namespaces=true", "", nil, &all)
			var list memory.NamespacesResponse
			x.ok(t, "GET", wire.PathNamespaces, "", nil, &list)
			var sum uint32
			for _, n := range list.Namespaces {
				sum += n.TotalRecords
				if n.Name == nsA && n.TotalRecords != own.TotalRecords {
					t.Errorf("the listing counts %d records in %s, its stats %d", n.TotalRecords, nsA, own.TotalRecords)
				}
			}
			if all.TotalRecords != sum || all.TotalRecords <= own.TotalRecords {
				t.Errorf("stats of all namespaces count %d records; the namespaces hold %d together, %s alone %d", all.TotalRecords, sum, nsA, own.TotalRecords)
			}
		}},
		{key("GET", wire.PathRecord), "own; B's is not found", func(t *testing.T) {
			inA(t, "GET", wire.RecordPath(wire.PathRecord, aID), nil)
			notFoundInA(t, "GET", wire.RecordPath(wire.PathRecord, bID), nil)
		}},
		{key("POST", wire.PathDecayForecast), "own; B's is not found", func(t *testing.T) {
			at := time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339)
			inA(t, "POST", wire.PathDecayForecast, map[string]any{"record_ids": []string{aID.String()}, "forecast_at": at})
			notFoundInA(t, "POST", wire.PathDecayForecast, map[string]any{"record_ids": []string{bID.String()}, "forecast_at": at})
		}},
		{key("GET", wire.PathEvolution), "A's own", func(t *testing.T) { inA(t, "GET", wire.PathEvolution, nil) }},
		{key("GET", wire.PathNamespaces), "counts per namespace", func(t *testing.T) {
			var list memory.NamespacesResponse
			x.ok(t, "GET", wire.PathNamespaces, "", nil, &list)
			seen := map[string]bool{}
			for _, n := range list.Namespaces {
				seen[n.Name] = true
				if c, raw := x.count(t, n.Name); n.TotalRecords != c || n.RawJournalRecords != raw {
					t.Errorf("the listing counts %d and %d in %s; its stats %d and %d", n.TotalRecords, n.RawJournalRecords, n.Name, c, raw)
				}
			}
			for _, ns := range []string{memory.DefaultNamespace, nsA, nsB, "proj-c", "proj-d"} {
				if !seen[ns] {
					t.Errorf("the listing lacks %s: %+v", ns, list.Namespaces)
				}
			}
		}},
		{key("DELETE", wire.PathNamespace), "the third namespace", func(t *testing.T) {
			c, raw := x.count(t, "proj-c")
			var r memory.DropNamespaceResponse
			x.ok(t, "DELETE", wire.NamespacePath("proj-c"), "", map[string]any{"confirm": true}, &r)
			if r.RecordsDeleted != c || r.RawEntriesDeleted != raw {
				t.Errorf("drop of proj-c: %+v; it held %d and %d", r, c, raw)
			}
			if c, raw := x.count(t, "proj-c"); c != 0 || raw != 0 {
				t.Errorf("proj-c holds %d and %d after the drop", c, raw)
			}
		}},
	}
	thenB := map[string]func(t *testing.T){
		key("PUT", wire.PathMode): func(t *testing.T) {
			// B, still human: its faded records (30 days old, below a
			// fidelity of 0.9) come back with words masked.
			b := x.do(t, "POST", wire.PathRecallQuery, keyAll, nsB, recentAll)
			idsB, textsB := recalled(t, b.body)
			masked := 0
			for i, id := range idsB {
				if j := slices.Index(x.ids[nsB], memory.MustParseID(id)); j >= 0 && j < len(nsText) && textsB[i] != nsText[j].text {
					masked++
				}
			}
			if masked == 0 {
				t.Errorf("after %s set perfect mode, %s's faded records come back unmasked: %q", nsA, nsB, textsB)
			}
		},
	}
	var want []string
	for _, rt := range wire.Routes() {
		want = append(want, key(rt.Method, rt.Path))
	}
	covered(t, "route", cases, want)
	x.run(t, cases, thenB)
}

// walkGRPC acts in namespace A through every method of the gRPC service.
func (x *isolation) walkGRPC(t *testing.T) {
	aID, bID := x.ids[nsA][0].String(), x.ids[nsB][0].String()
	ctxA := func(t *testing.T) context.Context { return rpcCtx(t, keyAll, nsA) }
	okRPC := func(t *testing.T, what string, m proto.Message, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s in %s: %v", what, nsA, err)
		}
		b, merr := protojson.Marshal(m)
		if merr != nil {
			t.Fatal(merr)
		}
		x.clean(t, what, string(b))
	}
	notFound := func(t *testing.T, what string, err error) {
		t.Helper()
		if status.Code(err) != codes.NotFound {
			t.Errorf("%s in %s of a record of %s: %v; want NOT_FOUND", what, nsA, nsB, err)
		}
	}
	text := func(s string) *pb.MemoryContent {
		return &pb.MemoryContent{Blocks: []*pb.ContentBlock{{Modality: pb.Modality_MODALITY_TEXT, Format: "text/plain", Data: []byte(s)}}}
	}
	raw := func(id, s string) *pb.EncodeStoreRawRequest {
		return &pb.EncodeStoreRawRequest{RecordId: proto.String(id), SessionId: "s1", TopicId: proto.String("keys"),
			Source: pb.RawSource_RAW_SOURCE_CONVERSATION, Speaker: pb.RawSpeaker_RAW_SPEAKER_USER,
			Visibility: pb.Visibility_VISIBILITY_NORMAL, SecrecyLevel: pb.SecrecyLevel_SECRECY_LEVEL_PUBLIC, Content: text(s)}
	}
	var archive []byte
	cases := []walkCase{
		{"EncodeStore", "a twin", func(t *testing.T) {
			r, err := x.rpc.EncodeStore(ctxA(t), &pb.EncodeStoreRequest{Content: text(nsText[4].text)})
			okRPC(t, "EncodeStore", r, err)
		}},
		{"EncodeBatch", "linked", func(t *testing.T) {
			r, err := x.rpc.EncodeBatch(ctxA(t), &pb.EncodeBatchRequest{InferAssociations: true, Records: []*pb.EncodeStoreRequest{{Content: text(nsText[2].text)}, {Content: text(nsText[3].text)}}})
			okRPC(t, "EncodeBatch", r, err)
		}},
		{"EncodeUpdate", "own; B's is not found", func(t *testing.T) {
			r, err := x.rpc.EncodeUpdate(ctxA(t), &pb.EncodeUpdateRequest{RecordId: aID, Content: text(nsText[0].text + " sharp")})
			okRPC(t, "EncodeUpdate", r, err)
			_, err = x.rpc.EncodeUpdate(ctxA(t), &pb.EncodeUpdateRequest{RecordId: bID, Content: text("taken over")})
			notFound(t, "EncodeUpdate", err)
		}},
		{"EncodeStoreRaw", "an id B holds", func(t *testing.T) {
			r, err := x.rpc.EncodeStoreRaw(ctxA(t), raw("0196a9e2-5c1d-7f00-8a00-0000000000b9", "user: again an id of proj-b's"))
			okRPC(t, "EncodeStoreRaw", r, err)
		}},
		{"EncodeBatchStoreRaw", "same session", func(t *testing.T) {
			r, err := x.rpc.EncodeBatchStoreRaw(ctxA(t), &pb.EncodeBatchStoreRawRequest{Records: []*pb.EncodeStoreRawRequest{raw("0196a9e2-5c1d-7f00-8a00-0000000000a5", "assistant: on fridays")}})
			okRPC(t, "EncodeBatchStoreRaw", r, err)
		}},
		{"RecallQuery", "text", func(t *testing.T) {
			r, err := x.rpc.RecallQuery(ctxA(t), &pb.RecallQueryRequest{Cue: &pb.RecallCue{Text: proto.String("deploy key rotates friday " + marker)}, Limit: proto.Uint32(1000)})
			okRPC(t, "RecallQuery", r, err)
			if curated, _ := x.count(t, nsA); r.GetTotalCandidates() > curated || len(r.GetMemories()) == 0 {
				t.Errorf("recall in %s: %d memories of %d candidates; it holds %d", nsA, len(r.GetMemories()), r.GetTotalCandidates(), curated)
			}
		}},
		{"RecallRawQuery", "the shared session", func(t *testing.T) {
			r, err := x.rpc.RecallRawQuery(ctxA(t), &pb.RecallRawQueryRequest{SessionId: proto.String("s1"), Limit: proto.Uint32(1000)})
			okRPC(t, "RecallRawQuery", r, err)
			if _, raw := x.count(t, nsA); r.GetTotalCandidates() != raw {
				t.Errorf("raw recall in %s: %d candidates; it holds %d", nsA, r.GetTotalCandidates(), raw)
			}
		}},
		{"RecallAssociate", "own; B's is not found", func(t *testing.T) {
			r, err := x.rpc.RecallAssociate(ctxA(t), &pb.RecallAssociateRequest{RecordId: aID})
			okRPC(t, "RecallAssociate", r, err)
			_, err = x.rpc.RecallAssociate(ctxA(t), &pb.RecallAssociateRequest{RecordId: bID})
			notFound(t, "RecallAssociate", err)
		}},
		{"RecallTimeline", "everything", func(t *testing.T) {
			r, err := x.rpc.RecallTimeline(ctxA(t), &pb.RecallTimelineRequest{Range: &pb.TemporalRange{
				Start: timestamppb.New(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)), End: timestamppb.New(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)),
			}, Granularity: pb.TimeGranularity_TIME_GRANULARITY_DAY, Limit: proto.Uint32(1000)})
			okRPC(t, "RecallTimeline", r, err)
		}},
		{"RecallGraph", "whole; around B's record empty", func(t *testing.T) {
			r, err := x.rpc.RecallGraph(ctxA(t), &pb.RecallGraphRequest{LimitNodes: proto.Uint32(1000)})
			okRPC(t, "RecallGraph", r, err)
			// Around B's record: nothing, as around any unknown id.
			r, err = x.rpc.RecallGraph(ctxA(t), &pb.RecallGraphRequest{CenterId: proto.String(bID)})
			if err != nil || len(r.GetNodes()) != 0 {
				t.Errorf("the graph in %s around a record of %s: %v %v", nsA, nsB, r, err)
			}
		}},
		{"Consolidate", "incremental", func(t *testing.T) {
			r, err := x.rpc.Consolidate(ctxA(t), &pb.ConsolidateRequest{})
			okRPC(t, "Consolidate", r, err)
		}},
		{"DreamTick", "what is pending", func(t *testing.T) {
			r, err := x.rpc.DreamTick(ctxA(t), &pb.DreamTickRequest{})
			okRPC(t, "DreamTick", r, err)
		}},
		{"DecayTick", "a day", func(t *testing.T) {
			r, err := x.rpc.DecayTick(ctxA(t), &pb.DecayTickRequest{TickDurationSeconds: proto.Uint32(24 * 3600)})
			okRPC(t, "DecayTick", r, err)
		}},
		{"SetMode", "human again", func(t *testing.T) {
			r, err := x.rpc.SetMode(ctxA(t), &pb.SetModeRequest{Mode: pb.RecallMode_RECALL_MODE_HUMAN})
			okRPC(t, "SetMode", r, err)
		}},
		{"Forget", "B's id deletes nothing", func(t *testing.T) {
			r, err := x.rpc.Forget(ctxA(t), &pb.ForgetRequest{RecordIds: []string{bID}, Confirm: proto.Bool(true)})
			okRPC(t, "Forget", r, err)
			if r.GetRecordsDeleted() != 0 {
				t.Errorf("forget in %s deleted %d records of %s", nsA, r.GetRecordsDeleted(), nsB)
			}
		}},
		{"Export", "A only", func(t *testing.T) {
			msgs, err := testkit.Invoke(ctxA(t), x.conn, testkit.ServiceMethod(t, "Export"), &pb.ExportRequest{IncludeRawJournal: true})
			if err != nil {
				t.Fatal(err)
			}
			archive = nil
			for _, m := range msgs {
				var part pb.ExportResponse
				b, _ := proto.Marshal(m)
				if err := proto.Unmarshal(b, &part); err != nil {
					t.Fatal(err)
				}
				archive = append(archive, part.GetData()...)
			}
			x.clean(t, "the gRPC archive of "+nsA, string(archive))
		}},
		{"Import", "into a fifth namespace", func(t *testing.T) {
			msgs, err := testkit.Invoke(rpcCtx(t, keyAll, "proj-e"), x.conn, testkit.ServiceMethod(t, "Import"),
				&pb.ImportRequest{Options: &pb.ImportOptions{ArchiveId: "a-to-e"}}, &pb.ImportRequest{Data: archive})
			if err != nil || len(msgs) != 1 {
				t.Fatalf("import: %v", err)
			}
			var r pb.ImportResponse
			b, _ := proto.Marshal(msgs[0])
			if err := proto.Unmarshal(b, &r); err != nil || r.GetRecordsSkipped() != 0 || r.GetRecordsImported() == 0 {
				t.Errorf("import of %s's archive into proj-e: %v %v", nsA, &r, err)
			}
		}},
		{"Stats", "own and all", func(t *testing.T) {
			own, err := x.rpc.Stats(ctxA(t), &pb.StatsRequest{})
			okRPC(t, "Stats", own, err)
			if curated, _ := x.count(t, nsA); own.GetTotalRecords() != curated {
				t.Errorf("gRPC stats of %s: %d records, HTTP %d", nsA, own.GetTotalRecords(), curated)
			}
			all, err := x.rpc.Stats(rpcCtx(t, keyAll, ""), &pb.StatsRequest{AllNamespaces: true})
			if err != nil || all.GetTotalRecords() <= own.GetTotalRecords() {
				t.Errorf("gRPC stats of all namespaces: %v %v", all, err)
			}
		}},
		{"IntrospectRecord", "own; B's is not found", func(t *testing.T) {
			r, err := x.rpc.IntrospectRecord(ctxA(t), &pb.IntrospectRecordRequest{RecordId: aID})
			okRPC(t, "IntrospectRecord", r, err)
			_, err = x.rpc.IntrospectRecord(ctxA(t), &pb.IntrospectRecordRequest{RecordId: bID})
			notFound(t, "IntrospectRecord", err)
		}},
		{"DecayForecast", "own; B's is not found", func(t *testing.T) {
			at := timestamppb.New(time.Now().Add(30 * 24 * time.Hour))
			r, err := x.rpc.DecayForecast(ctxA(t), &pb.DecayForecastRequest{RecordIds: []string{aID}, ForecastAt: at})
			okRPC(t, "DecayForecast", r, err)
			_, err = x.rpc.DecayForecast(ctxA(t), &pb.DecayForecastRequest{RecordIds: []string{bID}, ForecastAt: at})
			notFound(t, "DecayForecast", err)
		}},
		{"Evolution", "A's own", func(t *testing.T) {
			r, err := x.rpc.Evolution(ctxA(t), &pb.EvolutionRequest{})
			okRPC(t, "Evolution", r, err)
		}},
		{"Namespaces", "counts per namespace", func(t *testing.T) {
			r, err := x.rpc.Namespaces(ctxA(t), &pb.NamespacesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range r.GetNamespaces() {
				if c, raw := x.count(t, n.GetName()); n.GetTotalRecords() != c || n.GetRawJournalRecords() != raw {
					t.Errorf("gRPC listing of %s: %d and %d; its stats %d and %d", n.GetName(), n.GetTotalRecords(), n.GetRawJournalRecords(), c, raw)
				}
			}
		}},
		{"DropNamespace", "the fifth namespace", func(t *testing.T) {
			c, raw := x.count(t, "proj-e")
			r, err := x.rpc.DropNamespace(ctxA(t), &pb.DropNamespaceRequest{Name: "proj-e", Confirm: true})
			if err != nil || r.GetRecordsDeleted() != c || r.GetRawEntriesDeleted() != raw {
				t.Errorf("drop of proj-e: %v %v; it held %d and %d", r, err, c, raw)
			}
		}},
	}
	var want []string
	for _, m := range testkit.ServiceMethods(t) {
		want = append(want, string(m.Name()))
	}
	covered(t, "RPC", cases, want)
	x.run(t, cases, nil)
}

// walkMCP calls every tool of the MCP proxy, started with the key bound
// to namespace A and no --namespace: the key alone confines it.
func (x *isolation) walkMCP(t *testing.T) {
	out := t.TempDir()
	c := startMCP(t, []string{"MEMSVC_SERVER_API_KEY=" + keyA}, "--server-url", x.srv.url(""), "--export-dir", out)
	c.initialize()
	aID := x.ids[nsA][0].String()
	args := mcpToolArgs(aID, "walk.cma")
	order := []string{"store", "batch_store", "store_raw", "batch_store_raw", "update", "recall", "recall_raw", "associate",
		"timeline", "inspect", "stats", "consolidate", "dream_tick", "export", "forget"}
	var cases []walkCase
	for _, tool := range order {
		cases = append(cases, walkCase{tool, "in " + nsA, func(t *testing.T) {
			c.t = t
			text := c.ok(tool, args[tool])
			x.clean(t, "tool "+tool, text)
			switch tool {
			case "inspect":
				c.fails("inspect", map[string]any{"record_id": x.ids[nsB][0].String()}, "Not found")
			case "export":
				b, err := os.ReadFile(filepath.Join(out, "walk.cma"))
				if err != nil {
					t.Fatal(err)
				}
				x.clean(t, "the MCP archive", string(b))
			case "stats":
				var s memory.Stats
				if err := json.Unmarshal([]byte(text), &s); err != nil {
					t.Fatalf("stats: %v\n%s", err, text)
				}
				if curated, raw := x.count(t, nsA); s.TotalRecords != curated || s.RawJournalRecords != raw {
					t.Errorf("the stats tool counts %d and %d; %s holds %d and %d", s.TotalRecords, s.RawJournalRecords, nsA, curated, raw)
				}
			}
		}})
	}
	covered(t, "tool", cases, mcpTools(t, c))
	x.run(t, cases, nil)
	c.t = t
	c.close()
}

// embedded stops the server and uses the CLI on its data directory: each
// namespace shows only itself.
func (x *isolation) embedded(t *testing.T) {
	if err := x.srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("server exit: %v\n%s", err, x.srv.log())
	}
	memsvc := func(args ...string) result {
		return runBin(t, 60*time.Second, nil, "memsvc", append([]string{"--data-dir", x.dir}, args...)...)
	}
	r := memsvc("--namespace", nsA, "recall", "deploy key rotates friday "+marker, "--limit", "100", "--json")
	if r.code != 0 {
		t.Fatalf("recall in %s: %+v", nsA, r)
	}
	x.clean(t, "embedded recall in "+nsA, r.stdout)
	r = memsvc("--namespace", nsB, "recall", marker, "--json")
	if r.code != 0 || !hasMarker(r.stdout) {
		t.Errorf("recall in %s does not find its marker: %+v", nsB, r)
	}
	r = memsvc("namespaces", "--json")
	var list memory.NamespacesResponse
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil {
		t.Fatalf("namespaces: %+v", r)
	}
	counts := map[string]uint32{}
	for _, n := range list.Namespaces {
		counts[n.Name] = n.TotalRecords
	}
	if counts[nsA] == 0 || counts[nsB] != uint32(len(x.ids[nsB])) {
		t.Errorf("embedded listing %v; %s holds %d records", counts, nsB, len(x.ids[nsB]))
	}
	r = memsvc("namespace", "drop", nsA, "--confirm")
	if r.code != 0 {
		t.Fatalf("drop %s: %+v", nsA, r)
	}
	r = memsvc("--namespace", nsB, "stats", "--json")
	var s memory.Stats
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &s) != nil || s.TotalRecords != uint32(len(x.ids[nsB])) {
		t.Errorf("%s after dropping %s: %+v", nsB, nsA, r)
	}
}
