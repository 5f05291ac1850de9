package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestLimitKeys: the HTTP timeouts, the connection cap and the free-space
// floor have their documented defaults, load from a file and the
// environment, and refuse values that would turn a protection off by
// accident.
func TestLimitKeys(t *testing.T) {
	c := mustLoad(t, LoadOptions{})
	h := c.HTTP
	if h.ReadHeaderTimeoutSecs != 10 || h.BodyTimeoutSecs != 30 || h.BodyMinBytesPerSec != 16<<10 ||
		h.IdleTimeoutSecs != 120 || h.MaxConnections != 1024 || c.Storage.MinFreeBytes != 256<<20 {
		t.Fatalf("defaults: %+v %+v", h, c.Storage)
	}
	if g := c.GRPC; g.HandshakeTimeoutSecs != 10 || g.IdleTimeoutSecs != 120 || g.KeepaliveSecs != 60 ||
		g.KeepaliveTimeoutSecs != 20 || g.MaxConnections != 1024 {
		t.Fatalf("gRPC defaults: %+v", g)
	}

	file := writeFile(t, "[storage]\nmin_free_bytes = 0\n[http]\nbody_timeout_secs = 5\nmax_connections = 3\n[grpc]\nmax_connections = 4\n")
	c = mustLoad(t, LoadOptions{File: file, Environ: []string{"MEMSVC_HTTP__IDLE_TIMEOUT_SECS=7", "MEMSVC_HTTP__BODY_MIN_BYTES_PER_SEC=0", "MEMSVC_GRPC__KEEPALIVE_SECS=9"}})
	if c.Storage.MinFreeBytes != 0 || c.HTTP.BodyTimeoutSecs != 5 || c.HTTP.MaxConnections != 3 ||
		c.HTTP.IdleTimeoutSecs != 7 || c.HTTP.BodyMinBytesPerSec != 0 {
		t.Fatalf("loaded: %+v %+v", c.HTTP, c.Storage)
	}
	if c.GRPC.MaxConnections != 4 || c.GRPC.KeepaliveSecs != 9 {
		t.Fatalf("loaded gRPC limits: %+v", c.GRPC)
	}

	for _, key := range []string{"http.read_header_timeout_secs", "http.body_timeout_secs", "http.idle_timeout_secs", "http.max_connections",
		"grpc.handshake_timeout_secs", "grpc.idle_timeout_secs", "grpc.keepalive_secs", "grpc.keepalive_timeout_secs", "grpc.max_connections"} {
		_, err := Load(LoadOptions{Overrides: []Override{{Key: key, Value: "0", Flag: "--x"}}})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "at least 1") {
			t.Errorf("%s = 0: %v", key, err)
		}
	}
}

// TestPositiveKeys: every key marked positive loads a 1 and refuses a 0
// with an error that names the key and says what is wanted; at least the
// timeouts, intervals, connection limits and rate limits are so marked.
func TestPositiveKeys(t *testing.T) {
	var marked []string
	for _, k := range keys {
		if k.positive == "" {
			continue
		}
		marked = append(marked, k.name)
		if _, err := Load(LoadOptions{Overrides: []Override{{Key: k.name, Value: "1", Flag: "--x"}}}); err != nil {
			t.Errorf("%s = 1: %v", k.name, err)
		}
		_, err := Load(LoadOptions{Overrides: []Override{{Key: k.name, Value: "0", Flag: "--x"}}})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), k.name) || !strings.Contains(err.Error(), "want "+k.positive+" (got 0)") {
			t.Errorf("%s = 0: %v", k.name, err)
		}
	}
	for _, name := range []string{"http.shutdown_timeout_secs", "http.read_header_timeout_secs", "http.body_timeout_secs",
		"http.idle_timeout_secs", "http.max_connections", "grpc.handshake_timeout_secs", "grpc.idle_timeout_secs",
		"grpc.keepalive_secs", "grpc.keepalive_timeout_secs", "grpc.max_connections", "decay.background_interval_secs",
		"dream.background_interval_secs", "rate_limit.requests_per_second", "rate_limit.burst"} {
		if !slices.Contains(marked, name) {
			t.Errorf("%s may be 0", name)
		}
	}
}
