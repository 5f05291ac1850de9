package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/audit"
	"memsvc.dev/memsvc/pkg/memory"
)

// server is a running `memsvc serve`.
type server struct {
	*child
	t    testing.TB
	addr string
}

var listenRE = regexp.MustCompile(`HTTP +listening on (\S+)`)

// startServer runs memsvc serve on a free loopback port over dir.
func startServer(t *testing.T, dir string, env ...string) *server {
	t.Helper()
	return startCmd(t, binCmd(t, "memsvc", env, "serve", "--data-dir", dir, "--port", "0"))
}

// startCmd starts a prepared `memsvc serve` command and waits until it
// answers.
func startCmd(t testing.TB, cmd *exec.Cmd) *server {
	t.Helper()
	found := make(chan string, 1)
	c := startChild(t, cmd, func(line string) {
		if m := listenRE.FindStringSubmatch(line); m != nil {
			select {
			case found <- m[1]:
			default:
			}
		}
	})
	s := &server{child: c, t: t}
	select {
	case s.addr = <-found:
	case err := <-c.exited:
		t.Fatalf("server exited (%v):\n%s", err, s.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start:\n%s", s.log())
	}
	return s
}

func (s *server) url(path string) string { return "http://" + s.addr + path }

// stop signals the server and waits (bounded) for it to exit.
func (s *server) stop(sig os.Signal) error {
	s.t.Helper()
	return s.signalExit(s.t, sig)
}

// waitFor polls cond until it holds and returns how long that took; when
// limit passes first, the test fails naming what it waited for, with srv's
// log when srv is not nil.
func waitFor(t testing.TB, srv *server, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	var log func() string
	if srv != nil {
		log = srv.log
	}
	return testkit.WaitFor(t, limit, what, cond, log)
}

// textNote is the body of POST /v1/encode for one plain-text note.
func textNote(text string) map[string]any {
	return map[string]any{
		"content": map[string]any{"blocks": []map[string]any{{"modality": "text", "format": "text/plain", "data": []byte(text)}}},
	}
}

// storeNote stores one plain-text note on srv and returns its id; the
// store must succeed.
func storeNote(t *testing.T, srv *server, text string) memory.ID {
	t.Helper()
	var stored memory.EncodeStoreResponse
	if code := call(t, "POST", srv.url("/v1/encode"), textNote(text), &stored); code != 200 {
		t.Fatalf("store %q: %d", text, code)
	}
	return stored.RecordID
}

// storeNotes stores n notes, prefix followed by each note's number, and
// returns their ids in order.
func storeNotes(t *testing.T, srv *server, prefix string, n int) []memory.ID {
	t.Helper()
	ids := make([]memory.ID, 0, n)
	for i := range n {
		ids = append(ids, storeNote(t, srv, fmt.Sprint(prefix, i)))
	}
	return ids
}

// requireRecords fails unless srv serves every record of ids; when says
// at what point, for the message.
func requireRecords(t *testing.T, srv *server, ids []memory.ID, when string) {
	t.Helper()
	for _, id := range ids {
		var rec memory.MemoryRecord
		if code := call(t, "GET", srv.url("/v1/introspect/record/"+id.String()), nil, &rec); code != 200 || rec.ID != id {
			t.Fatalf("acknowledged record %s lost %s: %d", id, when, code)
		}
	}
}

// call sends a JSON request and decodes the JSON answer into out.
func call(t *testing.T, method, url string, body any, out any) int {
	t.Helper()
	a := testkit.Do(t, testkit.Request{Method: method, URL: url, Body: body, ContentType: "application/json"})
	if out != nil && len(a.Body) > 0 {
		if err := json.Unmarshal(a.Body, out); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, url, err, a.Body)
		}
	}
	return a.Status
}

