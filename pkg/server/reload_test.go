package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/internal/testtls"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/grpcapi"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// reloadFixture is a server started from a configuration file, with live
// configuration on, as serve starts it.
type reloadFixture struct {
	t      *testing.T
	file   string
	log    *testkit.SyncBuffer
	level  *slog.LevelVar
	hangup chan os.Signal
	s      *Server
	stop   func() error
}

// Keys the tests use; long enough not to be warned about.
const (
	oldKey = "old-key-0123456789abcdef"
	newKey = "new-key-0123456789abcdef"
)

// startReloading writes body as the configuration file and starts a
// server on it; overrides play the part of flags.
func startReloading(t *testing.T, body string, now func() time.Time, overrides ...config.Override) *reloadFixture {
	t.Helper()
	f := &reloadFixture{t: t, file: filepath.Join(t.TempDir(), "memsvc.toml"), log: &testkit.SyncBuffer{},
		level: new(slog.LevelVar), hangup: make(chan os.Signal, 1)}
	f.write(body)
	opts := config.LoadOptions{File: f.file, Overrides: append([]config.Override{
		{Key: "data_dir", Value: t.TempDir(), Flag: "--data-dir"},
		{Key: "http.port", Value: "0", Flag: "--port"},
		{Key: "http.shutdown_timeout_secs", Value: "1", Flag: "--flag"},
	}, overrides...)}
	cfg, err := config.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: f.level}))
	_, f.s, f.stop = startWith(t, cfg, Options{
		Version: "test", Logger: log, Now: now,
		Load:   func() (*config.Config, error) { return config.Load(opts) },
		Hangup: f.hangup,
		SetLogLevel: func(name string) {
			f.level.Set(map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo}[name])
		},
	})
	t.Cleanup(func() {
		if err := f.stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return f
}

// write replaces the configuration file the way editors do: a new file
// renamed over the old one.
func (f *reloadFixture) write(body string) {
	f.t.Helper()
	tmp := f.file + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, f.file); err != nil {
		f.t.Fatal(err)
	}
}

// eventually polls cond until it holds, for at most 10 seconds; the
// failure shows the server's log.
func (f *reloadFixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	testkit.WaitFor(f.t, 10*time.Second, what, cond, f.log.String)
}

// logged waits until the log holds n lines containing every one of parts.
func (f *reloadFixture) logged(n int, parts ...string) {
	f.t.Helper()
	f.eventually(fmt.Sprintf("%d log line(s) with %q", n, parts), func() bool {
		count := 0
		for line := range strings.SplitSeq(f.log.String(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				count++
			}
		}
		return count >= n
	})
}

// metric returns the value of the sample line of /metrics that starts
// with prefix ("" when there is none).
func (f *reloadFixture) metric(key, prefix string) string {
	f.t.Helper()
	a := testkit.Do(f.t, testkit.Request{Method: http.MethodGet, URL: "http://" + f.s.HTTPAddr() + "/metrics", Key: key})
	if a.Status != http.StatusOK {
		f.t.Fatalf("/metrics: %d %s", a.Status, a.Body)
	}
	for line := range strings.SplitSeq(string(a.Body), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return v
		}
	}
	return ""
}

func (f *reloadFixture) status(key string) int {
	f.t.Helper()
	code, _ := httpStats(f.t, f.s.HTTPAddr(), key)
	return code
}

const keysConfig = `
[auth]
enabled = true
api_keys = [%q]
[rate_limit]
requests_per_second = 1
burst = %d
[log]
level = %q
`

// TestReloadKeysAndLimits: an edit of the API keys, the rate limit and
// the log level applies without a restart, logged by key name and never
// by key; a key that needs a restart is logged as such and left alone.
func TestReloadKeysAndLimits(t *testing.T) {
	frozen := func() time.Time { return time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC) }
	f := startReloading(t, fmt.Sprintf(keysConfig, oldKey, 1000, "info"), frozen)
	if got := f.status(oldKey); got != http.StatusOK {
		t.Fatalf("old key at start: %d", got)
	}
	if got := f.status(newKey); got != http.StatusUnauthorized {
		t.Fatalf("new key at start: %d", got)
	}

	f.write(fmt.Sprintf(keysConfig, newKey, 2, "debug") + "[working]\ncapacity = 9\n")
	f.eventually("the new key accepted", func() bool { return f.status(newKey) == http.StatusOK })
	if got := f.status(oldKey); got != http.StatusUnauthorized {
		t.Fatalf("old key after the edit: %d, want 401", got)
	}
	// The clock is frozen: the new key's bucket holds the new burst of 2,
	// and the first call above spent one.
	if got := f.status(newKey); got != http.StatusOK {
		t.Fatalf("second call under burst 2: %d", got)
	}
	if got := f.status(newKey); got != http.StatusTooManyRequests {
		t.Fatalf("third call under burst 2: %d, want 429", got)
	}
	if f.level.Level() != slog.LevelDebug {
		t.Fatalf("log level %v after the edit, want debug", f.level.Level())
	}
	f.logged(1, "configuration reloaded", "auth.api_keys", "1 added, 1 removed", "rate_limit.burst", "1000 -> 2", "log.level")
	f.logged(1, "needs a restart", "key=working.capacity", "7 -> 9")
	if s := f.log.String(); strings.Contains(s, oldKey) || strings.Contains(s, newKey) {
		t.Fatalf("the log shows an API key:\n%s", s)
	}
	if f.s.cfg.Working.Capacity != 7 {
		t.Fatal("the restart key changed the server's configuration")
	}
}

