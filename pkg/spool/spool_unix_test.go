//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package spool

import (
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpenCreatesPrivateDirectory(t *testing.T) {
	unixOnly(t)
	base := t.TempDir()
	old := syscall.Umask(0o277) // would leave directories we cannot write
	defer syscall.Umask(old)
	path := filepath.Join(base, "home", ".memsvc", "recorder", "spool")
	d := open(t, path)
	if got := mode(t, path); got != 0o700 {
		t.Fatalf("new spool directory mode %04o, want 0700", got)
	}
	if _, err := d.Write([][]byte{[]byte(`{"a":1}`)}); err != nil {
		t.Fatalf("write into new directory: %v", err)
	}
	for p := filepath.Dir(path); p != base; p = filepath.Dir(p) {
		if got := mode(t, p); got != 0o700 {
			t.Errorf("created parent %s has mode %04o, want 0700", p, got)
		}
	}
}
