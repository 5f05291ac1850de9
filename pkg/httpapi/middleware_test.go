package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"memsvc.dev/memsvc/internal/testkit"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

func TestRequestID(t *testing.T) {
	// Failed authentication spends from the address's bucket, so the
	// burst covers the 401 cases below; the clock is frozen, so nothing
	// refills while the test runs.
	const burst = 8
	f := newFixture(t, newEngine(t), Options{AuthEnabled: true, APIKeys: []string{"k"}, RateLimit: RateLimit{RequestsPerSecond: 1, Burst: burst}, Now: fixedNow})
	auth := map[string]string{"Authorization": "Bearer k"}
	// Spend the key's tokens so that the 429 cases can be reached.
	for i := range burst {
		if resp, _ := f.do(t, request{method: http.MethodGet, path: wire.PathStats, header: auth}); resp.StatusCode != 200 {
			t.Fatalf("stats %d: %d", i, resp.StatusCode)
		}
	}
	tests := []struct {
		name   string
		rq     request
		sent   string // x-request-id sent; "" sends none
		status int
		// inEnvelope: the id must appear in the error body.
		inEnvelope bool
	}{
		{"health generated", request{method: http.MethodGet, path: wire.PathHealth}, "", 200, false},
		{"health echoed opaque", request{method: http.MethodGet, path: wire.PathHealth}, "trace-42", 200, false},
		{"404 generated", request{method: http.MethodGet, path: "/nope"}, "", 404, false},
		{"405 echoed", request{method: http.MethodPut, path: wire.PathHealth}, "abc", 405, false},
		{"401 generated", request{method: http.MethodGet, path: wire.PathStats}, "", 401, true},
		{"401 uuid", request{method: http.MethodGet, path: wire.PathStats}, testRequestID, 401, true},
		{"401 simple uuid", request{method: http.MethodGet, path: wire.PathStats}, strings.ReplaceAll(testRequestID, "-", ""), 401, true},
		{"401 braced uuid", request{method: http.MethodGet, path: wire.PathStats}, "{" + testRequestID + "}", 401, true},
		{"401 opaque", request{method: http.MethodGet, path: wire.PathStats}, "my-own-id", 401, false},
		{"429 uuid", request{method: http.MethodGet, path: wire.PathStats, header: auth}, testRequestID, 429, true},
		{"429 opaque", request{method: http.MethodGet, path: wire.PathStats, header: auth}, "x", 429, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rq := tc.rq
			hdr := map[string]string{}
			for k, v := range rq.header {
				hdr[k] = v
			}
			if tc.sent != "" {
				hdr[wire.HeaderRequestID] = tc.sent
			}
			rq.header = hdr
			resp, body := f.do(t, rq)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			got := resp.Header.Get(wire.HeaderRequestID)
			if tc.sent != "" && got != strings.TrimSpace(tc.sent) {
				// Go's client trims header values; the server echoes
				// what arrived.
				t.Errorf("x-request-id = %q, want %q", got, tc.sent)
			}
			if tc.sent == "" {
				id, err := memory.ParseID(got)
				if err != nil || id[6]>>4 != 4 || id[8]>>6 != 2 {
					t.Errorf("generated x-request-id %q is not a UUID v4", got)
				}
			}
			if tc.status < 400 || tc.status == 404 || tc.status == 405 {
				return
			}
			env := envelope(t, resp, body)
			raw, ok := env["request_id"]
			if ok != tc.inEnvelope {
				t.Fatalf("request_id in envelope = %v, want %v (%s)", ok, tc.inEnvelope, body)
			}
			if ok && jsonString(t, raw) != got {
				t.Errorf("envelope request_id %s, header %q", raw, got)
			}
		})
	}
}

