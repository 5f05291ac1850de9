package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/internal/testtls"
)

// Keys of the live configuration tests.
const (
	liveOldKey = "old-key-0123456789abcdef"
	liveNewKey = "new-key-0123456789abcdef"
)

// liveConfig is a configuration with one API key, gRPC TLS from certFile
// and keyFile, and a rate limit of burst calls refilled at 1 per second.
func liveConfig(key string, burst int, certFile, keyFile string) string {
	return fmt.Sprintf(`
[auth]
enabled = true
api_keys = [%q]

[grpc]
tls_cert_path = %q
tls_key_path = %q

[rate_limit]
requests_per_second = 1
burst = %d
`, key, certFile, keyFile, burst)
}

// writeReplacing writes body to path the way editors save: a new file
// renamed over the old one.
func writeReplacing(t *testing.T, path string, body []byte) {
	t.Helper()
	tmp := path + ".swp"
	if err := os.WriteFile(tmp, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// statusWithKey is the status of GET /v1/introspect/stats with key.
func statusWithKey(t *testing.T, srv *server, key string) int {
	t.Helper()
	return statusWithKeyIn(t, srv, key, "")
}

// statusWithKeyIn is statusWithKey in namespace ns ("" names none).
func statusWithKeyIn(t *testing.T, srv *server, key, ns string) int {
	t.Helper()
	return testkit.Do(t, testkit.Request{Method: http.MethodGet, URL: srv.url("/v1/introspect/stats"), Key: key, Namespace: ns}).Status
}

// TestLiveConfiguration runs memsvc serve from a configuration file and
// edits the file while it serves: a new API key takes effect within a
// second and the old one is refused; a broken edit is refused with a log
// line and the keys stay; a lower burst applies to the next calls;
// renewed certificate files at the same paths reach the next TLS
// handshake; a change of the data directory is logged as needing a
// restart.
func TestLiveConfiguration(t *testing.T) {
	confDir, certDir := t.TempDir(), t.TempDir()
	certFile, keyFile, _ := testtls.SelfSigned(t, certDir)
	conf := filepath.Join(confDir, "memsvc.toml")
	writeReplacing(t, conf, []byte(liveConfig(liveOldKey, 100, certFile, keyFile)))
	srv := startCmd(t, binCmd(t, "memsvc", nil, "--config", conf, "serve", "--data-dir", t.TempDir(), "--port", "0", "--grpc-port", "0"))
	gaddr := grpcAddr(t, srv)
	if got := statusWithKey(t, srv, liveOldKey); got != http.StatusOK {
		t.Fatalf("the configured key at start: %d", got)
	}

	// A new key, within a second.
	writeReplacing(t, conf, []byte(liveConfig(liveNewKey, 100, certFile, keyFile)))
	took := waitFor(t, srv, time.Second, "the new key accepted and the old one refused", func() bool {
		return statusWithKey(t, srv, liveNewKey) == http.StatusOK && statusWithKey(t, srv, liveOldKey) == http.StatusUnauthorized
	})
	t.Logf("API key edit applied %v after the file was saved", took.Round(time.Millisecond))
	if strings.Contains(srv.log(), liveNewKey) || strings.Contains(srv.log(), liveOldKey) {
		t.Fatalf("the log shows an API key:\n%s", srv.log())
	}

	// A broken edit: refused, named, the keys stay.
	writeReplacing(t, conf, []byte("[auth]\napi_keys = [\"unterminated\n"))
	waitFor(t, srv, 10*time.Second, "a log line refusing the broken edit", func() bool {
		return strings.Contains(srv.log(), "configuration reload refused") && strings.Contains(srv.log(), conf)
	})
	if got := statusWithKey(t, srv, liveNewKey); got != http.StatusOK {
		t.Fatalf("the running key after a broken edit: %d", got)
	}

	// A lower burst: the key's bucket holds 2 tokens at most now (at 1
	// per second, the calls below come faster than one refills).
	writeReplacing(t, conf, []byte(liveConfig(liveNewKey, 2, certFile, keyFile)))
	waitFor(t, srv, 10*time.Second, "the burst change logged", func() bool {
		return strings.Contains(srv.log(), "rate_limit.burst=\"100 -> 2\"")
	})
	limited := false
	for range 4 {
		if statusWithKey(t, srv, liveNewKey) == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatalf("4 quick calls under a burst of 2 were all served:\n%s", srv.log())
	}

	// Renewed certificate files at the same paths.
	before := testtls.PeerCertificate(t, gaddr)
	newCert, newKey, _ := testtls.SelfSigned(t, t.TempDir())
	for from, to := range map[string]string{newKey: keyFile, newCert: certFile} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		writeReplacing(t, to, b)
	}
	waitFor(t, srv, 10*time.Second, "a new handshake seeing the new certificate", func() bool {
		return !testtls.PeerCertificate(t, gaddr).Equal(before)
	})

	// A key that cannot change live.
	body := liveConfig(liveNewKey, 2, certFile, keyFile) + "\n[working]\ncapacity = 20\n"
	writeReplacing(t, conf, []byte(body))
	waitFor(t, srv, 10*time.Second, "working.capacity logged as needing a restart", func() bool {
		return strings.Contains(srv.log(), "needs a restart") && strings.Contains(srv.log(), "key=working.capacity")
	})

	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.log())
	}
}

