package grpcapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/pkg/access"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"memsvc.dev/memsvc/internal/testtls"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// bearerKey sends an API key with every call, as a client would.
type bearerKey string

func (k bearerKey) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(k)}, nil
}

func (bearerKey) RequireTransportSecurity() bool { return true }

func withKey(ctx context.Context, value string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", value)
}

// TestErrorTable: every CMP code reaches the client as the gRPC code of
// the table, with the CMP code as ErrorInfo reason; other failures are
// INTERNAL with a fixed message and a log line. The table runs through
// Stats and Evolution, the two RPCs without input, whose only failures
// are those of the service.
func TestErrorTable(t *testing.T) {
	svc := &stubService{}
	f := newFixture(t, svc, Options{})
	// failing makes each no-input RPC's service method answer with err (a
	// nil err makes it answer nothing at all) and calls the RPC.
	failing := []struct {
		rpc  string
		call func(ctx context.Context, err error) error
	}{
		{"Stats", func(ctx context.Context, err error) error {
			svc.stats = func(context.Context) (*memory.Stats, error) { return nil, err }
			_, got := f.client.Stats(ctx, &pb.StatsRequest{})
			return got
		}},
		{"Evolution", func(ctx context.Context, err error) error {
			svc.evolution = func(context.Context) (*memory.EvolutionMetrics, error) { return nil, err }
			_, got := f.client.Evolution(ctx, &pb.EvolutionRequest{})
			return got
		}},
	}
	tests := []struct {
		err     error
		code    codes.Code
		reason  memory.Code
		message string
	}{
		{memory.NotFound(memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057")), codes.NotFound, memory.CodeNotFound, "record not found: 01890a5d-ac96-774b-bcce-b302099a8057"},
		{memory.Invalid("limit", "too big"), codes.InvalidArgument, memory.CodeValidation, "limit: too big"},
		{memory.Errorf(memory.CodeStoreInvalid, "m"), codes.InvalidArgument, memory.CodeStoreInvalid, "m"},
		{memory.Errorf(memory.CodeContentTooLarge, "m"), codes.InvalidArgument, memory.CodeContentTooLarge, "m"},
		{memory.Errorf(memory.CodeModalityUnsupported, "m"), codes.InvalidArgument, memory.CodeModalityUnsupported, "m"},
		{memory.Errorf(memory.CodeForgetUnconfirmed, "m"), codes.FailedPrecondition, memory.CodeForgetUnconfirmed, "m"},
		{memory.Errorf(memory.CodeVersionMismatch, "m"), codes.FailedPrecondition, memory.CodeVersionMismatch, "m"},
		{memory.Errorf(memory.CodeWorkingMemoryFull, "m"), codes.ResourceExhausted, memory.CodeWorkingMemoryFull, "m"},
		{&memory.Error{Code: memory.CodeRateLimited, Message: "m", RetryAfter: 3}, codes.ResourceExhausted, memory.CodeRateLimited, "m"},
		{memory.Errorf(memory.CodeInsufficientStorage, "m"), codes.ResourceExhausted, memory.CodeInsufficientStorage, "m"},
		{memory.Errorf(memory.CodeForbidden, "m"), codes.PermissionDenied, memory.CodeForbidden, "m"},
		{memory.Errorf(memory.CodeDecayEngineBusy, "m"), codes.Unavailable, memory.CodeDecayEngineBusy, "m"},
		{memory.Errorf(memory.CodeConsolidationInProgress, "m"), codes.Unavailable, memory.CodeConsolidationInProgress, "m"},
		{memory.Errorf(memory.CodeImportConflict, "m"), codes.AlreadyExists, memory.CodeImportConflict, "m"},
		{fmt.Errorf("export: %w", memory.Errorf(memory.CodeExportFailed, "the archive could not be written")), codes.Internal, memory.CodeExportFailed, "the archive could not be written"},
		{memory.Errorf(memory.CodeInternal, "m"), codes.Internal, memory.CodeInternal, "m"},
		// A service that cannot decrypt its store is failing; the
		// caller's key is fine.
		{memory.Errorf(memory.CodeUnauthorized, "wrong passphrase"), codes.Internal, memory.CodeInternal, msgInternal},
		{errors.New("disk on fire"), codes.Internal, memory.CodeInternal, msgInternal},
		{memory.Errorf(memory.Code("SOMETHING_NEW"), "m"), codes.Internal, memory.Code("SOMETHING_NEW"), "m"},
	}
	covered := map[memory.Code]bool{}
	for _, rpc := range failing {
		for _, tc := range tests {
			t.Run(rpc.rpc+"/"+tc.err.Error(), func(t *testing.T) {
				err := rpc.call(t.Context(), tc.err)
				st := status.Convert(err)
				if st.Code() != tc.code || st.Message() != tc.message {
					t.Fatalf("status %v %q, want %v %q", st.Code(), st.Message(), tc.code, tc.message)
				}
				info := errorInfo(err)
				if info == nil || info.GetReason() != string(tc.reason) || info.GetDomain() != ErrorDomain {
					t.Fatalf("ErrorInfo %v, want reason %s", info, tc.reason)
				}
				if ri := retryInfo(err); (ri != nil) != (tc.reason == memory.CodeRateLimited) || ri != nil && ri.GetRetryDelay().AsDuration() != 3*time.Second {
					t.Fatalf("RetryInfo %v", ri)
				}
				if tc.code == codes.Internal && !strings.Contains(f.logs.String(), tc.err.Error()) {
					t.Fatalf("the cause %q was not logged:\n%s", tc.err, f.logs)
				}
			})
			if me, ok := errors.AsType[*memory.Error](tc.err); ok {
				covered[me.Code] = true
			}
		}

		// A service that gives up because the call was cancelled reports
		// it as such, not as an internal failure.
		if err := rpc.call(t.Context(), fmt.Errorf("%s: %w", rpc.rpc, context.Canceled)); status.Code(err) != codes.Canceled {
			t.Errorf("%s, cancelled service: %v", rpc.rpc, err)
		}
		if err := rpc.call(t.Context(), nil); status.Code(err) != codes.Internal {
			t.Errorf("%s, a service answering nothing: %v", rpc.rpc, err)
		}
	}
	for _, c := range memory.Codes() {
		if !covered[c] {
			t.Errorf("code %s has no case", c)
		}
	}
}

func TestPanicRecovered(t *testing.T) {
	svc := &stubService{}
	f := newFixture(t, svc, Options{})
	svc.stats = func(context.Context) (*memory.Stats, error) { panic("boom") }
	if _, err := f.client.Stats(t.Context(), &pb.StatsRequest{}); status.Code(err) != codes.Internal || status.Convert(err).Message() != msgInternal {
		t.Fatalf("panicking handler: %v", err)
	}
	if !strings.Contains(f.logs.String(), "boom") || !strings.Contains(f.logs.String(), "stack") {
		t.Errorf("panic not logged:\n%s", f.logs)
	}
	svc.stats = nil
	if _, err := f.client.Stats(t.Context(), &pb.StatsRequest{}); err != nil {
		t.Fatalf("the server did not survive a panic: %v", err)
	}
}

func TestAuth(t *testing.T) {
	f := newFixture(t, &stubService{}, Options{AuthEnabled: true, APIKeys: []string{"k1", "second-key"}})
	tests := []struct {
		name    string
		md      []string // authorization values
		code    codes.Code
		message string
	}{
		{"missing", nil, codes.Unauthenticated, msgMissingAuth},
		{"other scheme", []string{"Basic azE6"}, codes.Unauthenticated, msgMissingAuth},
		{"lower-case scheme", []string{"bearer k1"}, codes.OK, ""},
		{"upper-case scheme", []string{"BEARER k1"}, codes.OK, ""},
		{"two values", []string{"Bearer k1", "Bearer k1"}, codes.Unauthenticated, msgMissingAuth},
		{"wrong key", []string{"Bearer k2"}, codes.Unauthenticated, access.MsgInvalidKey},
		{"key with padding", []string{"Bearer  k1"}, codes.Unauthenticated, access.MsgInvalidKey},
		{"prefix of a key", []string{"Bearer second"}, codes.Unauthenticated, access.MsgInvalidKey},
		{"first key", []string{"Bearer k1"}, codes.OK, ""},
		{"second key", []string{"Bearer second-key"}, codes.OK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			for _, v := range tc.md {
				ctx = withKey(ctx, v)
			}
			_, err := f.client.Stats(ctx, &pb.StatsRequest{})
			if st := status.Convert(err); st.Code() != tc.code || st.Message() != tc.message {
				t.Fatalf("status %v %q, want %v %q", st.Code(), st.Message(), tc.code, tc.message)
			}
			if tc.code != codes.OK && errorInfo(err).GetReason() != string(memory.CodeUnauthorized) {
				t.Errorf("ErrorInfo %v", errorInfo(err))
			}
			// Streams are guarded the same way.
			_, err = importAll(ctx, f.client, &pb.ImportRequest{Options: &pb.ImportOptions{}})
			if tc.code != codes.OK && status.Code(err) != tc.code {
				t.Errorf("import stream: %v, want %v", err, tc.code)
			}
		})
	}
	t.Run("health and reflection need no key", func(t *testing.T) {
		if _, err := f.health.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
			t.Error(err)
		}
		if _, err := testkit.ListServices(t.Context(), f.conn); err != nil {
			t.Error(err)
		}
	})
}

