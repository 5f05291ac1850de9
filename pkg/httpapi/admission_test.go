package httpapi

import (
	"encoding/json"
	"fmt"
	"memsvc.dev/memsvc/internal/testkit"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// wantError checks an error answer: its status, that the body is the
// error envelope with the code (and, when msg is not empty, a message
// containing msg), that the request id sent comes back in the header and
// the envelope, and the retry time in the Retry-After header and the body
// ("" for none).
func wantError(t *testing.T, resp *http.Response, body []byte, sentID string, status int, code memory.Code, msg, retryAfter string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	if got := resp.Header.Get(wire.HeaderRequestID); got != sentID {
		t.Errorf("x-request-id = %q, want %q", got, sentID)
	}
	env := errorEnvelope(t, resp, body, code)
	if got := jsonString(t, env["message"]); !strings.Contains(got, msg) {
		t.Errorf("message %q does not contain %q", got, msg)
	}
	if got := jsonString(t, env["request_id"]); got != sentID {
		t.Errorf("envelope request_id %q, want %q", got, sentID)
	}
	if got := resp.Header.Get(wire.HeaderRetryAfter); got != retryAfter {
		t.Errorf("Retry-After = %q, want %q", got, retryAfter)
	}
	wantBody := retryAfter
	if wantBody == "" {
		wantBody = "null"
	}
	if got := string(env["retry_after"]); got != wantBody {
		t.Errorf("retry_after = %s, want %s", got, wantBody)
	}
}

// walkBurst is the bucket size of the admission walk: each route's key
// spends it on two admitted requests, and each route's client address on
// two failed ones.
const walkBurst = 2

// TestRouteAdmission walks every route of wire.Routes, so a route added
// there is covered without touching this test. Each protected route gets
// its own API key and, through a trusted proxy, its own client address,
// so the buckets of one route do not leak into the next; the clock is
// frozen, so no token comes back during the walk. In order, per protected
// route:
//
//   - with its key: an over-size body (413) and a wrong Content-Type (400)
//     on body routes, two plain requests on the others; both spend the
//     key's burst;
//   - its key once more: 429 from the key's bucket;
//   - no Authorization header, then a wrong key: 401 each, spending the
//     address's burst;
//   - a wrong key once more: 429 from the address's bucket.
//
// The probes answer 200 to well over a burst of requests from one address
// without a key or with a wrong one.
func TestRouteAdmission(t *testing.T) {
	const bodyLimit = 1 << 10
	routes := wire.Routes()
	if len(routes) > 254 {
		t.Fatalf("%d routes do not fit the client addresses of the walk (198.51.100.1-254)", len(routes))
	}
	keys := make([]string, len(routes))
	for i := range keys {
		keys[i] = fmt.Sprintf("route-key-%d", i)
	}
	clock := testkit.NewClock(t0)
	f := newFixture(t, newEngine(t), Options{
		AuthEnabled: true, APIKeys: keys,
		RateLimit:         RateLimit{RequestsPerSecond: 1, Burst: walkBurst},
		Now:               clock.Now,
		TrustedProxyCIDRs: []string{"127.0.0.0/8", "::1/128"},
		MaxBodyBytes:      bodyLimit,
		MaxImportBytes:    bodyLimit,
		MetricsEnabled:    true,
	})
	recordID, err := memory.ParseID(unknownID)
	if err != nil {
		t.Fatal(err)
	}

	// With a fixed time and a bucket emptied by exactly walkBurst tokens,
	// the next token is 1 s away: truncated plus one.
	const retryAfter = "2"
	for i, rt := range routes {
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			client := netip.AddrFrom4([4]byte{198, 51, 100, byte(i + 1)}).String()
			path := wire.RecordPath(rt.Path, recordID)
			if rt.Path == wire.PathNamespace {
				path = wire.NamespacePath("walk")
			}
			// send makes one request of this route from its client and
			// returns the answer with the request id it sent. Routes
			// without a body get neither a body nor a Content-Type.
			send := func(auth, contentType, body string) (*http.Response, []byte, string) {
				t.Helper()
				id := newUUIDv4()
				hdr := map[string]string{
					"X-Forwarded-For":    client,
					wire.HeaderRequestID: id,
					"Authorization":      auth,
				}
				if !rt.Body {
					contentType, body = "", ""
				}
				hdr["Content-Type"] = contentType
				resp, got := f.do(t, request{method: rt.Method, path: path, body: body, header: hdr})
				return resp, got, id
			}

			if !rt.Protected {
				for n := range 2 * (walkBurst + 1) {
					auth := ""
					if n%2 == 1 {
						auth = "Bearer wrong"
					}
					resp, body, id := send(auth, "", "")
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("request %d (auth %q): status %d, want 200: %s", n, auth, resp.StatusCode, body)
					}
					if got := resp.Header.Get(wire.HeaderRequestID); got != id {
						t.Errorf("request %d: x-request-id = %q, want %q", n, got, id)
					}
					var h wire.Health
					if err := json.Unmarshal(body, &h); err != nil || h.Status != wire.HealthOK && h.Status != wire.HealthReady {
						t.Errorf("request %d: body %s is not a probe answer", n, body)
					}
				}
				return
			}

			good := "Bearer " + keys[i]
			if rt.Body {
				// The media type the route reads: the streaming import
				// takes the raw archive, every other body is JSON. The
				// type check comes before the size check, so the
				// over-size body must have the right one.
				bodyType := wire.ContentTypeJSON
				if rt.Path == wire.PathImportStream {
					bodyType = wire.ContentTypeArchive
				}
				resp, body, id := send(good, bodyType, `{"pad":"`+strings.Repeat("x", bodyLimit)+`"}`)
				wantError(t, resp, body, id, http.StatusRequestEntityTooLarge, memory.CodeContentTooLarge, fmt.Sprint(bodyLimit), "")
				resp, body, id = send(good, "text/plain", `{}`)
				wantError(t, resp, body, id, http.StatusBadRequest, memory.CodeValidation, "Content-Type", "")
			} else {
				for n := range walkBurst {
					resp, body, _ := send(good, "", "")
					if c := resp.StatusCode; c == http.StatusUnauthorized || c == http.StatusTooManyRequests || c >= 500 {
						t.Fatalf("request %d with the route's key: status %d: %s", n, c, body)
					}
				}
			}

			resp, body, id := send(good, wire.ContentTypeJSON, `{}`)
			wantError(t, resp, body, id, http.StatusTooManyRequests, memory.CodeRateLimited, "rate limit", retryAfter)

			resp, body, id = send("", wire.ContentTypeJSON, `{}`)
			wantError(t, resp, body, id, http.StatusUnauthorized, memory.CodeUnauthorized, msgMissingAuth, "")
			resp, body, id = send("Bearer not-"+keys[i], wire.ContentTypeJSON, `{}`)
			wantError(t, resp, body, id, http.StatusUnauthorized, memory.CodeUnauthorized, access.MsgInvalidKey, "")
			resp, body, id = send("Bearer not-"+keys[i], wire.ContentTypeJSON, `{}`)
			wantError(t, resp, body, id, http.StatusTooManyRequests, memory.CodeRateLimited, "rate limit", retryAfter)
		})
	}
}