func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir, "MEMSVC_HTTP__METRICS_ENABLED=true")

	// curl-style calls, as an upstream client would send them.
	var stored memory.EncodeStoreResponse
	code := call(t, "POST", srv.url("/v1/encode"), map[string]any{
		"content": map[string]any{"blocks": []map[string]any{{"modality": "text", "format": "text/plain", "data": []byte("the CI cache lives in bucket ci-cache-eu")}}},
		"store":   "semantic",
	}, &stored)
	if code != 200 || stored.Store != memory.StoreSemantic {
		t.Fatalf("encode: %d %+v", code, stored)
	}
	var envelope struct{ Code, Message string }
	if code := call(t, "GET", srv.url("/v1/introspect/record/not-a-uuid"), nil, &envelope); code != 400 || envelope.Code != "VALIDATION_ERROR" {
		t.Fatalf("bad uuid: %d %+v", code, envelope)
	}
	var recalled memory.RecallQueryResponse
	if code := call(t, "POST", srv.url("/v1/recall/query"), map[string]any{"cue": map[string]any{"text": "where is the CI cache"}}, &recalled); code != 200 || len(recalled.Memories) != 1 {
		t.Fatalf("recall: %d %+v", code, recalled)
	}

	// The CLI through the server gives the same output as embedded.
	memsvc := func(args ...string) result {
		return runBin(t, 30*time.Second, []string{"MEMSVC_SERVER_URL=" + srv.url("")}, "memsvc", args...)
	}
	r := memsvc("store", "stored through the CLI", "--store", "procedural")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "Stored: ") || !strings.Contains(r.stdout, "(store: procedural, fidelity: 1)") {
		t.Fatalf("cli store: %+v", r)
	}
	r = memsvc("recall", "CI cache", "--mode", "perfect")
	if r.code != 0 || !strings.Contains(r.stdout, "Found 1 memories") || !strings.Contains(r.stdout, "bucket ci-cache-eu") {
		t.Fatalf("cli recall: %+v", r)
	}
	r = memsvc("stats", "--json")
	var s memory.Stats
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.TotalRecords != 2 || !s.BackgroundDecayEnabled {
		t.Fatalf("cli stats: %v %+v", err, r)
	}
	r = runBin(t, 30*time.Second, nil, "memsvc", "--server-url", srv.url(""), "inspect", stored.RecordID.String())
	if r.code != 0 || !strings.Contains(r.stdout, stored.RecordID.String()) {
		t.Fatalf("cli inspect --server-url: %+v", r)
	}
	// While the server holds the directory, embedded mode says what to do.
	r = runBin(t, 30*time.Second, nil, "memsvc", "--data-dir", dir, "stats")
	if r.code != 1 || !strings.Contains(r.stderr, "--server-url") {
		t.Fatalf("embedded stats on a served directory: %+v", r)
	}
	port := srv.addr[strings.LastIndex(srv.addr, ":")+1:]
	if r := runBin(t, 30*time.Second, []string{"MEMSVC_HTTP__PORT=" + port}, "memsvc", "healthcheck"); r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("healthcheck: %+v", r)
	}
	if r := runBin(t, 30*time.Second, nil, "memsvc", "healthcheck", "--port", port); r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("healthcheck --port %s: %+v", port, r)
	}

	// /metrics parses as Prometheus text with exactly the spec's series
	// and memsvc's operational ones (nothing else, such as Go runtime or
	// process metrics) and route templates as labels.
	resp, err := http.Get(srv.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("metrics do not parse: %v", err)
	}
	var got []string
	for name := range families {
		got = append(got, name)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(append(slices.Clone(specMetrics), opsMetrics...)))
	if !slices.Equal(got, want) {
		t.Errorf("metric families served:\n  %s\nwant exactly the spec's and the operational ones:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	sawTemplate := false
	for _, m := range families["memsvc_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "path" {
				if strings.Contains(l.GetValue(), "not-a-uuid") {
					t.Errorf("raw path in a label: %s", l.GetValue())
				}
				sawTemplate = sawTemplate || l.GetValue() == "/v1/introspect/record/{record_id}"
			}
		}
	}
	if !sawTemplate {
		t.Error("route template label missing")
	}

	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("server exit after SIGTERM: %v\n%s", err, srv.log())
	}
	if !strings.Contains(srv.log(), "shutdown complete") {
		t.Fatalf("no clean shutdown:\n%s", srv.log())
	}
	if _, err := audit.VerifyFile(filepath.Join(dir, "audit.jsonl")); err != nil {
		t.Fatal(err)
	}
}

// specMetrics are the series of the spec's metrics table ("Metrics series
// (at /metrics)"), sorted. The scenario of TestServeEndToEnd touches every
// one, so each has at least one sample and is served.
var specMetrics = []string{
	"memsvc_decay_panics_total",
	"memsvc_encode_duration_seconds",
	"memsvc_encode_total",
	"memsvc_http_request_duration_seconds",
	"memsvc_http_requests_total",
	"memsvc_recall_duration_seconds",
	"memsvc_recall_total",
}

// opsMetrics are the series memsvc serves beyond the spec's table, for
// the dashboard and alert rules of deploy-docs (README, "Monitoring").
// Each is served from the start.
var opsMetrics = []string{
	"memsvc_audit_append_failures_total",
	"memsvc_background_rounds_total",
	"memsvc_config_last_reload_successful",
	"memsvc_dream_pending_entries",
	"memsvc_records",
	"memsvc_storage_free_bytes",
	"memsvc_storage_min_free_bytes",
}

// TestHealthcheckNothingListening: healthcheck --port against a port no
// server listens on fails and names the address it tried.
func TestHealthcheckNothingListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	port := addr[strings.LastIndex(addr, ":")+1:]
	r := runBin(t, 30*time.Second, nil, "memsvc", "healthcheck", "--port", port)
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, addr) {
		t.Fatalf("healthcheck --port %s with nothing listening: exit %d, stdout %q, stderr %q; want a failure naming %s", port, r.code, r.stdout, r.stderr, addr)
	}
}

// TestKillAndRestart: kill -9 the server while it works, restart it on the
// same directory, and find every acknowledged write.
func TestKillAndRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	acked := storeNotes(t, srv, "note ", 50)
	_ = srv.stop(syscall.SIGKILL)
	srv = startServer(t, dir)
	requireRecords(t, srv, acked, "after kill -9")
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rep, err := audit.VerifyFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil || rep.Entries < 50 {
		t.Fatalf("audit after kill and restart: %+v %v", rep, err)
	}
}
