package grpcapi

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// ErrNoTLS is returned by ReloadTLS on a server started without TLS:
// plaintext cannot turn into TLS while serving.
var ErrNoTLS = errors.New("gRPC serves plaintext: TLS can only be turned on at start")

// loadKeyPair reads a PEM certificate (chain) and its private key.
func loadKeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &cert, nil
}

// ReloadTLS reads certFile and keyFile and, when they hold a valid pair,
// serves it from the next TLS handshake on; connections already open keep
// the certificate they were made with. It reports whether the certificate
// differs from the one served before (renewed files at the same paths, or
// other paths). On error the certificate served stays as it was.
func (s *Server) ReloadTLS(certFile, keyFile string) (changed bool, err error) {
	old := s.cert.Load()
	if old == nil {
		return false, ErrNoTLS
	}
	cert, err := loadKeyPair(certFile, keyFile)
	if err != nil {
		return false, err
	}
	if sameChain(old, cert) {
		return false, nil
	}
	s.cert.Store(cert)
	return true, nil
}

// TLSCertificate returns the leaf certificate served, or nil without TLS.
func (s *Server) TLSCertificate() *x509.Certificate {
	c := s.cert.Load()
	if c == nil {
		return nil
	}
	return c.Leaf
}

// sameChain reports whether a and b are the same certificate chain.
func sameChain(a, b *tls.Certificate) bool {
	if len(a.Certificate) != len(b.Certificate) {
		return false
	}
	for i := range a.Certificate {
		if !bytes.Equal(a.Certificate[i], b.Certificate[i]) {
			return false
		}
	}
	return true
}
