package grpcapi

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
)

// TestPageCursors: over gRPC, the before cursor of RecallQuery and
// RecallRawQuery and the after cursor of RecallTimeline page through
// records that all share one creation time (the test engine's clock
// stands still), each record exactly once.
func TestPageCursors(t *testing.T) {
	const n, page = 30, 7
	ctx := t.Context()
	c := newFixture(t, newEngine(t), Options{}).client
	recs := make([]*pb.EncodeStoreRequest, n)
	raws := make([]*pb.EncodeStoreRawRequest, n)
	for i := range n {
		recs[i] = &pb.EncodeStoreRequest{Content: textContent(fmt.Sprintf("entry %d", i))}
		raws[i] = &pb.EncodeStoreRawRequest{SessionId: "s1", Content: textContent(fmt.Sprintf("raw %d", i)), SecrecyLevel: pb.SecrecyLevel_SECRECY_LEVEL_PUBLIC}
	}
	if _, err := c.EncodeBatch(ctx, &pb.EncodeBatchRequest{Records: recs}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EncodeBatchStoreRaw(ctx, &pb.EncodeBatchStoreRawRequest{Records: raws}); err != nil {
		t.Fatal(err)
	}

	// item is a record's place in the order: what a cursor is made of.
	type item struct {
		id string
		at *timestamppb.Timestamp
	}
	walk := func(t *testing.T, fetch func(ctx context.Context, cursor *pb.PageCursor) ([]item, error)) {
		t.Helper()
		seen := map[string]bool{}
		var cursor *pb.PageCursor
		var at *timestamppb.Timestamp
		for range n/page + 2 {
			got, err := fetch(ctx, cursor)
			if err != nil {
				t.Fatalf("cursor %v: %v", cursor, err)
			}
			for _, it := range got {
				if seen[it.id] {
					t.Fatalf("%s again after cursor %v", it.id, cursor)
				}
				seen[it.id] = true
				if at != nil && !proto.Equal(at, it.at) {
					t.Fatalf("created_at %v and %v: the records should share one instant", at, it.at)
				}
				at = it.at
			}
			if len(got) < page {
				if len(seen) != n {
					t.Fatalf("the pages held %d records, want %d", len(seen), n)
				}
				return
			}
			last := got[len(got)-1]
			cursor = &pb.PageCursor{CreatedAt: last.at, Id: last.id}
		}
		t.Fatalf("still paging after %d pages", n/page+2)
	}
	limit := uint32(page)
	no := false

	t.Run("query", func(t *testing.T) {
		walk(t, func(ctx context.Context, cursor *pb.PageCursor) ([]item, error) {
			r, err := c.RecallQuery(ctx, &pb.RecallQueryRequest{Cue: &pb.RecallCue{}, Limit: &limit, Reconsolidate: &no, Before: cursor})
			var items []item
			for _, m := range r.GetMemories() {
				items = append(items, item{m.GetRecord().GetId(), m.GetRecord().GetCreatedAt()})
			}
			return items, err
		})
	})
	t.Run("raw", func(t *testing.T) {
		walk(t, func(ctx context.Context, cursor *pb.PageCursor) ([]item, error) {
			r, err := c.RecallRawQuery(ctx, &pb.RecallRawQueryRequest{Limit: &limit, Before: cursor})
			var items []item
			for _, x := range r.GetRecords() {
				items = append(items, item{x.GetId(), x.GetCreatedAt()})
			}
			return items, err
		})
	})
	t.Run("timeline", func(t *testing.T) {
		day := &pb.TemporalRange{Start: timestamppb.New(t0.Add(-12 * 3600e9)), End: timestamppb.New(t0.Add(12 * 3600e9))}
		walk(t, func(ctx context.Context, cursor *pb.PageCursor) ([]item, error) {
			r, err := c.RecallTimeline(ctx, &pb.RecallTimelineRequest{Range: day, Limit: &limit, After: cursor})
			var items []item
			for _, b := range r.GetBuckets() {
				for _, m := range b.GetMemories() {
					items = append(items, item{m.GetRecord().GetId(), m.GetRecord().GetCreatedAt()})
				}
			}
			return items, err
		})
	})
	t.Run("cursor without a time", func(t *testing.T) {
		_, err := c.RecallRawQuery(ctx, &pb.RecallRawQueryRequest{Before: &pb.PageCursor{Id: "01890a5d-ac96-774b-bcce-b302099a8057"}})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "before.created_at") {
			t.Errorf("%v, want InvalidArgument naming before.created_at", err)
		}
	})
	t.Run("cursor with a bad id", func(t *testing.T) {
		_, err := c.RecallTimeline(ctx, &pb.RecallTimelineRequest{Range: &pb.TemporalRange{Start: timestamppb.New(t0), End: timestamppb.New(t0)},
			After: &pb.PageCursor{CreatedAt: timestamppb.New(t0), Id: "nope"}})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "after.id") {
			t.Errorf("%v, want InvalidArgument naming after.id", err)
		}
	})
}