// TestSIGHUPReloads: SIGHUP reloads the configuration (and does not end
// the server, as it would a process that does not handle it). The file
// here is a symbolic link into another directory, edited in place there:
// no event reaches the watched directory, so SIGHUP is what applies it.
func TestSIGHUPReloads(t *testing.T) {
	realDir, linkDir := t.TempDir(), t.TempDir()
	real := filepath.Join(realDir, "memsvc.toml")
	body := func(key string) []byte {
		return []byte(fmt.Sprintf("[auth]\nenabled = true\napi_keys = [%q]\n", key))
	}
	if err := os.WriteFile(real, body(liveOldKey), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(linkDir, "memsvc.toml")
	if err := os.Symlink(real, conf); err != nil {
		t.Fatal(err)
	}
	srv := startCmd(t, binCmd(t, "memsvc", nil, "--config", conf, "serve", "--data-dir", t.TempDir(), "--port", "0"))

	if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, srv, 10*time.Second, "SIGHUP reloading an unchanged file", func() bool {
		return strings.Contains(srv.log(), "configuration reloaded: nothing changed")
	})

	if err := os.WriteFile(real, body(liveNewKey), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, srv, 10*time.Second, "the new key after SIGHUP", func() bool {
		return statusWithKey(t, srv, liveNewKey) == http.StatusOK
	})
	log := srv.log()
	hup := strings.LastIndex(log, "SIGHUP: reloading")
	applied := strings.Index(log, "auth.api_keys=")
	if hup < 0 || applied < hup {
		t.Fatalf("the key change was not applied by the second SIGHUP:\n%s", log)
	}
	if got := statusWithKey(t, srv, liveOldKey); got != http.StatusUnauthorized {
		t.Fatalf("the old key after SIGHUP: %d", got)
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.log())
	}
}

// TestLiveKeyNamespaces: an edit of the namespaces an auth.keys entry is
// bound to takes effect within a second, without a restart: the key is
// refused (403) in the namespace it lost and served in the one it gained.
func TestLiveKeyNamespaces(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "memsvc.toml")
	body := func(namespace string) []byte {
		return []byte(fmt.Sprintf("[auth]\nenabled = true\napi_keys = [%q]\n\n[[auth.keys]]\nkey = %q\nnamespaces = [%q]\n",
			liveOldKey, liveNewKey, namespace))
	}
	writeReplacing(t, conf, body("proj-a"))
	srv := startCmd(t, binCmd(t, "memsvc", nil, "--config", conf, "serve", "--data-dir", t.TempDir(), "--port", "0"))
	if a, b := statusWithKeyIn(t, srv, liveNewKey, "proj-a"), statusWithKeyIn(t, srv, liveNewKey, "proj-b"); a != http.StatusOK || b != http.StatusForbidden {
		t.Fatalf("at start, the key bound to proj-a: %d in proj-a, %d in proj-b", a, b)
	}

	writeReplacing(t, conf, body("proj-b"))
	took := waitFor(t, srv, time.Second, "the key served in proj-b and refused in proj-a", func() bool {
		return statusWithKeyIn(t, srv, liveNewKey, "proj-b") == http.StatusOK &&
			statusWithKeyIn(t, srv, liveNewKey, "proj-a") == http.StatusForbidden
	})
	t.Logf("namespace binding edit applied %v after the file was saved", took.Round(time.Millisecond))
	if !strings.Contains(srv.log(), "auth.keys") || strings.Contains(srv.log(), liveNewKey) || strings.Contains(srv.log(), liveOldKey) {
		t.Fatalf("the reload is not logged by key name, or the log shows an API key:\n%s", srv.log())
	}
	if got := statusWithKeyIn(t, srv, liveOldKey, "proj-a"); got != http.StatusOK {
		t.Fatalf("the all-namespace key in proj-a: %d", got)
	}
	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.log())
	}
}
