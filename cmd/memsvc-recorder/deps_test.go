package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPebbleDependency: only memsvc may link pebble (and so open a data
// directory); the companions must not.
func TestPebbleDependency(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	links := strings.Contains(string(out), "github.com/cockroachdb/pebble")
	if links != false {
		t.Fatalf("memsvc-recorder links pebble: %v, want %v", links, false)
	}
}