func TestRateLimit(t *testing.T) {
	clock := testkit.NewClock(t0)
	f := newFixture(t, &stubService{}, Options{
		AuthEnabled: true, APIKeys: []string{"k1", "k2"},
		RateLimit: RateLimit{RequestsPerSecond: 0.5, Burst: 2},
		Now:       clock.Now,
	})
	k1, k2 := withKey(t.Context(), "Bearer k1"), withKey(t.Context(), "Bearer k2")
	stats := func(ctx context.Context) error {
		_, err := f.client.Stats(ctx, &pb.StatsRequest{})
		return err
	}
	for i := range 2 {
		if err := stats(k1); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	err := stats(k1)
	if status.Code(err) != codes.ResourceExhausted || errorInfo(err).GetReason() != string(memory.CodeRateLimited) {
		t.Fatalf("over the limit: %v", err)
	}
	// The next token is 2 s away: truncated plus one, as over HTTP.
	if ri := retryInfo(err); ri == nil || ri.GetRetryDelay().AsDuration() != 3*time.Second {
		t.Fatalf("RetryInfo %v", ri)
	}
	if err := stats(k2); err != nil {
		t.Fatalf("another key has its own bucket: %v", err)
	}
	if _, err := f.health.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("health is not rate limited: %v", err)
	}
	// Streams spend tokens too.
	if _, _, err := exportAll(k1, f.client, &pb.ExportRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("export over the limit: %v", err)
	}
	clock.Advance(2 * time.Second)
	if err := stats(k1); err != nil {
		t.Fatalf("after the refill: %v", err)
	}
	if err := stats(k1); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("one token came back, not two: %v", err)
	}
}

