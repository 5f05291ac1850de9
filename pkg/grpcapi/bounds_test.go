package grpcapi

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// TestRequestBounds: the list limits, the decay tick cap and the answer
// limit hold over gRPC as over HTTP, and error messages quote at most a
// prefix of a large input.
func TestRequestBounds(t *testing.T) {
	eng := newEngine(t)
	text := strings.Repeat("y", 32<<10)
	for i := range 40 {
		req := memory.DefaultEncodeStoreRawRequest()
		req.SessionID = "s"
		req.Content = memory.TextContent(fmt.Sprintf("entry %d %s", i, text))
		if _, err := eng.EncodeStoreRaw(context.Background(), &req); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixture(t, eng, Options{MaxResponseBytes: 1 << 20})
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		call   func() error
		code   codes.Code
		reason memory.Code
		msg    string
	}{
		{"raw limit", func() error {
			_, err := f.client.RecallRawQuery(ctx, &pb.RecallRawQueryRequest{Limit: proto.Uint32(4294967295)})
			return err
		}, codes.InvalidArgument, memory.CodeValidation, "limit: 4294967295 exceeds the maximum of 1000"},
		{"timeline limit", func() error {
			_, err := f.client.RecallTimeline(ctx, &pb.RecallTimelineRequest{Range: &pb.TemporalRange{}, Limit: proto.Uint32(1001)})
			return err
		}, codes.InvalidArgument, memory.CodeValidation, "limit: 1001 exceeds the maximum of 1000"},
		{"long decay tick", func() error {
			_, err := f.client.DecayTick(ctx, &pb.DecayTickRequest{TickDurationSeconds: proto.Uint32(4294967295)})
			return err
		}, codes.InvalidArgument, memory.CodeValidation, "allow_long"},
		{"answer over the limit", func() error {
			_, err := f.client.RecallRawQuery(ctx, &pb.RecallRawQueryRequest{Limit: proto.Uint32(1000)})
			return err
		}, codes.InvalidArgument, memory.CodeContentTooLarge, memory.AnswerTooLarge},
		{"large record id", func() error {
			_, err := f.client.IntrospectRecord(ctx, &pb.IntrospectRecordRequest{RecordId: strings.Repeat("z", 100_000)})
			return err
		}, codes.InvalidArgument, memory.CodeValidation, "bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			st := status.Convert(err)
			if st.Code() != tc.code || !strings.Contains(st.Message(), tc.msg) {
				t.Fatalf("got %v, want %v containing %q", err, tc.code, tc.msg)
			}
			if info := errorInfo(err); info == nil || info.Reason != string(tc.reason) {
				t.Errorf("ErrorInfo %v, want reason %s", info, tc.reason)
			}
			if len(st.Message()) > 1024 {
				t.Errorf("message of %d bytes", len(st.Message()))
			}
		})
	}
	if _, err := f.client.DecayTick(ctx, &pb.DecayTickRequest{TickDurationSeconds: proto.Uint32(4294967295), AllowLong: true}); err != nil {
		t.Errorf("an allowed long tick: %v", err)
	}
	resp, err := f.client.RecallRawQuery(ctx, &pb.RecallRawQueryRequest{Limit: proto.Uint32(5)})
	if err != nil || len(resp.GetRecords()) != 5 {
		t.Errorf("a page of 5: %d records, %v", len(resp.GetRecords()), err)
	}
}
