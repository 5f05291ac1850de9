package grpcapi

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/access"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// goodRequests holds a request every method accepts, by method name; the
// namespace tests fail for a method that has none, so a new RPC cannot
// escape them.
func goodRequests() map[string]proto.Message {
	id := "0196a9e2-5c1d-7f00-8a00-0000000000aa"
	text := &pb.MemoryContent{Blocks: []*pb.ContentBlock{{Modality: pb.Modality_MODALITY_TEXT, Format: "text/plain", Data: []byte("hi")}}}
	at := timestamppb.New(t0)
	return map[string]proto.Message{
		"EncodeStore":         &pb.EncodeStoreRequest{Content: text},
		"EncodeBatch":         &pb.EncodeBatchRequest{},
		"EncodeUpdate":        &pb.EncodeUpdateRequest{RecordId: id},
		"EncodeStoreRaw":      &pb.EncodeStoreRawRequest{SessionId: "s", Content: text},
		"EncodeBatchStoreRaw": &pb.EncodeBatchStoreRawRequest{},
		"RecallQuery":         &pb.RecallQueryRequest{},
		"RecallRawQuery":      &pb.RecallRawQueryRequest{},
		"RecallAssociate":     &pb.RecallAssociateRequest{RecordId: id},
		"RecallTimeline":      &pb.RecallTimelineRequest{Range: &pb.TemporalRange{Start: at, End: timestamppb.New(t0.Add(3600e9))}},
		"RecallGraph":         &pb.RecallGraphRequest{},
		"Consolidate":         &pb.ConsolidateRequest{},
		"DreamTick":           &pb.DreamTickRequest{},
		"DecayTick":           &pb.DecayTickRequest{},
		"SetMode":             &pb.SetModeRequest{Mode: pb.RecallMode_RECALL_MODE_PERFECT},
		"Forget":              &pb.ForgetRequest{Confirm: proto.Bool(true)},
		"Export":              &pb.ExportRequest{},
		"Import":              &pb.ImportRequest{Options: &pb.ImportOptions{ArchiveId: "a"}, Data: []byte("archive")},
		"Stats":               &pb.StatsRequest{},
		"IntrospectRecord":    &pb.IntrospectRecordRequest{RecordId: id},
		"DecayForecast":       &pb.DecayForecastRequest{ForecastAt: at},
		"Evolution":           &pb.EvolutionRequest{},
		"Namespaces":          &pb.NamespacesRequest{},
		"DropNamespace":       &pb.DropNamespaceRequest{Name: "from-request", Confirm: true},
	}
}

// invoke calls method m with the request in, whatever its kind (unary,
// client or server stream), and returns the call's error.
func invoke(ctx context.Context, conn *grpc.ClientConn, m protoreflect.MethodDescriptor, in proto.Message) error {
	_, err := testkit.Invoke(ctx, conn, m, in)
	return err
}

// withMetadata adds metadata pairs to ctx for an outgoing call.
func withMetadata(ctx context.Context, kv ...string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// TestNamespaceMetadata walks every method of the service descriptor with
// a namespace in the metadata: each method hands the service that
// namespace, except DropNamespace (which acts in the namespace its request
// names) and Namespaces (which acts in none).
func TestNamespaceMetadata(t *testing.T) {
	spy := &testkit.NamespaceSpy{Svc: testkit.AcceptAll{}}
	f := newFixture(t, spy, Options{})
	good := goodRequests()
	for _, m := range testkit.ServiceMethods(t) {
		name := string(m.Name())
		t.Run(name, func(t *testing.T) {
			in, ok := good[name]
			if !ok {
				t.Fatalf("no good request for %s: add one to goodRequests", name)
			}
			spy.Reset()
			ctx := withMetadata(t.Context(), NamespaceMetadata, "from-md")
			if err := invoke(ctx, f.conn, m, in); err != nil {
				t.Fatal(err)
			}
			calls := spy.Calls()
			if len(calls) == 0 {
				t.Fatal("the service was not called")
			}
			want := "from-md"
			switch reachOf("/" + string(m.Parent().FullName()) + "/" + name) {
			case inRequest:
				want = "from-request"
			case keyWide:
				return
			}
			for method, ns := range calls {
				if ns != want {
					t.Errorf("%s acted in %q, want %q", method, ns, want)
				}
			}
		})
	}

	// Without metadata: the default namespace.
	spy.Reset()
	if _, err := f.client.Stats(t.Context(), &pb.StatsRequest{}); err != nil {
		t.Fatal(err)
	}
	if ns, _ := spy.Seen("Stats"); ns != memory.DefaultNamespace {
		t.Errorf("a call without metadata acted in %q", ns)
	}
	// Bad metadata is INVALID_ARGUMENT naming it, before the service.
	for _, bad := range [][]string{{"Upper"}, {""}, {"a/b"}, {strings.Repeat("x", 65)}, {"a", "b"}} {
		spy.Reset()
		var kv []string
		for _, v := range bad {
			kv = append(kv, NamespaceMetadata, v)
		}
		_, err := f.client.Stats(withMetadata(t.Context(), kv...), &pb.StatsRequest{})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "memsvc-namespace metadata") {
			t.Errorf("metadata %q: %v", bad, err)
		}
		if calls := spy.Calls(); len(calls) != 0 {
			t.Errorf("metadata %q reached the service: %v", bad, calls)
		}
	}
}