func TestLimiterWithoutAuthKeysOnPeer(t *testing.T) {
	clock := testkit.NewClock(t0)
	f := newFixture(t, &stubService{}, Options{RateLimit: RateLimit{RequestsPerSecond: 1, Burst: 1}, Now: clock.Now})
	if _, err := f.client.Stats(t.Context(), &pb.StatsRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Stats(t.Context(), &pb.StatsRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("second call from the same peer: %v", err)
	}
}

func TestHealth(t *testing.T) {
	f := newFixture(t, &stubService{}, Options{AuthEnabled: true, APIKeys: []string{"k"}})
	ctx := t.Context()
	for _, svc := range []string{"", ServiceName} {
		resp, err := f.health.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("check %q: %v %v", svc, resp, err)
		}
	}
	if _, err := f.health.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown service: %v", err)
	}
	watch, err := f.health.Watch(ctx, &healthpb.HealthCheckRequest{Service: ServiceName})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("watch: %v %v", m, err)
	}
	f.srv.BeginShutdown()
	if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("watch after BeginShutdown: %v %v", m, err)
	}
	// The watch ends there, so it cannot hold up a graceful stop.
	if m, err := watch.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("watch after NOT_SERVING: %v %v", m, err)
	}
	for _, svc := range []string{"", ServiceName} {
		if resp, err := f.health.Check(ctx, &healthpb.HealthCheckRequest{Service: svc}); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Fatalf("check %q after BeginShutdown: %v %v", svc, resp, err)
		}
	}
	// Calls still work while draining.
	if _, err := f.client.Stats(withKey(ctx, "Bearer k"), &pb.StatsRequest{}); err != nil {
		t.Fatal(err)
	}
}

// TestServeShutdown: when Serve's context ends, health watchers see
// NOT_SERVING, running calls may finish, and Serve returns nil.
func TestServeShutdown(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	svc := &stubService{stats: func(ctx context.Context) (*memory.Stats, error) {
		close(started)
		<-release
		return &memory.Stats{TotalRecords: 7}, nil
	}}
	f := newFixture(t, svc, Options{})
	watch, err := f.health.Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("watch: %v %v", m, err)
	}
	answer := make(chan error, 1)
	go func() {
		resp, err := f.client.Stats(context.Background(), &pb.StatsRequest{})
		if err == nil && resp.GetTotalRecords() != 7 {
			err = fmt.Errorf("answer %v", resp)
		}
		answer <- err
	}()
	<-started
	f.stop()
	if m, err := watch.Recv(); err != nil || m.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("watch during shutdown: %v %v", m, err)
	}
	close(release)
	if err := <-answer; err != nil {
		t.Fatalf("a call running at shutdown was not allowed to finish: %v", err)
	}
	f.shutdown(t)
}

