package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

const sigterm = syscall.SIGTERM

// TestLoad holds a mixed store/recall workload against a real server for
// 30 seconds from 8 concurrent clients and requires that every request
// succeeds. Then, under the default rate limits: clients on the server's
// own host without auth are not limited, so every request succeeds again;
// with auth on, the 8 clients share one key's bucket and the only failures
// are 429s carrying Retry-After. Throughput and latency percentiles are
// logged (go test -run TestLoad -v ./e2e); the README records them.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir, "MEMSVC_RATE_LIMIT__REQUESTS_PER_SECOND=1000000", "MEMSVC_RATE_LIMIT__BURST=1000000")
	const workers = 8
	duration := 30 * time.Second
	stats := hammer(t, srv, workers, duration, "")
	for code, n := range stats.codes {
		if code != 200 {
			t.Fatalf("%d requests answered %d", n, code)
		}
	}
	t.Logf("mixed load, %d clients, %v: %d requests, %.0f req/s; store p50 %v p99 %v; recall p50 %v p99 %v",
		workers, duration, stats.total(), float64(stats.total())/duration.Seconds(),
		pct(stats.store, 50), pct(stats.store, 99), pct(stats.recall, 50), pct(stats.recall, 99))
	if err := srv.stop(sigterm); err != nil {
		t.Fatal(err)
	}

	// Default limits, auth off: the clients are on loopback, which is not
	// limited by default.
	srv = startServer(t, dir)
	stats = hammer(t, srv, workers, 3*time.Second, "")
	for code, n := range stats.codes {
		if code != 200 {
			t.Fatalf("loopback clients without auth: %d requests answered %d", n, code)
		}
	}
	t.Logf("default limits, loopback, no auth: %v", stats.codes)
	if err := srv.stop(sigterm); err != nil {
		t.Fatal(err)
	}

	// Default limits with auth: 100 requests per second with a burst of
	// 50 per key. Eight clients sharing one key get 429s, and nothing
	// else fails.
	const key = "load-test-key-0123456789abcdef"
	srv = startServer(t, dir, "MEMSVC_AUTH__ENABLED=true", "MEMSVC_AUTH_API_KEYS="+key)
	stats = hammer(t, srv, workers, 3*time.Second, key)
	if stats.codes[429] == 0 || stats.codes[200] == 0 {
		t.Fatalf("rate limiting: %v", stats.codes)
	}
	for code := range stats.codes {
		if code != 200 && code != 429 {
			t.Fatalf("unexpected status %d under rate limiting: %v", code, stats.codes)
		}
	}
	if !stats.retryAfter {
		t.Fatal("429 without Retry-After")
	}
	t.Logf("default limits, one key: %v", stats.codes)
	if err := srv.stop(sigterm); err != nil {
		t.Fatal(err)
	}
}

type loadStats struct {
	mu         sync.Mutex
	codes      map[int]int
	store      []time.Duration
	recall     []time.Duration
	retryAfter bool
}

func (s *loadStats) total() int {
	n := 0
	for _, c := range s.codes {
		n += c
	}
	return n
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)].Round(10 * time.Microsecond)
}

// hammer runs workers that alternate stores (70%) and recalls (30%) until
// the duration is over, sending key as a Bearer token unless it is empty.
func hammer(t *testing.T, srv *server, workers int, duration time.Duration, key string) *loadStats {
	t.Helper()
	stats := &loadStats{codes: map[int]int{}}
	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	words := []string{"deploy", "cache", "rotation", "incident", "review", "schema", "latency", "backup", "release", "token"}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				var path string
				var body any
				isStore := i%10 < 7
				if isStore {
					path = "/v1/encode"
					body = map[string]any{"content": map[string]any{"blocks": []map[string]any{{
						"modality": "text", "format": "text/plain",
						"data": []byte(fmt.Sprintf("worker %d note %d about the %s and the %s", w, i, words[i%len(words)], words[(i*7+w)%len(words)])),
					}}}}
				} else {
					path = "/v1/recall/query"
					body = map[string]any{"cue": map[string]any{"text": words[(i+w)%len(words)]}, "limit": 5}
				}
				b, _ := json.Marshal(body)
				req, _ := http.NewRequestWithContext(ctx, "POST", srv.url(path), bytes.NewReader(b))
				req.Header.Set("Content-Type", "application/json")
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					t.Errorf("request: %v", err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				took := time.Since(start)
				stats.mu.Lock()
				stats.codes[resp.StatusCode]++
				if resp.StatusCode == 429 && resp.Header.Get("Retry-After") != "" {
					stats.retryAfter = true
				}
				if resp.StatusCode == 200 {
					if isStore {
						stats.store = append(stats.store, took)
					} else {
						stats.recall = append(stats.recall, took)
					}
				}
				stats.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return stats
}