// TestBoundKeysGRPC: a key bound to namespaces gets PERMISSION_DENIED
// (reason FORBIDDEN) from every method on a namespace it may not use,
// before the service sees the call, and is served in its own; it lists
// only its namespaces and may not total stats over all of them.
func TestBoundKeysGRPC(t *testing.T) {
	spy := &testkit.NamespaceSpy{Svc: testkit.AcceptAll{Names: []string{"default", "a", "b", "c"}}}
	ring, err := access.NewScopedKeyring([]access.Key{{Secret: "all-key", Scope: access.AllNamespaces()},
		{Secret: "a-key", Scope: testkit.Scope(t, "a")}, {Secret: "ab-key", Scope: testkit.Scope(t, "a", "b")}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, spy, Options{Gate: access.NewGate(access.Policy{Keys: ring}, nil)})
	as := func(key string, kv ...string) context.Context {
		return withMetadata(t.Context(), append([]string{"authorization", "Bearer " + key}, kv...)...)
	}
	forbidden := func(t *testing.T, err error, want string) {
		t.Helper()
		if status.Code(err) != codes.PermissionDenied {
			t.Fatalf("%v, want PERMISSION_DENIED", err)
		}
		if info := errorInfo(err); info == nil || info.GetReason() != string(memory.CodeForbidden) {
			t.Errorf("error info %v, want reason FORBIDDEN", info)
		}
		if msg := status.Convert(err).Message(); !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	good := goodRequests()
	for _, m := range testkit.ServiceMethods(t) {
		name := string(m.Name())
		full := "/" + string(m.Parent().FullName()) + "/" + name
		t.Run(name, func(t *testing.T) {
			in, ok := good[name]
			if !ok {
				t.Fatalf("no good request for %s: add one to goodRequests", name)
			}
			spy.Reset()
			switch reachOf(full) {
			case inMetadata:
				forbidden(t, invoke(as("a-key", NamespaceMetadata, "b"), f.conn, m, in), `namespace "b"`)
				forbidden(t, invoke(as("ab-key"), f.conn, m, in), "memsvc-namespace")
				forbidden(t, invoke(as("ab-key", NamespaceMetadata, "c"), f.conn, m, in), `namespace "c"`)
			case inRequest:
				req := proto.Clone(in).(*pb.DropNamespaceRequest)
				req.Name = "b"
				forbidden(t, invoke(as("a-key", NamespaceMetadata, "a"), f.conn, m, req), `namespace "b"`)
				in = proto.Clone(in)
				in.(*pb.DropNamespaceRequest).Name = "a"
			case keyWide:
				return // below
			}
			if calls := spy.Calls(); len(calls) != 0 {
				t.Errorf("a refused call reached the service: %v", calls)
			}
			for _, try := range []struct{ key, ns string }{{"a-key", ""}, {"ab-key", "a"}, {"all-key", "a"}} {
				spy.Reset()
				var kv []string
				if try.ns != "" {
					kv = []string{NamespaceMetadata, try.ns}
				}
				if err := invoke(as(try.key, kv...), f.conn, m, in); err != nil {
					t.Fatalf("key %s in %q: %v", try.key, try.ns, err)
				}
				for method, ns := range spy.Calls() {
					if ns != "a" {
						t.Errorf("key %s: %s acted in %q, want a", try.key, method, ns)
					}
				}
			}
		})
	}

	for key, want := range map[string]string{"a-key": "a", "ab-key": "a,b", "all-key": "default,a,b,c"} {
		resp, err := f.client.Namespaces(as(key), &pb.NamespacesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, n := range resp.GetNamespaces() {
			names = append(names, n.GetName())
		}
		if strings.Join(names, ",") != want {
			t.Errorf("%s sees %v, want %s", key, names, want)
		}
	}

	export := testkit.ServiceMethod(t, "Export")
	forbidden(t, invoke(as("ab-key", NamespaceMetadata, "a"), f.conn, export, &pb.ExportRequest{Namespaces: []string{"a", "c"}}), `namespace "c"`)
	forbidden(t, invoke(as("ab-key", NamespaceMetadata, "a"), f.conn, export, &pb.ExportRequest{Namespaces: []string{"*"}}), "export of every namespace")
	if err := invoke(as("ab-key", NamespaceMetadata, "a"), f.conn, export, &pb.ExportRequest{Namespaces: []string{"a", "b"}}); err != nil {
		t.Errorf("export of the key's namespaces: %v", err)
	}
	if err := invoke(as("all-key"), f.conn, export, &pb.ExportRequest{Namespaces: []string{"*"}}); err != nil {
		t.Errorf("export of every namespace with an all-namespace key: %v", err)
	}
	imp := testkit.ServiceMethod(t, "Import")
	preserve := &pb.ImportRequest{Options: &pb.ImportOptions{ArchiveId: "x", PreserveNamespaces: true}, Data: []byte("archive")}
	forbidden(t, invoke(as("a-key"), f.conn, imp, preserve), "preserve_namespaces")
	if err := invoke(as("all-key"), f.conn, imp, preserve); err != nil {
		t.Errorf("preserve_namespaces with an all-namespace key: %v", err)
	}

	_, err = f.client.Stats(as("ab-key", NamespaceMetadata, "a"), &pb.StatsRequest{AllNamespaces: true})
	forbidden(t, err, "stats of all namespaces")
	spy.Reset()
	if _, err := f.client.Stats(as("all-key"), &pb.StatsRequest{AllNamespaces: true}); err != nil {
		t.Errorf("stats of all namespaces with an all-namespace key: %v", err)
	}
	if calls := spy.Calls(); len(calls) != 1 || calls["StatsAll"] == "" {
		t.Errorf("stats of all namespaces called %v, want StatsAll", calls)
	}
}