// TestShutdownDeadline: a call that does not finish is cut off at the
// deadline and Serve returns.
func TestShutdownDeadline(t *testing.T) {
	started := make(chan struct{})
	svc := &stubService{stats: func(ctx context.Context) (*memory.Stats, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	f := newFixture(t, svc, Options{ShutdownTimeout: 50 * time.Millisecond})
	answer := make(chan error, 1)
	go func() {
		_, err := f.client.Stats(context.Background(), &pb.StatsRequest{})
		answer <- err
	}()
	<-started
	f.shutdown(t)
	if err := <-answer; status.Code(err) == codes.OK {
		t.Fatal("the stuck call succeeded")
	}
	if !strings.Contains(f.logs.String(), "cut off") {
		t.Errorf("the hard stop was not logged:\n%s", f.logs)
	}
}

func TestReflection(t *testing.T) {
	f := newFixture(t, &stubService{}, Options{AuthEnabled: true, APIKeys: []string{"k"}})
	names, err := testkit.ListServices(t.Context(), f.conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{ServiceName, "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v, without %s", names, want)
		}
	}
	// A tool such as grpcurl resolves the service's descriptor next.
	stream, err := reflectionpb.NewServerReflectionClient(f.conn).ServerReflectionInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: ServiceName}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil || len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Fatalf("file containing %s: %v %v", ServiceName, resp, err)
	}
}

// TestTLS serves on a loopback TCP listener with a self-signed
// certificate: a client trusting it gets answers, a plaintext client does
// not.
func TestTLS(t *testing.T) {
	certFile, keyFile, pool := testtls.SelfSigned(t, t.TempDir())
	srv, err := NewServer(&stubService{}, Options{TLSCertFile: certFile, TLSKeyFile: keyFile, AuthEnabled: true, APIKeys: []string{"k1"}})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTCP(t, srv)
	dial := func(creds credentials.TransportCredentials, opts ...grpc.DialOption) pb.MemsvcServiceClient {
		conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		return pb.NewMemsvcServiceClient(conn)
	}
	tlsCreds := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	if _, err := dial(tlsCreds).Stats(t.Context(), &pb.StatsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("TLS client without a key: %v", err)
	}
	if _, err := dial(tlsCreds, grpc.WithPerRPCCredentials(bearerKey("k1"))).Stats(t.Context(), &pb.StatsRequest{}); err != nil {
		t.Fatalf("TLS client with the key: %v", err)
	}
	plain := dial(insecure.NewCredentials())
	ctxShort, cancelShort := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancelShort()
	if _, err := plain.Stats(ctxShort, &pb.StatsRequest{}); status.Code(err) == codes.OK {
		t.Fatal("a plaintext client got an answer from a TLS server")
	}
}

func TestNewServerErrors(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := testtls.SelfSigned(t, dir)
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		svc  memory.Service
		opts Options
		want string
	}{
		{"no service", nil, Options{}, "a service is required"},
		{"auth without keys", &stubService{}, Options{AuthEnabled: true}, "without API keys"},
		{"blank key", &stubService{}, Options{AuthEnabled: true, APIKeys: []string{"k", " "}}, "API key 2 is blank"},
		{"certificate only", &stubService{}, Options{TLSCertFile: certFile}, "both a certificate file and a key file"},
		{"key only", &stubService{}, Options{TLSKeyFile: keyFile}, "both a certificate file and a key file"},
		{"missing file", &stubService{}, Options{TLSCertFile: filepath.Join(dir, "nope.pem"), TLSKeyFile: keyFile}, "nope.pem"},
		{"not PEM", &stubService{}, Options{TLSCertFile: garbage, TLSKeyFile: keyFile}, "garbage.pem"},
		{"swapped", &stubService{}, Options{TLSCertFile: keyFile, TLSKeyFile: certFile}, "load TLS certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewServer(tc.svc, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Keys are ignored while authentication is off, as over HTTP.
	if _, err := NewServer(&stubService{}, Options{APIKeys: []string{""}}); err != nil {
		t.Fatal(err)
	}
}

func TestServeTwice(t *testing.T) {
	f := newFixture(t, &stubService{}, Options{})
	// An answer proves the fixture's Serve runs.
	if _, err := f.client.Stats(t.Context(), &pb.StatsRequest{}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Serve(t.Context(), ln); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("second Serve: %v", err)
	}
}

func TestMaxRecvMsgBytes(t *testing.T) {
	f := newFixture(t, newEngine(t), Options{MaxRecvMsgBytes: 4096})
	_, err := f.client.EncodeStore(t.Context(), &pb.EncodeStoreRequest{Content: textContent(strings.Repeat("x", 8192))})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("over-size request: %v", err)
	}
	if _, err := f.client.EncodeStore(t.Context(), &pb.EncodeStoreRequest{Content: textContent("small")}); err != nil {
		t.Fatal(err)
	}
}

