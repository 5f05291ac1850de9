package e2e

import (
	"context"
	"crypto/tls"
	"regexp"
	"slices"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"memsvc.dev/memsvc/internal/testkit"
	"memsvc.dev/memsvc/internal/testtls"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
)

var grpcListenRE = regexp.MustCompile(`gRPC +listening on (\S+)`)

// bearer sends an API key with every call, refusing to do so without TLS.
type bearer string

func (k bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(k)}, nil
}

func (bearer) RequireTransportSecurity() bool { return true }

// TestGRPCEndToEnd runs memsvc serve with the gRPC API on, TLS from a
// self-signed certificate and authentication, and uses it as a client
// would: store, recall and stats with the key; a call without the key is
// refused; reflection lists the service; health reports SERVING.
func TestGRPCEndToEnd(t *testing.T) {
	certFile, keyFile, pool := testtls.SelfSigned(t, t.TempDir())
	srv := startCmd(t, binCmd(t, "memsvc", []string{
		"MEMSVC_GRPC__TLS_CERT_PATH=" + certFile, "MEMSVC_GRPC__TLS_KEY_PATH=" + keyFile,
		"MEMSVC_AUTH__ENABLED=true", "MEMSVC_AUTH_API_KEYS=k1",
	}, "serve", "--data-dir", t.TempDir(), "--port", "0", "--grpc-port", "0"))
	addr := grpcAddr(t, srv)

	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	dial := func(opts ...grpc.DialOption) *grpc.ClientConn {
		conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(creds)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		return conn
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	anonymous := dial()
	if _, err := pb.NewMemsvcServiceClient(anonymous).Stats(ctx, &pb.StatsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a call without a key: %v", err)
	}

	c := pb.NewMemsvcServiceClient(dial(grpc.WithPerRPCCredentials(bearer("k1"))))
	stored, err := c.EncodeStore(ctx, &pb.EncodeStoreRequest{
		Content: &pb.MemoryContent{Blocks: []*pb.ContentBlock{{Modality: pb.Modality_MODALITY_TEXT, Format: "text/plain", Data: []byte("the CI cache lives in bucket ci-cache-eu")}}},
		Store:   pb.StoreType_STORE_TYPE_SEMANTIC,
	})
	if err != nil || stored.GetStore() != pb.StoreType_STORE_TYPE_SEMANTIC {
		t.Fatalf("store: %v %v", stored, err)
	}
	recalled, err := c.RecallQuery(ctx, &pb.RecallQueryRequest{Cue: &pb.RecallCue{Text: proto.String("where is the CI cache")}})
	if err != nil || len(recalled.GetMemories()) != 1 || recalled.GetMemories()[0].GetRecord().GetId() != stored.GetRecordId() {
		t.Fatalf("recall: %v %v", recalled, err)
	}
	stats, err := c.Stats(ctx, &pb.StatsRequest{})
	if err != nil || stats.GetTotalRecords() != 1 || stats.GetRecordsByStore()["semantic"] != 1 {
		t.Fatalf("stats: %v %v", stats, err)
	}

	// Reflection and health need no key.
	services, err := testkit.ListServices(ctx, anonymous)
	if err != nil {
		t.Fatalf("reflection: %v", err)
	}
	if !slices.Contains(services, "memsvc.v1.MemsvcService") {
		t.Fatalf("reflection lists %v", services)
	}
	h, err := healthpb.NewHealthClient(anonymous).Check(ctx, &healthpb.HealthCheckRequest{Service: "memsvc.v1.MemsvcService"})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v %v", h, err)
	}

	if err := srv.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.log())
	}
}

// grpcAddr waits for the gRPC line of the banner. startCmd has seen the
// HTTP line; the gRPC one comes with it, so this polls the captured log
// for a short while.
func grpcAddr(t *testing.T, srv *server) string {
	t.Helper()
	var addr string
	waitFor(t, srv, 30*time.Second, "the gRPC listening line in the banner", func() bool {
		if m := grpcListenRE.FindStringSubmatch(srv.log()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return addr
}
