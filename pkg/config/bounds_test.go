package config

import (
	"strings"
	"testing"
)

// TestBoundsKeys: the answer limit and the loopback rate limit switch have
// their documented defaults, load from the environment and refuse values
// that cannot work.
func TestBoundsKeys(t *testing.T) {
	c := mustLoad(t, LoadOptions{})
	if c.MaxResponseBytes != 64<<20 || c.RateLimit.LimitLoopback {
		t.Errorf("defaults: max_response_bytes %d, limit_loopback %v", c.MaxResponseBytes, c.RateLimit.LimitLoopback)
	}
	c = mustLoad(t, LoadOptions{Environ: []string{"MEMSVC_MAX_RESPONSE_BYTES=2097152", "MEMSVC_RATE_LIMIT__LIMIT_LOOPBACK=true"}})
	if c.MaxResponseBytes != 2<<20 || !c.RateLimit.LimitLoopback {
		t.Errorf("from the environment: max_response_bytes %d, limit_loopback %v", c.MaxResponseBytes, c.RateLimit.LimitLoopback)
	}
	_, err := Load(LoadOptions{File: writeFile(t, "max_response_bytes = 4096\n")})
	if err == nil || !strings.Contains(err.Error(), "max_response_bytes") || !strings.Contains(err.Error(), "at least 1048576") {
		t.Errorf("a tiny answer limit: %v", err)
	}
}
