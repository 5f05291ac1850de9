package grpcapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"memsvc.dev/memsvc/pkg/memory"
)

// keyring holds the SHA-256 digests of the API keys, never the keys: every
// comparison is between two 32-byte digests, so neither its time nor an
// early exit tells a caller how long a key is or which key came close.
type keyring struct {
	digests [][sha256.Size]byte
}

func newKeyring(keys []string) (*keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("grpcapi: authentication enabled without API keys")
	}
	k := &keyring{}
	for i, key := range keys {
		if strings.TrimSpace(key) == "" {
			return nil, fmt.Errorf("grpcapi: API key %d is blank", i+1)
		}
		k.digests = append(k.digests, sha256.Sum256([]byte(key)))
	}
	return k, nil
}

// match compares token with every key in constant time, without an early
// exit, and returns the token's digest.
func (k *keyring) match(token string) ([sha256.Size]byte, bool) {
	d := sha256.Sum256([]byte(token))
	found := 0
	for i := range k.digests {
		found |= subtle.ConstantTimeCompare(d[:], k.digests[i][:])
	}
	return d, found == 1
}

// Metadata key and scheme of authentication.
const (
	authMetadata = "authorization"
	bearerPrefix = "Bearer "
)

// Messages of the two authentication failures.
const (
	msgMissingAuth = `missing or malformed authorization metadata; send "authorization: Bearer <api key>"`
	msgInvalidKey  = "invalid API key"
)

// authenticate checks the Bearer token of the call when authentication is
// on and returns the rate limiting key of the caller: the key's digest, or
// the peer's address without authentication.
func (s *Server) authenticate(ctx context.Context) (string, error) {
	if s.keys == nil {
		return "ip:" + peerHost(ctx), nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get(authMetadata)
	if len(values) != 1 {
		return "", memory.Errorf(memory.CodeUnauthorized, msgMissingAuth)
	}
	token, ok := strings.CutPrefix(values[0], bearerPrefix)
	if !ok {
		return "", memory.Errorf(memory.CodeUnauthorized, msgMissingAuth)
	}
	d, ok := s.keys.match(token)
	if !ok {
		return "", memory.Errorf(memory.CodeUnauthorized, msgInvalidKey)
	}
	return "key:" + string(d[:]), nil
}

// peerHost is the address of the caller without its port.
func peerHost(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown"
	}
	if tcp, ok := p.Addr.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	if host, _, err := net.SplitHostPort(p.Addr.String()); err == nil {
		return host
	}
	return p.Addr.String()
}
