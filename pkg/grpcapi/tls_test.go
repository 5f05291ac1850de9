package grpcapi

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"memsvc.dev/memsvc/internal/testtls"
)

// TestReloadTLS: a new pair at the same paths is served from the next
// handshake on, while a connection made before keeps working; a bad pair
// is refused and the served certificate stays; reloading unchanged files
// reports no change; a plaintext server cannot reload.
func TestReloadTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := testtls.SelfSigned(t, dir)
	srv, err := NewServer(&stubService{}, Options{TLSCertFile: certFile, TLSKeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTCP(t, srv)
	first := srv.TLSCertificate()
	if first == nil {
		t.Fatal("no certificate served")
	}
	// handshake returns the leaf certificate a new connection sees, and
	// the connection.
	handshake := func() (*x509.Certificate, *tls.Conn) {
		t.Helper()
		tc := testtls.Handshake(t, addr)
		t.Cleanup(func() { _ = tc.Close() })
		return tc.ConnectionState().PeerCertificates[0], tc
	}
	seen, open := handshake()
	if !seen.Equal(first) {
		t.Fatal("the first handshake did not see the configured certificate")
	}

	if changed, err := srv.ReloadTLS(certFile, keyFile); err != nil || changed {
		t.Fatalf("reload of unchanged files: changed=%v, %v", changed, err)
	}

	// Renewed files at the same paths.
	renewed := t.TempDir()
	newCert, newKey, _ := testtls.SelfSigned(t, renewed)
	for from, to := range map[string]string{newCert: certFile, newKey: keyFile} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	changed, err := srv.ReloadTLS(certFile, keyFile)
	if err != nil || !changed {
		t.Fatalf("reload of renewed files: changed=%v, %v", changed, err)
	}
	second := srv.TLSCertificate()
	if second.Equal(first) {
		t.Fatal("TLSCertificate is still the old one")
	}
	if seen, _ := handshake(); !seen.Equal(second) {
		t.Fatal("a new handshake after the reload sees the old certificate")
	}
	if !open.ConnectionState().PeerCertificates[0].Equal(first) {
		t.Fatal("the connection made before the reload changed certificate")
	}

	// A key that does not match, and a missing file: refused, nothing
	// changes.
	other := t.TempDir()
	_, otherKey, _ := testtls.SelfSigned(t, other)
	for _, bad := range [][2]string{{certFile, otherKey}, {filepath.Join(dir, "missing.pem"), keyFile}} {
		if changed, err := srv.ReloadTLS(bad[0], bad[1]); err == nil || changed {
			t.Fatalf("reload of %v: changed=%v, %v; want an error", bad, changed, err)
		}
		if seen, _ := handshake(); !seen.Equal(second) {
			t.Fatalf("after the refused reload of %v a handshake sees another certificate", bad)
		}
	}

	plain, err := NewServer(&stubService{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.ReloadTLS(certFile, keyFile); !errors.Is(err, ErrNoTLS) {
		t.Fatalf("reload on a plaintext server: %v, want ErrNoTLS", err)
	}
}
