package engine

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/archive"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestKDFGateWired: encrypted exports and imports take a slot of the
// engine's key derivation gate, so while every slot is held they wait (and
// give up with their context); once a slot is free they run.
func TestKDFGateWired(t *testing.T) {
	gate := archive.NewKDFGate(1)
	h := newHarness(t, Options{ArchiveKDF: testKDF, KDFGate: gate})
	h.store("a memory worth encrypting", memory.StoreEpisodic)
	key := "passphrase"
	exp := memory.ExportRequest{Format: "cma", Encrypt: true, EncryptionKey: &key}

	release, err := gate.Enter(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	_, err = h.e.Export(ctx, &exp, &bytes.Buffer{})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("export while the gate is full: %v, want it to wait for a slot", err)
	}
	release()

	var buf bytes.Buffer
	if _, err := h.e.Export(t.Context(), &exp, &buf); err != nil {
		t.Fatal(err)
	}
	release, err = gate.Enter(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	req := memory.DefaultImportRequest()
	req.DecryptionKey = &key
	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	_, err = h.e.Import(ctx, &req, bytes.NewReader(buf.Bytes()))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("import while the gate is full: %v, want it to wait for a slot", err)
	}
	release()
	if _, err := h.e.Import(t.Context(), &req, bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
}