// TestFailedAuthIsRateLimited: failed attempts spend from the client
// address's bucket, so bad keys from one address are refused with 429 once
// the burst is spent; a valid key from that address is still served, from
// its own bucket (see access.Limiter.Admit for why); and the address's
// bucket is the one the gRPC transport spends too when given the same
// Gate.
func TestFailedAuthIsRateLimited(t *testing.T) {
	clock := testkit.NewClock(t0)
	shared := access.NewGate(access.Policy{Keys: testkit.Keyring(t, "good"), Rate: RateLimit{RequestsPerSecond: 1, Burst: 3}}, clock.Now)
	f := newFixture(t, &stubService{}, Options{
		Gate:              shared,
		TrustedProxyCIDRs: []string{"127.0.0.0/8", "::1/128"},
	})
	const (
		proxied  = "198.51.100.7" // another client behind the trusted proxy
		goodKey  = "Bearer good"
		wrongKey = "Bearer guess"
		noRetry  = ""
	)
	steps := []struct {
		name       string
		advance    time.Duration
		auth       string
		forwarded  string // X-Forwarded-For; "" for the loopback peer itself
		status     int
		retryAfter string
	}{
		{"failure 1", 0, wrongKey, "", 401, noRetry},
		{"failure 2, no header", 0, "", "", 401, noRetry},
		{"failure 3 empties the address bucket", 0, wrongKey, "", 401, noRetry},
		{"the next bad key is limited", 0, wrongKey, "", 429, "2"},
		{"no header: limited too", 0, "", "", 429, "2"},
		{"the valid key from that address is served", 0, goodKey, "", 200, noRetry},
		{"half a token back", 500 * time.Millisecond, wrongKey, "", 429, "1"},
		{"another client behind the proxy fails on its own", 0, wrongKey, proxied, 401, noRetry},
		{"and is served with the valid key", 0, goodKey, proxied, 200, noRetry},
		{"and again", 0, goodKey, "", 200, noRetry},
		{"the valid key's bucket is empty", 0, goodKey, "", 429, "1"},
		{"one token back", 500 * time.Millisecond, goodKey, "", 200, noRetry},
		{"the address token is there for a failure", 0, wrongKey, "", 401, noRetry},
		{"and then the address is limited again", 0, wrongKey, "", 429, "2"},
	}
	// Each step depends on the ones before it: stop at the first failure.
	for i, s := range steps {
		ok := t.Run(fmt.Sprintf("%02d %s", i, s.name), func(t *testing.T) {
			clock.Advance(s.advance)
			id := newUUIDv4()
			hdr := map[string]string{"Authorization": s.auth, "X-Forwarded-For": s.forwarded, wire.HeaderRequestID: id}
			resp, body := f.do(t, request{method: http.MethodGet, path: wire.PathStats, header: hdr})
			switch s.status {
			case http.StatusOK:
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d, want 200: %s", resp.StatusCode, body)
				}
			case http.StatusUnauthorized:
				wantError(t, resp, body, id, s.status, memory.CodeUnauthorized, "", noRetry)
			case http.StatusTooManyRequests:
				wantError(t, resp, body, id, s.status, memory.CodeRateLimited, "rate limit", s.retryAfter)
			default:
				t.Fatalf("the step expects status %d, which this test does not check", s.status)
			}
		})
		if !ok {
			t.FailNow()
		}
	}
	// The loopback address's bucket is empty in the shared gate under
	// the name the gRPC transport gives 127.0.0.1.
	if ok, _ := shared.Allow(access.AddressKey(netip.MustParseAddr("127.0.0.1"))); ok {
		t.Error("the failures did not spend the bucket of access.AddressKey(127.0.0.1)")
	}
}