// TestExportImportRoundTrip exports a store of several chunks over gRPC,
// plain and encrypted, and imports it into another server; the records
// come back the same.
func TestExportImportRoundTrip(t *testing.T) {
	ctx := t.Context()
	src := newFixture(t, newEngine(t), Options{})
	var ids []string
	for i := range 4 {
		text := fmt.Sprintf("record %d: %s", i, strings.Repeat("lorem ipsum dolor sit amet ", 3000))
		r, err := src.client.EncodeStore(ctx, &pb.EncodeStoreRequest{Content: textContent(text), Metadata: mustStruct(t, map[string]any{"i": float64(i)})})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.GetRecordId())
	}
	if _, err := src.client.EncodeStoreRaw(ctx, &pb.EncodeStoreRawRequest{SessionId: "s", Content: textContent("raw entry")}); err != nil {
		t.Fatal(err)
	}
	key := "correct horse battery staple"
	tests := []struct {
		name string
		req  *pb.ExportRequest
		opts *pb.ImportOptions
	}{
		{"plain", &pb.ExportRequest{IncludeRawJournal: true}, &pb.ImportOptions{ArchiveId: "plain"}},
		{"encrypted", &pb.ExportRequest{IncludeRawJournal: true, Encrypt: true, EncryptionKey: &key},
			&pb.ImportOptions{ArchiveId: "enc", Strategy: pb.ImportStrategy_IMPORT_STRATEGY_REPLACE, DecryptionKey: &key}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, sum, err := exportAll(ctx, src.client, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) <= 2*exportChunkBytes || uint64(len(data)) != sum.GetSizeBytes() || sum.GetRecordCount() != 5 {
				t.Fatalf("%d bytes, summary %v", len(data), sum)
			}
			dst := newFixture(t, newEngine(t), Options{})
			resp, err := importAll(ctx, dst.client, chunks(tc.opts, data, 10_000)...)
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetRecordsImported() != 5 {
				t.Fatalf("imported %d records, want 5", resp.GetRecordsImported())
			}
			for _, id := range ids {
				a, err := src.client.IntrospectRecord(ctx, &pb.IntrospectRecordRequest{RecordId: id})
				if err != nil {
					t.Fatal(err)
				}
				b, err := dst.client.IntrospectRecord(ctx, &pb.IntrospectRecordRequest{RecordId: id})
				if err != nil {
					t.Fatal(err)
				}
				if !proto.Equal(a.GetRecord().GetContent(), b.GetRecord().GetContent()) || !proto.Equal(a.GetRecord().GetMetadata(), b.GetRecord().GetMetadata()) {
					t.Errorf("record %s differs after the round trip", id)
				}
			}
			raw, err := dst.client.RecallRawQuery(ctx, &pb.RecallRawQueryRequest{SessionId: proto.String("s")})
			if err != nil || len(raw.GetRecords()) != 1 {
				t.Fatalf("raw journal after import: %v %v", raw, err)
			}
		})
	}
}

