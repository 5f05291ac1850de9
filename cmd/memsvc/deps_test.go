package main

import (
	"testing"

	"memsvc.dev/memsvc/internal/depcheck"
)

// TestPebbleDependency: only memsvc may link pebble (and so open a data
// directory); the companions must not (their own tests say so).
func TestPebbleDependency(t *testing.T) {
	if !depcheck.Reaches(t, "github.com/cockroachdb/pebble") {
		t.Fatal("memsvc does not link pebble: it could not open a data directory")
	}
}