func TestAuth(t *testing.T) {
	f := newFixture(t, newEngine(t), Options{AuthEnabled: true, APIKeys: []string{"first-key", "k2"}, MetricsEnabled: true})
	tests := []struct {
		name   string
		method string
		path   string
		auth   string // Authorization header; "" sends none
		status int
		msg    string
	}{
		{"no header", http.MethodGet, wire.PathStats, "", 401, msgMissingAuth},
		{"basic scheme", http.MethodGet, wire.PathStats, "Basic Zmlyc3Q6a2V5", 401, msgMissingAuth},
		{"lower-case bearer", http.MethodGet, wire.PathStats, "bearer first-key", 200, ""},
		{"upper-case bearer", http.MethodGet, wire.PathStats, "BEARER k2", 200, ""},
		{"mixed-case bearer", http.MethodGet, wire.PathStats, "bEaReR first-key", 200, ""},
		{"bearer without space", http.MethodGet, wire.PathStats, "Bearerfirst-key", 401, msgMissingAuth},
		{"wrong key", http.MethodGet, wire.PathStats, "Bearer nope", 401, access.MsgInvalidKey},
		{"prefix of key", http.MethodGet, wire.PathStats, "Bearer first", 401, access.MsgInvalidKey},
		{"key with suffix", http.MethodGet, wire.PathStats, "Bearer first-key2", 401, access.MsgInvalidKey},
		{"extra space", http.MethodGet, wire.PathStats, "Bearer  first-key", 401, access.MsgInvalidKey},
		// HTTP trims the trailing space: the header is "Bearer".
		{"empty token", http.MethodGet, wire.PathStats, "Bearer ", 401, msgMissingAuth},
		{"first key", http.MethodGet, wire.PathStats, "Bearer first-key", 200, ""},
		{"second key", http.MethodGet, wire.PathStats, "Bearer k2", 200, ""},
		{"metrics without key", http.MethodGet, wire.PathMetrics, "", 401, msgMissingAuth},
		{"metrics with key", http.MethodGet, wire.PathMetrics, "Bearer k2", 200, ""},
		{"health needs none", http.MethodGet, wire.PathHealth, "", 200, ""},
		{"readiness needs none", http.MethodGet, wire.PathReadiness, "", 200, ""},
		{"wrong method: auth first", http.MethodGet, wire.PathEncode, "", 401, msgMissingAuth},
		{"wrong method with key", http.MethodGet, wire.PathEncode, "Bearer k2", 405, ""},
		{"unknown path", http.MethodGet, "/v1/unknown", "", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rq := request{method: tc.method, path: tc.path, header: map[string]string{"Authorization": tc.auth}}
			resp, body := f.do(t, rq)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if resp.Header.Get("WWW-Authenticate") != "" {
				t.Errorf("unexpected WWW-Authenticate")
			}
			if tc.status != 401 {
				return
			}
			env := envelope(t, resp, body)
			if c := jsonString(t, env["code"]); c != string(memory.CodeUnauthorized) {
				t.Errorf("code %s", c)
			}
			if m := jsonString(t, env["message"]); m != tc.msg {
				t.Errorf("message %q, want %q", m, tc.msg)
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	clock := testkit.NewClock(t0)
	eng := newEngine(t)
	f := newFixture(t, eng, Options{
		AuthEnabled: true, APIKeys: []string{"ka", "kb"},
		RateLimit: RateLimit{RequestsPerSecond: 1, Burst: 2},
		Now:       clock.Now, MetricsEnabled: true,
	})
	call := func(key, path string) (*http.Response, []byte) {
		return f.do(t, request{method: http.MethodGet, path: path, header: map[string]string{"Authorization": "Bearer " + key}})
	}
	steps := []struct {
		advance    time.Duration
		key, path  string
		status     int
		retryAfter string
	}{
		{0, "ka", wire.PathStats, 200, ""},
		{0, "ka", wire.PathMetrics, 200, ""}, // /metrics draws from the same bucket
		{0, "ka", wire.PathStats, 429, "2"},  // exactly 1 s to wait: truncated + 1
		{0, "kb", wire.PathStats, 200, ""},   // same address, other key
		{0, "wrong", wire.PathStats, 401, ""},
		{0, "ka", wire.PathHealth, 200, ""}, // probes are exempt
		{0, "ka", wire.PathReadiness, 200, ""},
		{500 * time.Millisecond, "ka", wire.PathStats, 429, "1"},
		{500 * time.Millisecond, "ka", wire.PathStats, 200, ""},
		{0, "ka", "/v1/encode", 429, "2"}, // a 405 still costs a token first
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		resp, body := call(s.key, s.path)
		if resp.StatusCode != s.status {
			t.Fatalf("step %d: status %d, want %d: %s", i, resp.StatusCode, s.status, body)
		}
		if got := resp.Header.Get(wire.HeaderRetryAfter); got != s.retryAfter {
			t.Errorf("step %d: Retry-After %q, want %q", i, got, s.retryAfter)
		}
		if s.status != 429 {
			continue
		}
		env := envelope(t, resp, body)
		if c := jsonString(t, env["code"]); c != string(memory.CodeRateLimited) {
			t.Errorf("step %d: code %s", i, c)
		}
		if string(env["retry_after"]) != s.retryAfter {
			t.Errorf("step %d: retry_after %s, want %s", i, env["retry_after"], s.retryAfter)
		}
	}
}

// TestSharedGate: a Gate passed in Options is the one used, in place of one
// built from AuthEnabled, APIKeys and RateLimit, so two servers given the
// same Gate spend from the same buckets and take the same keys.
func TestSharedGate(t *testing.T) {
	clock := testkit.NewClock(t0)
	shared := access.NewGate(access.Policy{Keys: testkit.Keyring(t, "k"), Rate: RateLimit{RequestsPerSecond: 1, Burst: 2}}, clock.Now)
	// The other options would allow far more; they must be ignored.
	opts := Options{AuthEnabled: true, APIKeys: []string{"other"}, Gate: shared, RateLimit: RateLimit{RequestsPerSecond: 1000, Burst: 1000}}
	eng := newEngine(t)
	first, second := newFixture(t, eng, opts), newFixture(t, eng, opts)
	steps := []struct {
		f      *fixture
		status int
	}{{first, 200}, {second, 200}, {first, 429}, {second, 429}}
	for i, s := range steps {
		resp, body := s.f.do(t, request{method: http.MethodGet, path: wire.PathStats, header: map[string]string{"Authorization": "Bearer k"}})
		if resp.StatusCode != s.status {
			t.Fatalf("step %d: status %d, want %d: %s", i, resp.StatusCode, s.status, body)
		}
	}
	if n := shared.Clients(); n != 1 {
		t.Fatalf("the shared gate holds %d buckets, want the key's one", n)
	}
}

// TestRateLimitByAddress drives the handler directly to control the peer
// address.
func TestRateLimitByAddress(t *testing.T) {
	clock := testkit.NewClock(t0)
	srv, err := New(&stubService{}, Options{
		RateLimit:         RateLimit{RequestsPerSecond: 1, Burst: 1},
		TrustedProxyCIDRs: []string{"10.0.0.0/8", "fd00::/8"},
		Now:               clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		remote string
		hdr    map[string]string
		status int
	}{
		{"192.0.2.1:1000", nil, 200},
		{"192.0.2.1:2000", nil, 429}, // same address, other port
		{"192.0.2.2:1000", nil, 200},
		// An untrusted peer cannot pick its identity.
		{"192.0.2.1:1000", map[string]string{"X-Forwarded-For": "198.51.100.7"}, 429},
		{"192.0.2.1:1000", map[string]string{"X-Real-IP": "198.51.100.8"}, 429},
		// A trusted proxy names the client.
		{"10.1.1.1:5000", map[string]string{"X-Forwarded-For": "198.51.100.7"}, 200},
		{"10.2.2.2:5000", map[string]string{"X-Forwarded-For": "198.51.100.7"}, 429},
		{"10.1.1.1:5000", map[string]string{"X-Forwarded-For": "spoofed, 198.51.100.9, 10.3.3.3"}, 200},
		{"10.1.1.1:5000", map[string]string{"X-Forwarded-For": "198.51.100.9"}, 429},
		{"10.1.1.1:5000", map[string]string{"X-Real-IP": " 198.51.100.10 "}, 200},
		// Nothing usable: the proxy itself.
		{"10.1.1.1:5000", map[string]string{"X-Forwarded-For": "10.9.9.9, not-an-ip"}, 200},
		{"10.1.1.1:6000", nil, 429},
		{"[fd00::1]:443", map[string]string{"X-Forwarded-For": "2001:db8::1"}, 200},
		{"[fd00::2]:443", map[string]string{"X-Forwarded-For": "2001:db8::1"}, 429},
	}
	for i, s := range steps {
		if got := statsFrom(srv, s.remote, s.hdr); got != s.status {
			t.Fatalf("step %d (%s %v): status %d, want %d", i, s.remote, s.hdr, got, s.status)
		}
	}
}

func TestClientAddr(t *testing.T) {
	srv, err := New(&stubService{}, Options{TrustedProxyCIDRs: []string{"10.0.0.0/8", " 127.0.0.1/32 "}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		remote string
		xff    []string
		xri    string
		want   string
	}{
		{"192.0.2.1:80", nil, "", "192.0.2.1"},
		{"192.0.2.1:80", []string{"198.51.100.1"}, "198.51.100.2", "192.0.2.1"},
		{"[::ffff:192.0.2.1]:80", nil, "", "192.0.2.1"},
		{"[2001:db8::1]:80", nil, "", "2001:db8::1"},
		{"127.0.0.1:80", []string{"198.51.100.1, 198.51.100.2"}, "", "198.51.100.2"},
		{"127.0.0.1:80", []string{"198.51.100.1", "198.51.100.2, 10.0.0.5"}, "", "198.51.100.2"},
		{"127.0.0.1:80", []string{"198.51.100.1:8080"}, "198.51.100.3", "198.51.100.1"},
		{"127.0.0.1:80", []string{"[2001:db8::9]:8080"}, "", "2001:db8::9"},
		{"127.0.0.1:80", []string{"10.0.0.1"}, "", "127.0.0.1"},
		// X-Real-IP only without X-Forwarded-For: a client behind a proxy
		// that appends to X-Forwarded-For cannot name another address.
		{"127.0.0.1:80", []string{"10.0.0.1"}, "198.51.100.9", "127.0.0.1"},
		{"127.0.0.1:80", []string{"garbage"}, "198.51.100.9", "127.0.0.1"},
		{"127.0.0.1:80", nil, "198.51.100.9", "198.51.100.9"},
		{"192.0.2.1:80", nil, "198.51.100.9", "192.0.2.1"},
		{"127.0.0.1:80", nil, "garbage", "127.0.0.1"},
		{"127.0.0.1:80", []string{"::ffff:198.51.100.4"}, "", "198.51.100.4"},
		{"not an address", nil, "", "0.0.0.0"},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tc.remote
		for _, v := range tc.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if tc.xri != "" {
			r.Header.Set("X-Real-IP", tc.xri)
		}
		if got := srv.clientAddr(r); got != netip.MustParseAddr(tc.want) {
			t.Errorf("clientAddr(%s, %v, %q) = %s, want %s", tc.remote, tc.xff, tc.xri, got, tc.want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  memory.Service
		opts Options
		msg  string
	}{
		{"no service", nil, Options{}, "a service is required"},
		{"auth without keys", &stubService{}, Options{AuthEnabled: true}, "without API keys"},
		{"blank key", &stubService{}, Options{AuthEnabled: true, APIKeys: []string{""}}, "blank"},
		{"bare IP as CIDR", &stubService{}, Options{TrustedProxyCIDRs: []string{"10.0.0.1"}}, `"10.0.0.1"`},
		{"metrics without gatherer", &stubService{}, Options{MetricsEnabled: true}, "gatherer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.svc, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("New: %v, want an error containing %q", err, tc.msg)
			}
		})
	}
	// Keys are ignored when authentication is off.
	if _, err := New(&stubService{}, Options{APIKeys: []string{""}}); err != nil {
		t.Errorf("keys with auth off: %v", err)
	}
}

func TestCORS(t *testing.T) {
	const site = "https://app.example.com"
	preflight := func(origin string) map[string]string {
		return map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}
	}
	tests := []struct {
		name    string
		origins []string
		method  string
		hdr     map[string]string
		status  int
		want    map[string]string // expected headers; "" means absent
	}{
		{"off: no headers", nil, http.MethodGet, map[string]string{"Origin": site}, 401, map[string]string{"Access-Control-Allow-Origin": "", "Vary": ""}},
		{"off: pre-flight is routed", nil, http.MethodOptions, preflight(site), 401, map[string]string{"Access-Control-Allow-Origin": ""}},
		{"list: pre-flight before auth", []string{site}, http.MethodOptions, preflight(site), 200, map[string]string{
			"Access-Control-Allow-Origin":      site,
			"Access-Control-Allow-Methods":     corsAllowMethods,
			"Access-Control-Allow-Headers":     "authorization, content-type",
			"Access-Control-Allow-Credentials": "",
		}},
		{"list: other origin", []string{site}, http.MethodOptions, preflight("https://evil.example"), 200, map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Headers": ""}},
		{"list: actual request", []string{site}, http.MethodGet, map[string]string{"Origin": site}, 401, map[string]string{
			"Access-Control-Allow-Origin":   site,
			"Access-Control-Expose-Headers": corsExposeHeaders,
		}},
		{"list: no origin", []string{site}, http.MethodGet, nil, 401, map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"}},
		{"wildcard: reflect with credentials", []string{"*"}, http.MethodOptions, preflight("https://any.example"), 200, map[string]string{
			"Access-Control-Allow-Origin":      "https://any.example",
			"Access-Control-Allow-Credentials": "true",
			"Access-Control-Allow-Headers":     "authorization, content-type",
		}},
		{"wildcard: actual request", []string{"*"}, http.MethodGet, map[string]string{"Origin": "http://localhost:3000"}, 401, map[string]string{
			"Access-Control-Allow-Origin":      "http://localhost:3000",
			"Access-Control-Allow-Credentials": "true",
		}},
		{"wildcard: opaque origin", []string{"*"}, http.MethodOptions, preflight("null"), 200, map[string]string{"Access-Control-Allow-Origin": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &stubService{}, Options{CORSOrigins: tc.origins, AuthEnabled: true, APIKeys: []string{"k"}})
			resp, body := f.do(t, request{method: tc.method, path: wire.PathStats, header: tc.hdr})
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			for k, v := range tc.want {
				got := strings.Join(resp.Header.Values(k), ", ")
				if k == "Vary" && v != "" {
					if !strings.Contains(got, v) {
						t.Errorf("Vary = %q, want it to contain %q", got, v)
					}
					continue
				}
				if got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if resp.Header.Get(wire.HeaderRequestID) == "" {
				t.Error("no x-request-id")
			}
		})
	}
}

func TestReadiness(t *testing.T) {
	failing := errors.New("disk unplugged")
	tests := []struct {
		name   string
		ready  func(ctx context.Context) error
		status int
		reason string
	}{
		{"default uses stats", nil, 200, ""},
		{"hook ok", func(context.Context) error { return nil }, 200, ""},
		{"hook fails", func(context.Context) error { return failing }, 503, "engine check failed"},
		{"decay busy", func(context.Context) error { return &memory.Error{Code: memory.CodeDecayEngineBusy, Message: "busy"} }, 503, "decay engine busy"},
		{"hook hangs", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, 503, "engine check timed out"},
		{"reason given", func(context.Context) error {
			return fmt.Errorf("check: %w", &NotReadyError{Reason: "audit log cannot append (no space left on device)", Err: failing})
		}, 503, "audit log cannot append (no space left on device)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, &stubService{}, Options{Ready: tc.ready, ReadyTimeout: 10 * time.Millisecond, AuthEnabled: true, APIKeys: []string{"k"}})
			resp, body := f.do(t, request{method: http.MethodGet, path: wire.PathReadiness})
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			var h wire.Health
			if err := json.Unmarshal(body, &h); err != nil {
				t.Fatal(err)
			}
			if tc.status == 200 {
				if string(body) != `{"status":"ready"}` {
					t.Errorf("body %s", body)
				}
				return
			}
			if h.Status != wire.HealthNotReady || h.Reason != tc.reason {
				t.Errorf("body %s, want not_ready %q", body, tc.reason)
			}
			if resp.Header.Get(wire.HeaderRetryAfter) == "" {
				t.Error("no Retry-After")
			}
			if strings.Contains(string(body), failing.Error()) {
				t.Error("the cause leaked into the answer")
			}
			// Liveness is not affected.
			if resp, _ := f.do(t, request{method: http.MethodGet, path: wire.PathHealth}); resp.StatusCode != 200 {
				t.Errorf("health %d", resp.StatusCode)
			}
		})
	}
}

// TestReadinessDetail: what ReadyDetail lists goes into the answer, ready
// or not, and a server without it answers the bare status.
func TestReadinessDetail(t *testing.T) {
	detail := []string{"disk space low", "1 stored value quarantined"}
	for _, notReady := range []bool{false, true} {
		ready := func(context.Context) error { return nil }
		if notReady {
			ready = func(context.Context) error { return &NotReadyError{Reason: "audit log cannot append"} }
		}
		f := newFixture(t, &stubService{}, Options{Ready: ready, ReadyDetail: func() []string { return detail }})
		resp, body := f.do(t, request{method: http.MethodGet, path: wire.PathReadiness})
		var h wire.Health
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(h.Detail, detail) || (resp.StatusCode == 503) != notReady {
			t.Errorf("not ready %v: %d %s", notReady, resp.StatusCode, body)
		}
	}
}

// TestInternalErrors checks that causes stay in the log.
func TestInternalErrors(t *testing.T) {
	svc := &stubService{decay: func(ctx context.Context, req *memory.DecayTickRequest) (*memory.DecayTickResponse, error) {
		switch *req.TickDurationSeconds {
		case 1:
			return nil, fmt.Errorf("tick: %w", errors.New("disk on fire at /var/lib/secret"))
		case 2:
			panic("boom in the engine")
		case 3:
			return nil, fmt.Errorf("wrapped: %w", memory.Errorf(memory.CodeExportFailed, "archive write failed"))
		case 4:
			return nil, nil
		case 6:
			return nil, memory.Errorf(memory.CodeUnauthorized, "store passphrase does not decrypt record")
		default:
			return &memory.DecayTickResponse{RecordsUpdated: 1}, nil
		}
	}}
	f := newFixture(t, svc, Options{})
	tests := []struct {
		secs   int
		status int
		code   memory.Code
		msg    string
		logged string
	}{
		{1, 500, memory.CodeInternal, internalMessage, "disk on fire"},
		{2, 500, memory.CodeInternal, internalMessage, "boom in the engine"},
		{3, 500, memory.CodeExportFailed, "archive write failed", "archive write failed"},
		{4, 500, memory.CodeInternal, internalMessage, "neither a result nor an error"},
		{6, 500, memory.CodeInternal, internalMessage, "store passphrase does not decrypt"},
		{5, 200, "", "", ""},
	}
	for _, tc := range tests {
		resp, body := f.do(t, request{method: http.MethodPost, path: wire.PathDecayTick, body: fmt.Sprintf(`{"tick_duration_seconds":%d}`, tc.secs)})
		if resp.StatusCode != tc.status {
			t.Fatalf("case %d: status %d, want %d: %s", tc.secs, resp.StatusCode, tc.status, body)
		}
		if tc.status == 200 {
			continue
		}
		env := envelope(t, resp, body)
		if c := memory.Code(jsonString(t, env["code"])); c != tc.code {
			t.Errorf("case %d: code %s, want %s", tc.secs, c, tc.code)
		}
		if m := jsonString(t, env["message"]); m != tc.msg {
			t.Errorf("case %d: message %q, want %q", tc.secs, m, tc.msg)
		}
		if strings.Contains(string(body), "/var/lib") || strings.Contains(string(body), "boom") {
			t.Errorf("case %d: cause leaked: %s", tc.secs, body)
		}
		if !strings.Contains(f.logs.String(), tc.logged) {
			t.Errorf("case %d: log lacks %q:\n%s", tc.secs, tc.logged, f.logs.String())
		}
	}
}

// TestStreaming covers the archive routes with a stub service: the
// engine's export and import are written elsewhere.
func TestStreaming(t *testing.T) {
	archive := []byte("{\"version\":\"1.0\"}\nline\n{\"checksum\":\"abc\"}\n")
	var gotImport struct {
		req  memory.ImportRequest
		data []byte
	}
	svc := &stubService{
		export: func(ctx context.Context, req *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
			switch req.Format {
			case "bad":
				return nil, memory.Invalid("format", "want cma or jsonl")
			case "midway":
				// Enough to push the header and some data out.
				_, _ = w.Write([]byte(strings.Repeat("x", 64<<10)))
				return nil, errors.New("disk read error")
			}
			for i := 0; i < len(archive); i += 7 { // several small writes
				_, _ = w.Write(archive[i:min(i+7, len(archive))])
			}
			return &memory.ExportResponse{ArchiveID: "arch-1", SizeBytes: uint64(len(archive)), RecordCount: 1, Checksum: "abc"}, nil
		},
		imp: func(ctx context.Context, req *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
			data, err := io.ReadAll(r)
			if err != nil {
				return nil, fmt.Errorf("read archive: %w", err)
			}
			if len(data) == 0 {
				return nil, memory.Errorf(memory.CodeImportConflict, "archive is empty")
			}
			gotImport.req, gotImport.data = *req, data
			return &memory.ImportResponse{RecordsImported: uint32(len(data))}, nil
		},
	}
	f := newFixture(t, svc, Options{MaxImportBytes: 1024})

	t.Run("export json", func(t *testing.T) {
		resp, body := f.do(t, request{method: http.MethodPost, path: wire.PathExport, body: `{}`})
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		var out wire.ExportArchiveResponse
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		if string(out.ArchiveData) != string(archive) || out.ArchiveID != "arch-1" || out.Checksum != "abc" || out.SizeBytes != uint64(len(archive)) {
			t.Errorf("answer %+v", out)
		}
		if !strings.Contains(string(body), `"archive_data":[123,34,`) {
			t.Errorf("archive_data is not an integer array: %.80s", body)
		}
	})
	t.Run("export stream", func(t *testing.T) {
		resp, body := f.do(t, request{method: http.MethodPost, path: wire.PathExportStream, body: `{}`})
		if resp.StatusCode != 200 || string(body) != string(archive) {
			t.Fatalf("status %d, body %q", resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != wire.ContentTypeArchive {
			t.Errorf("Content-Type %q", ct)
		}
		for k, v := range map[string]string{wire.TrailerArchiveID: "arch-1", wire.TrailerChecksum: "abc", wire.TrailerRecordCount: "1", wire.TrailerSizeBytes: fmt.Sprint(len(archive))} {
			if got := resp.Trailer.Get(k); got != v {
				t.Errorf("trailer %s = %q, want %q", k, got, v)
			}
		}
	})
	t.Run("export stream error before data", func(t *testing.T) {
		resp, body := f.do(t, request{method: http.MethodPost, path: wire.PathExportStream, body: `{"format":"bad"}`})
		if resp.StatusCode != 400 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		envelope(t, resp, body)
	})
	t.Run("export stream error midway aborts", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, f.ts.URL+wire.PathExportStream, strings.NewReader(`{"format":"midway"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Fatal("reading a failed export succeeded; want the connection cut")
		}
		if resp.Trailer.Get(wire.TrailerArchiveID) != "" {
			t.Error("a failed export carries metadata trailers")
		}
	})
	t.Run("import json", func(t *testing.T) {
		resp, body := f.do(t, request{method: http.MethodPost, path: wire.PathImport, body: `{"archive_id":"a1","archive_data":[1,2,3],"strategy":"replace"}`})
		if resp.StatusCode != 200 || string(body) != `{"records_imported":3,"records_skipped":0,"raw_conflicts":0}` {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if string(gotImport.data) != "\x01\x02\x03" || gotImport.req.ArchiveID != "a1" || gotImport.req.Strategy != memory.ImportReplace {
			t.Errorf("service got %+v", gotImport)
		}
	})
	streamCases := []struct {
		name   string
		query  string
		hdr    map[string]string
		body   string
		status int
		code   memory.Code
	}{
		{"ok", "?archive_id=a2&strategy=replace&conflict_resolution=keep_existing", map[string]string{"Content-Type": wire.ContentTypeArchive, wire.HeaderDecryptionKey: "pass phrase"}, "archive!", 200, ""},
		{"no content type", "?archive_id=a3", map[string]string{"Content-Type": ""}, "xyz", 200, ""},
		{"json content type", "", map[string]string{"Content-Type": "application/json"}, "{}", 400, memory.CodeValidation},
		{"bad conflict", "?conflict_resolution=newest", map[string]string{"Content-Type": wire.ContentTypeArchive}, "x", 400, memory.CodeValidation},
		{"empty", "", map[string]string{"Content-Type": wire.ContentTypeArchive}, "", 400, memory.CodeValidation},
		{"empty chunked", "", map[string]string{"Content-Type": wire.ContentTypeArchive, "Transfer-Encoding": "chunked"}, "", 400, memory.CodeValidation},
		{"too large", "", map[string]string{"Content-Type": wire.ContentTypeArchive}, strings.Repeat("x", 1025), 413, memory.CodeContentTooLarge},
		{"too large chunked", "", map[string]string{"Content-Type": wire.ContentTypeArchive, "Transfer-Encoding": "chunked"}, strings.Repeat("x", 5000), 413, memory.CodeContentTooLarge},
	}
	for _, tc := range streamCases {
		t.Run("import stream "+tc.name, func(t *testing.T) {
			gotImport.data = nil
			resp, body := f.do(t, request{method: http.MethodPost, path: wire.PathImportStream + tc.query, body: tc.body, header: tc.hdr})
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.code != "" {
				env := errorEnvelope(t, resp, body, tc.code)
				if msg := jsonString(t, env["message"]); tc.status == 413 && !strings.Contains(msg, "import limit of 1024 bytes") {
					t.Errorf("message %q does not name the import limit", msg)
				}
				return
			}
			if string(gotImport.data) != tc.body {
				t.Errorf("service read %q, want %q", gotImport.data, tc.body)
			}
			if r := gotImport.req; tc.name == "ok" && (r.ArchiveID != "a2" || r.Strategy != memory.ImportReplace ||
				r.ConflictResolution != memory.KeepExisting || r.DecryptionKey == nil || *r.DecryptionKey != "pass phrase") {
				t.Errorf("service got %+v", r)
			}
		})
	}
	if r := gotImport.req; r.ArchiveID != "a3" || r.Strategy != memory.ImportMerge || r.ConflictResolution != memory.KeepNewer || r.DecryptionKey != nil {
		t.Errorf("defaults: %+v", r)
	}
}

// TestRateLimitLoopback: with authentication off, clients on this host are
// not limited by default, whatever their number; a local proxy passing on
// other clients' requests, and every client with LimitLoopback, are.
func TestRateLimitLoopback(t *testing.T) {
	newServer := func(limitLoopback bool) *Server {
		srv, err := New(&stubService{}, Options{
			RateLimit: RateLimit{RequestsPerSecond: 1, Burst: 2, LimitLoopback: limitLoopback},
			Now:       testkit.NewClock(t0).Now,
		})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	srv := newServer(false)
	for i := range 200 {
		remote := []string{"127.0.0.1:40000", "[::1]:40001", "127.0.0.2:40002"}[i%3]
		if got := statsFrom(srv, remote, nil); got != 200 {
			t.Fatalf("local call %d from %s: %d", i, remote, got)
		}
	}
	for i, want := range []int{200, 200, 429} {
		if got := statsFrom(srv, "127.0.0.1:40000", map[string]string{"X-Forwarded-For": "198.51.100.7"}); got != want {
			t.Fatalf("call %d through a local proxy: %d, want %d", i, got, want)
		}
	}
	for i, want := range []int{200, 200, 429} {
		if got := statsFrom(srv, "192.0.2.1:1000", nil); got != want {
			t.Fatalf("remote call %d: %d, want %d", i, got, want)
		}
	}
	srv = newServer(true)
	for i, want := range []int{200, 200, 429} {
		if got := statsFrom(srv, "127.0.0.1:40000", nil); got != want {
			t.Fatalf("LimitLoopback, local call %d: %d, want %d", i, got, want)
		}
	}
}

// statsFrom asks srv for the stats as a client at remote with the headers
// hdr would, and returns the status.
func statsFrom(srv *Server, remote string, hdr map[string]string) int {
	r := httptest.NewRequest(http.MethodGet, wire.PathStats, nil)
	r.RemoteAddr = remote
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	return w.Code
}
