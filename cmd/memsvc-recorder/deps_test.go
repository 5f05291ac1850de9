package main

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestPebbleDependency: only memsvc may link pebble (and so open a data
// directory); memsvc-recorder must not.
func TestPebbleDependency(t *testing.T) {
	depcheck.NeverReaches(t, "github.com/cockroachdb/pebble")
}
