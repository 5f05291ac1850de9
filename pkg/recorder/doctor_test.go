package recorder

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

// doctorServer answers the four routes doctor uses with the configured
// statuses and records the bodies it got.
type doctorServer struct {
	status map[string]int // path -> status (default 200)
	mu     sync.Mutex
	bodies map[string][]byte
}

func (d *doctorServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body bytes.Buffer
	_, _ = body.ReadFrom(r.Body)
	d.mu.Lock()
	d.bodies[r.URL.Path] = body.Bytes()
	d.mu.Unlock()
	if s := d.status[r.URL.Path]; s != 0 && s != 200 {
		code := map[int]memory.Code{401: memory.CodeUnauthorized, 429: memory.CodeRateLimited, 503: memory.CodeDecayEngineBusy}[s]
		if code == "" {
			code = memory.CodeInternal
		}
		if r.URL.Path == "/readiness" {
			w.WriteHeader(s)
			_, _ = w.Write([]byte(`{"status":"not_ready","reason":"storage unavailable"}`))
			return
		}
		writeEnvelope(w, s, code, "nope")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/encode/raw/batch":
		_, _ = w.Write([]byte(`{"results":[{"record_id":"0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f","session_id":"x","visibility":"private_scratch","secrecy_level":"sensitive","duplicate":false}]}`))
	case "/v1/recall/raw":
		_, _ = w.Write([]byte(`{"records":[],"total_candidates":0}`))
	default:
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}
}

func runDoctor(t *testing.T, status map[string]int, skip, keySet bool, spoolDir string) ([]Check, *doctorServer) {
	t.Helper()
	ds := &doctorServer{status: status, bodies: map[string][]byte{}}
	srv := httptest.NewServer(ds)
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if spoolDir == "" {
		spoolDir = filepath.Join(t.TempDir(), "spool")
	}
	checks := Doctor(t.Context(), DoctorOptions{Service: c, ServerURL: srv.URL, SpoolDir: spoolDir, SkipRawIngestProbe: skip, APIKeySet: keySet})
	return checks, ds
}

func report(checks []Check) string {
	var b strings.Builder
	_ = WriteReport(&b, checks)
	return b.String()
}

func TestDoctor(t *testing.T) {
	publicDir := filepath.Join(t.TempDir(), "public")
	if err := os.Mkdir(publicDir, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(publicDir, 0o755)
	cases := []struct {
		name   string
		status map[string]int
		skip   bool
		keySet bool
		spool  string
		want   []string // line prefixes, in order
	}{
		{"all well", nil, false, false, "", []string{"ok health - ", "ok readiness - ", "ok spool - writable at ", "ok raw_ingest - accepted 1 record (private_scratch"}},
		{"all well, skipping the probe", nil, true, true, "", []string{"ok health", "ok readiness", "ok spool", "ok auth - raw recall with limit 0 accepted using MEMSVC_SERVER_API_KEY", "ok raw_ingest - skipped by --skip-raw-ingest-probe"}},
		{"not ready", map[string]int{"/readiness": 503}, false, false, "", []string{"ok health", "fail readiness - memsvc server not ready: storage unavailable", "ok spool", "ok raw_ingest"}},
		{"wrong key", map[string]int{"/v1/encode/raw/batch": 401}, false, true, "", []string{"ok health", "ok readiness", "ok spool", "fail auth - server rejected MEMSVC_SERVER_API_KEY (HTTP 401)"}},
		{"key missing", map[string]int{"/v1/recall/raw": 401}, true, false, "", []string{"ok health", "ok readiness", "ok spool", "fail auth - server requires an API key (HTTP 401): set MEMSVC_SERVER_API_KEY", "ok raw_ingest - skipped"}},
		{"rate limited", map[string]int{"/v1/encode/raw/batch": 429}, false, false, "", []string{"ok health", "ok readiness", "ok spool", "fail raw_ingest - rate limited (HTTP 429); retry after 1s"}},
		{"server error", map[string]int{"/v1/encode/raw/batch": 500, "/health": 500}, false, false, "", []string{"fail health - ", "ok readiness", "ok spool", "fail raw_ingest - HTTP 500"}},
		{"public spool directory", nil, false, false, publicDir, []string{"ok health", "ok readiness", "fail spool - spool directory is not private", "ok raw_ingest"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.spool == publicDir && !privateDirs() {
				t.Skip("no permission bits here")
			}
			checks, ds := runDoctor(t, tc.status, tc.skip, tc.keySet, tc.spool)
			out := report(checks)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("report:\n%s", out)
			}
			failing := 0
			for i, w := range tc.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d: %q, want prefix %q", i, lines[i], w)
				}
				if strings.HasPrefix(w, "fail") {
					failing++
				}
			}
			if FailedChecks(checks) != failing {
				t.Fatalf("FailedChecks = %d, want %d", FailedChecks(checks), failing)
			}
			if tc.skip {
				if _, wrote := ds.bodies["/v1/encode/raw/batch"]; wrote {
					t.Fatal("--skip-raw-ingest-probe wrote a record")
				}
				var q map[string]any
				_ = json.Unmarshal(ds.bodies["/v1/recall/raw"], &q)
				if q["limit"] != float64(0) || !strings.HasPrefix(q["session_id"].(string), "recorder-doctor-auth-probe-") {
					t.Fatalf("auth probe body %v", q)
				}
			} else if tc.status["/v1/encode/raw/batch"] == 0 {
				var b memory.EncodeBatchStoreRawRequest
				if err := json.Unmarshal(ds.bodies["/v1/encode/raw/batch"], &b); err != nil || len(b.Records) != 1 {
					t.Fatalf("probe body: %v", err)
				}
				rec := b.Records[0]
				if rec.Visibility != memory.VisibilityPrivateScratch || rec.Source != memory.SourceSummary || rec.RecordID == nil ||
					!strings.HasPrefix(rec.SessionID, "recorder-doctor-") || !strings.Contains(string(rec.Metadata), `"doctor_probe":true`) {
					t.Fatalf("probe record %+v", rec)
				}
			}
		})
	}
}

func TestDoctorServerDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := NewClient(url, ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checks := Doctor(t.Context(), DoctorOptions{Service: c, ServerURL: url, SpoolDir: filepath.Join(t.TempDir(), "s")})
	out := report(checks)
	if FailedChecks(checks) != 3 || !strings.Contains(out, "fail health - memsvc server at") || !strings.Contains(out, "ok spool") {
		t.Fatalf("report:\n%s", out)
	}
}
