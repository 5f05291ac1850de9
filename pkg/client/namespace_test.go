package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// TestNamespaceHeader: the client sends X-Memsvc-Namespace from the call's
// context, else from Options.Namespace, else not at all; probes never
// carry it; a bad name is refused before anything is sent.
func TestNamespaceHeader(t *testing.T) {
	stats := answer(200, `{"total_records":0}`)
	ts, last := canned(t, map[string]http.HandlerFunc{
		wire.PathStats:               stats,
		wire.PathHealth:              answer(200, `{"status":"ok"}`),
		wire.PathNamespaces:          answer(200, `{"namespaces":[{"name":"a","total_records":1,"records_by_store":{},"raw_journal_records":0}]}`),
		wire.NamespacePath("proj-a"): answer(200, `{"name":"proj-a","records_deleted":3,"raw_entries_deleted":4}`),
		wire.PathExportStream:        answer(200, "archive", "Trailer", "x"),
	})
	plain, err := client.New(ts.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bound, err := client.New(ts.URL, client.Options{Namespace: "from-options"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		c    *client.Client
		ctx  context.Context
		want string
	}{
		{"none", plain, ctx, ""},
		{"options", bound, ctx, "from-options"},
		{"context", plain, memory.WithNamespace(ctx, "from-ctx"), "from-ctx"},
		{"context over options", bound, memory.WithNamespace(ctx, "from-ctx"), "from-ctx"},
	} {
		if _, err := tc.c.Stats(tc.ctx); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r := last.Load()
		if got := r.Header.Get(wire.HeaderNamespace); got != tc.want {
			t.Errorf("%s: header %q, want %q", tc.name, got, tc.want)
		}
		if _, present := r.Header[wire.HeaderNamespace]; present != (tc.want != "") {
			t.Errorf("%s: header present %v", tc.name, present)
		}
	}
	if err := bound.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if got := last.Load().Header.Get(wire.HeaderNamespace); got != "" {
		t.Errorf("the health probe carries namespace %q", got)
	}
	// A streaming call carries it too.
	_, _ = bound.Export(ctx, ptr(memory.DefaultExportRequest()), io.Discard)
	if r := last.Load(); r.URL.Path != wire.PathExportStream || r.Header.Get(wire.HeaderNamespace) != "from-options" {
		t.Errorf("export stream to %s with namespace %q", r.URL.Path, r.Header.Get(wire.HeaderNamespace))
	}

	// Bad names.
	if _, err := client.New(ts.URL, client.Options{Namespace: "Not Valid"}); !errors.Is(err, memory.ErrValidation) {
		t.Errorf("New with a bad namespace: %v", err)
	}
	before := last.Load()
	if _, err := plain.Stats(memory.WithNamespace(ctx, "bad\nname")); !errors.Is(err, memory.ErrValidation) || !strings.Contains(err.Error(), "namespace") {
		t.Errorf("a bad namespace in the context: %v", err)
	}
	if last.Load() != before {
		t.Error("a request with a bad namespace was sent")
	}

	// An import that keeps the archive's namespaces says so.
	_, _ = bound.Import(ctx, &memory.ImportRequest{ArchiveID: "a", PreserveNamespaces: true}, strings.NewReader("archive"))
	if r := last.Load(); r.URL.Path != wire.PathImportStream || r.URL.Query().Get(wire.QueryPreserveNamespaces) != "true" {
		t.Errorf("import sent %s?%s", r.URL.Path, r.URL.RawQuery)
	}

	// Stats of all namespaces.
	if _, err := bound.StatsAll(ctx); err != nil {
		t.Fatal(err)
	}
	if r := last.Load(); r.URL.Path != wire.PathStats || r.URL.RawQuery != "all_namespaces=true" {
		t.Errorf("StatsAll sent %s?%s", r.URL.Path, r.URL.RawQuery)
	}

	// The namespace routes.
	list, err := plain.Namespaces(ctx)
	if err != nil || len(list.Namespaces) != 1 || list.Namespaces[0].Name != "a" || list.Namespaces[0].TotalRecords != 1 {
		t.Fatalf("Namespaces: %+v, %v", list, err)
	}
	dropped, err := bound.DropNamespace(ctx, &memory.DropNamespaceRequest{Name: "proj-a", Confirm: true})
	if err != nil || dropped.RecordsDeleted != 3 || dropped.RawEntriesDeleted != 4 {
		t.Fatalf("DropNamespace: %+v, %v", dropped, err)
	}
	if r := last.Load(); r.Method != http.MethodDelete || r.URL.Path != "/v1/namespaces/proj-a" {
		t.Errorf("drop sent as %s %s", r.Method, r.URL.Path)
	}
	if _, err := plain.DropNamespace(ctx, &memory.DropNamespaceRequest{Name: "../stats", Confirm: true}); !errors.Is(err, memory.ErrValidation) {
		t.Errorf("drop of a bad name: %v", err)
	}
}