// TestReloadRefusesBadEdits: an edit that does not parse, holds an
// invalid value, or would leave auth on without keys is refused with one
// log line naming the problem, and the running keys stay.
func TestReloadRefusesBadEdits(t *testing.T) {
	f := startReloading(t, fmt.Sprintf(keysConfig, oldKey, 1000, "info"), nil,
		config.Override{Key: "http.metrics_enabled", Value: "true", Flag: "--flag"})
	const gauge = "memsvc_config_last_reload_successful "
	if got := f.metric(oldKey, gauge); got != "1" {
		t.Fatalf("%sat start: %q", gauge, got)
	}
	for i, tc := range []struct{ body, names string }{
		{"[auth\nenabled = true\n", "line 1"},
		{fmt.Sprintf(keysConfig, newKey, 0, "info"), "rate_limit.burst"},
		{"[auth]\nenabled = false\n", "auth.api_keys"},
		{fmt.Sprintf(keysConfig, newKey, 5, "loud"), "log.level"},
	} {
		f.write(tc.body)
		f.logged(1, "configuration reload refused", tc.names)
		if got := f.status(oldKey); got != http.StatusOK {
			t.Fatalf("edit %d: the old key after a refused edit: %d", i, got)
		}
		if got := f.status(newKey); got != http.StatusUnauthorized {
			t.Fatalf("edit %d: the key of a refused edit: %d", i, got)
		}
	}
	if n := strings.Count(f.log.String(), "configuration reload refused"); n != 4 {
		t.Fatalf("%d refusal lines for 4 bad edits:\n%s", n, f.log.String())
	}
	if got := f.metric(oldKey, gauge); got != "0" {
		t.Fatalf("%safter refused edits: %q", gauge, got)
	}
	// Fixed: applied.
	f.write(fmt.Sprintf(keysConfig, newKey, 1000, "info"))
	f.eventually("the fixed edit applied", func() bool { return f.status(newKey) == http.StatusOK })
	if got := f.metric(newKey, gauge); got != "1" {
		t.Fatalf("%safter the fixed edit: %q", gauge, got)
	}
}

// TestReloadCertificate: new certificate files at the same paths are
// served to the next TLS handshake without a restart; files that do not
// load are refused and the served certificate stays.
func TestReloadCertificate(t *testing.T) {
	certDir := t.TempDir()
	certFile, keyFile, _ := testtls.SelfSigned(t, certDir)
	body := fmt.Sprintf("[grpc]\ntls_cert_path = %q\ntls_key_path = %q\n", certFile, keyFile)
	f := startReloading(t, body, nil, config.Override{Key: "grpc.port", Value: "0", Flag: "--grpc-port"})
	first := testtls.PeerCertificate(t, f.s.GRPCAddr())

	renewed := t.TempDir()
	newCert, newKey, _ := testtls.SelfSigned(t, renewed)
	replace(t, newKey, keyFile)
	replace(t, newCert, certFile)
	f.eventually("a handshake with the new certificate", func() bool {
		return !testtls.PeerCertificate(t, f.s.GRPCAddr()).Equal(first)
	})
	second := testtls.PeerCertificate(t, f.s.GRPCAddr())
	f.logged(1, "gRPC TLS certificate reloaded", "not_after=")

	// A key that does not belong to the certificate. (The renewal above
	// may have been seen half done, and refused, once.)
	refused := strings.Count(f.log.String(), "configuration reload refused")
	other := t.TempDir()
	_, otherKey, _ := testtls.SelfSigned(t, other)
	replace(t, otherKey, keyFile)
	f.logged(refused+1, "configuration reload refused", "grpc.tls_cert_path")
	if !testtls.PeerCertificate(t, f.s.GRPCAddr()).Equal(second) {
		t.Fatal("the certificate changed after a refused reload")
	}
}

