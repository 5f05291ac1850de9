package grpcapi

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"memsvc.dev/memsvc/pkg/client"
	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/httpapi"
	"memsvc.dev/memsvc/pkg/memory"
)

// transports serves one engine over gRPC and HTTP on loopback TCP
// listeners and returns a client of each.
func transports(b *testing.B) (pb.MemsvcServiceClient, memory.Service) {
	b.Helper()
	eng := newEngine(b)
	gs, err := NewServer(eng, Options{})
	if err != nil {
		b.Fatal(err)
	}
	conn, err := grpc.NewClient(serveTCP(b, gs), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}

	api, err := httpapi.New(eng, httpapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	hln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(hln) }()
	hc, err := client.New("http://"+hln.Addr().String(), client.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = conn.Close()
		_ = hs.Close()
	})
	return pb.NewMemsvcServiceClient(conn), hc
}

// measure runs op b.N times and reports the median and 99th percentile
// latency next to the mean.
func measure(b *testing.B, op func(i int) error) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	}
}

// BenchmarkTransport compares gRPC and HTTP latency for store and recall
// over loopback against the same in-memory engine, so the difference is
// the transport: framing, encoding and the client.
func BenchmarkTransport(b *testing.B) {
	text := "the deploy pipeline caches Go modules in the ci-cache-eu bucket for a week"
	b.Run("store/grpc", func(b *testing.B) {
		g, _ := transports(b)
		measure(b, func(i int) error {
			_, err := g.EncodeStore(b.Context(), &pb.EncodeStoreRequest{Content: textContent(fmt.Sprint(text, " #", i))})
			return err
		})
	})
	b.Run("store/http", func(b *testing.B) {
		_, h := transports(b)
		measure(b, func(i int) error {
			_, err := h.EncodeStore(b.Context(), &memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprint(text, " #", i))})
			return err
		})
	})
	seed := func(b *testing.B, g pb.MemsvcServiceClient) {
		for i := range 10 {
			var recs []*pb.EncodeStoreRequest
			for j := range 100 {
				recs = append(recs, &pb.EncodeStoreRequest{Content: textContent(fmt.Sprintf("%s, note %d of batch %d", text, j, i))})
			}
			if _, err := g.EncodeBatch(b.Context(), &pb.EncodeBatchRequest{Records: recs}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("recall/grpc", func(b *testing.B) {
		g, _ := transports(b)
		seed(b, g)
		measure(b, func(int) error {
			resp, err := g.RecallQuery(b.Context(), &pb.RecallQueryRequest{Cue: &pb.RecallCue{Text: proto.String("where are Go modules cached")}, Reconsolidate: proto.Bool(false)})
			if err == nil && len(resp.GetMemories()) != 10 {
				err = fmt.Errorf("%d memories", len(resp.GetMemories()))
			}
			return err
		})
	})
	b.Run("recall/http", func(b *testing.B) {
		g, h := transports(b)
		seed(b, g)
		measure(b, func(int) error {
			q := "where are Go modules cached"
			req := memory.DefaultRecallQueryRequest()
			req.Cue.Text = &q
			req.Reconsolidate = false
			resp, err := h.RecallQuery(b.Context(), &req)
			if err == nil && len(resp.Memories) != 10 {
				err = fmt.Errorf("%d memories", len(resp.Memories))
			}
			return err
		})
	})
}