func TestImportStreamErrors(t *testing.T) {
	var seen []byte
	svc := &stubService{imp: func(_ context.Context, req *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, memory.Errorf(memory.CodeImportConflict, "read: %v", err)
		}
		if len(b) == 0 {
			return nil, memory.Errorf(memory.CodeImportConflict, "empty")
		}
		seen = b
		return &memory.ImportResponse{RecordsImported: uint32(len(b))}, nil
	}}
	f := newFixture(t, svc, Options{MaxImportBytes: 100})
	opts := &pb.ImportOptions{ArchiveId: "a"}
	tests := []struct {
		name   string
		msgs   []*pb.ImportRequest
		code   codes.Code
		reason memory.Code
		want   string
	}{
		{"empty stream", nil, codes.InvalidArgument, memory.CodeValidation, "the stream is empty"},
		{"no options", []*pb.ImportRequest{{Data: []byte("x")}}, codes.InvalidArgument, memory.CodeValidation, "options: required"},
		{"bad options", []*pb.ImportRequest{{Options: &pb.ImportOptions{Strategy: 9}}}, codes.InvalidArgument, memory.CodeValidation, "options.strategy"},
		{"no data", []*pb.ImportRequest{{Options: opts}}, codes.InvalidArgument, memory.CodeValidation, "the archive is empty"},
		{"options twice", []*pb.ImportRequest{{Options: opts, Data: []byte("ab")}, {Options: opts}}, codes.InvalidArgument, memory.CodeValidation, "only in the first message"},
		{"too large at once", []*pb.ImportRequest{{Options: opts, Data: make([]byte, 101)}}, codes.InvalidArgument, memory.CodeContentTooLarge, "import limit of 100 bytes"},
		{"too large in pieces", []*pb.ImportRequest{{Options: opts}, {Data: make([]byte, 60)}, {Data: make([]byte, 41)}}, codes.InvalidArgument, memory.CodeContentTooLarge, "import limit of 100 bytes"},
		{"at the limit", []*pb.ImportRequest{{Options: opts, Data: []byte("ab")}, {}, {Data: make([]byte, 98)}}, codes.OK, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := importAll(t.Context(), f.client, tc.msgs...)
			st := status.Convert(err)
			if st.Code() != tc.code || !strings.Contains(st.Message(), tc.want) {
				t.Fatalf("status %v %q, want %v containing %q", st.Code(), st.Message(), tc.code, tc.want)
			}
			if tc.code == codes.OK {
				if resp.GetRecordsImported() != 100 || !bytes.HasPrefix(seen, []byte("ab")) {
					t.Fatalf("answer %v, service saw %d bytes", resp, len(seen))
				}
				return
			}
			if errorInfo(err).GetReason() != string(tc.reason) {
				t.Errorf("reason %v, want %s", errorInfo(err), tc.reason)
			}
		})
	}
}

// TestImportClientGoesAway: a client that cancels half-way is reported as
// cancelled, not as whatever the service makes of a short archive.
func TestImportClientGoesAway(t *testing.T) {
	result := make(chan error, 1)
	reading := make(chan struct{})
	svc := &stubService{imp: func(_ context.Context, _ *memory.ImportRequest, r io.Reader) (*memory.ImportResponse, error) {
		close(reading)
		_, err := io.ReadAll(r)
		result <- err
		return nil, memory.Errorf(memory.CodeImportConflict, "truncated archive")
	}}
	f := newFixture(t, svc, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	stream, err := f.client.Import(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&pb.ImportRequest{Options: &pb.ImportOptions{ArchiveId: "a"}, Data: []byte("part")}); err != nil {
		t.Fatal(err)
	}
	<-reading
	cancel()
	if err := <-result; status.Code(err) != codes.Canceled {
		t.Fatalf("the service read %v, want the cancellation", err)
	}
}

// TestExportFailsMidStream: data already sent, then a failure: the client
// gets the data, an error status and no summary.
func TestExportFailsMidStream(t *testing.T) {
	svc := &stubService{export: func(_ context.Context, _ *memory.ExportRequest, w io.Writer) (*memory.ExportResponse, error) {
		if _, err := w.Write(make([]byte, 3*exportChunkBytes+10)); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("scan: %w", &memory.Error{Code: memory.CodeExportFailed, Message: "the archive could not be written"})
	}}
	f := newFixture(t, svc, Options{})
	stream, err := f.client.Export(t.Context(), &pb.ExportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got int
	for {
		msg, err := stream.Recv()
		if err != nil {
			if status.Code(err) != codes.Internal || errorInfo(err).GetReason() != string(memory.CodeExportFailed) {
				t.Fatalf("end of stream: %v", err)
			}
			break
		}
		if msg.GetSummary() != nil {
			t.Fatal("a failed export sent a summary")
		}
		if n := len(msg.GetData()); n > exportChunkBytes {
			t.Fatalf("a %d-byte chunk", n)
		}
		got += len(msg.GetData())
	}
	if got != 3*exportChunkBytes {
		t.Errorf("received %d bytes before the failure, want the 3 full chunks", got)
	}
}