// TestReloadHangup: SIGHUP reloads even when nothing changed, and says so.
func TestReloadHangup(t *testing.T) {
	f := startReloading(t, fmt.Sprintf(keysConfig, oldKey, 1000, "info"), nil)
	f.hangup <- syscall.SIGHUP
	f.logged(1, "SIGHUP: reloading")
	f.logged(1, "configuration reloaded: nothing changed")

	// After an edit the watcher applied, SIGHUP finds nothing more.
	f.write(fmt.Sprintf(keysConfig, newKey, 1000, "info"))
	f.eventually("the edit applied", func() bool { return f.status(newKey) == http.StatusOK })
	f.hangup <- syscall.SIGHUP
	f.logged(2, "configuration reloaded: nothing changed")
}

// replace renames a copy of from over to, as certificate tools do.
func replace(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	tmp := to + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, to); err != nil {
		t.Fatal(err)
	}
}

// boundKeysConfig serves gRPC with the certificate and key files of its
// first two verbs and binds boundKey to the namespaces of its third (a
// TOML list) beside the all-namespace oldKey. The rate limit is out of
// reach of the polling.
const boundKeysConfig = `
[grpc]
tls_cert_path = %q
tls_key_path = %q
[rate_limit]
requests_per_second = 100000
burst = 100000
[auth]
enabled = true
api_keys = ["` + oldKey + `"]
[[auth.keys]]
key = "` + boundKey + `"
namespaces = %s
`

const boundKey = "bound-key-0123456789abcdef"

// TestReloadKeyNamespaces: an edit of the namespaces bound to a key
// applies to both transports without a restart, logged without the key;
// a bad binding is refused and the running one stays.
func TestReloadKeyNamespaces(t *testing.T) {
	certFile, keyFile, pool := testtls.SelfSigned(t, t.TempDir())
	body := func(namespaces string) string { return fmt.Sprintf(boundKeysConfig, certFile, keyFile, namespaces) }
	f := startReloading(t, body(`["proj-a"]`), nil,
		config.Override{Key: "grpc.port", Value: "0", Flag: "--grpc-port"})
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	conn, err := grpc.NewClient(f.s.GRPCAddr(), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	g := pb.NewMemsvcServiceClient(conn)
	// probe asks whether the bound key may read the stats of ns over HTTP
	// and over gRPC: agree is false when the two answers differ, which
	// happens only while a reload lands between the two calls.
	probe := func(ns string) (ok, agree bool) {
		t.Helper()
		code, errCode := httpStatsIn(t, f.s.HTTPAddr(), boundKey, ns)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+boundKey, grpcapi.NamespaceMetadata, ns)
		_, gerr := g.Stats(ctx, &pb.StatsRequest{})
		switch {
		case code == http.StatusOK && gerr == nil:
			return true, true
		case code == http.StatusForbidden && errCode == memory.CodeForbidden && status.Code(gerr) == codes.PermissionDenied:
			return false, true
		}
		t.Logf("namespace %s: HTTP %d %s, gRPC %v", ns, code, errCode, gerr)
		return false, false
	}
	// allowed is probe once the configuration has settled: the transports
	// must agree.
	allowed := func(ns string) bool {
		t.Helper()
		ok, agree := probe(ns)
		if !agree {
			t.Fatalf("namespace %s: HTTP and gRPC disagree on the key's access (see the log above)", ns)
		}
		return ok
	}
	// allowedNow is for polling while a reload may be landing.
	allowedNow := func(ns string) bool {
		ok, agree := probe(ns)
		return ok && agree
	}
	if !allowed("proj-a") || allowed("proj-b") {
		t.Fatal("at start the key is not bound to exactly proj-a")
	}

	f.write(body(`["proj-b", "proj-c"]`))
	f.eventually("the key rebound to proj-b", func() bool { return allowedNow("proj-b") })
	if allowed("proj-a") || !allowed("proj-c") {
		t.Fatal("after the edit the key is not bound to exactly proj-b and proj-c")
	}
	f.logged(1, "configuration reloaded", "auth.keys", "1 with other namespaces (1 now)")
	if s := f.log.String(); strings.Contains(s, boundKey) || strings.Contains(s, oldKey) {
		t.Fatalf("the log shows an API key:\n%s", s)
	}

	// A binding that does not validate is refused; the running one stays.
	f.write(body(`["Not A Name"]`))
	f.logged(1, "configuration reload refused", "auth.keys")
	if !allowed("proj-b") || allowed("proj-a") {
		t.Fatal("a refused edit changed the key's namespaces")
	}
	// Moved to auth.api_keys: every namespace.
	f.write(fmt.Sprintf("[grpc]\ntls_cert_path = %q\ntls_key_path = %q\n[rate_limit]\nrequests_per_second = 100000\nburst = 100000\n"+
		"[auth]\nenabled = true\napi_keys = [%q, %q]\n", certFile, keyFile, oldKey, boundKey))
	f.eventually("the key allowed in proj-a again", func() bool { return allowedNow("proj-a") })
	if !allowed("default") {
		t.Fatal("a key of auth.api_keys may not use the default namespace")
	}
	f.logged(1, "configuration reloaded", "auth.api_keys", "auth.keys", "1 removed (0 now)")
}
