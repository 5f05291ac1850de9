package grpcapi

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// rpcCase is one call of TestEveryRPC.
type rpcCase struct {
	rpc  string // method name in the service descriptor
	name string
	call func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error)
	want codes.Code
	// check looks at a successful answer.
	check func(t *testing.T, m proto.Message)
}

// exportAll runs an export and returns the archive and the summary.
func exportAll(ctx context.Context, c pb.MemsvcServiceClient, req *pb.ExportRequest) ([]byte, *pb.ExportSummary, error) {
	stream, err := c.Export(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	var data []byte
	var summary *pb.ExportSummary
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if summary == nil {
				return nil, nil, errors.New("the stream ended without a summary")
			}
			return data, summary, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if summary != nil {
			return nil, nil, errors.New("a message followed the summary")
		}
		switch p := msg.Part.(type) {
		case *pb.ExportResponse_Data:
			data = append(data, p.Data...)
		case *pb.ExportResponse_Summary:
			summary = p.Summary
		}
	}
}

// importAll sends msgs as an import stream.
func importAll(ctx context.Context, c pb.MemsvcServiceClient, msgs ...*pb.ImportRequest) (*pb.ImportResponse, error) {
	stream, err := c.Import(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			break // the server answered early; CloseAndRecv reports it
		}
	}
	return stream.CloseAndRecv()
}

// chunks splits an archive into import messages, options first.
func chunks(opts *pb.ImportOptions, data []byte, size int) []*pb.ImportRequest {
	msgs := []*pb.ImportRequest{{Options: opts}}
	for len(data) > 0 {
		k := min(size, len(data))
		msgs = append(msgs, &pb.ImportRequest{Data: data[:k]})
		data = data[k:]
	}
	return msgs
}

// TestEveryRPC calls every RPC of the service, in process, against a real
// engine, with good and bad input, and checks the status codes. A test at
// the end makes sure no RPC is left without both kinds of case.
func TestEveryRPC(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t, newEngine(t), Options{})
	c := f.client
	stored, err := c.EncodeStore(ctx, &pb.EncodeStoreRequest{Content: textContent("the CI cache lives in bucket ci-cache-eu"), Store: pb.StoreType_STORE_TYPE_SEMANTIC})
	if err != nil {
		t.Fatal(err)
	}
	id := stored.GetRecordId()
	other, err := c.EncodeStore(ctx, &pb.EncodeStoreRequest{
		Content:      textContent("deploys go through the staging cluster first"),
		Associations: []*pb.ManualAssociation{{TargetId: id, AssociationType: pb.AssociationType_ASSOCIATION_TYPE_CAUSAL, Weight: 0.8}},
	})
	if err != nil {
		t.Fatal(err)
	}
	const unknown = "01890a5d-ac96-774b-bcce-b302099a8057"
	archive, _, err := exportAll(ctx, c, &pb.ExportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	dayRange := &pb.TemporalRange{Start: timestamppb.New(t0.Add(-24 * 3600e9)), End: timestamppb.New(t0.Add(24 * 3600e9))}

	cases := []rpcCase{
		{"EncodeStore", "text", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeStore(ctx, &pb.EncodeStoreRequest{Content: textContent("hello"), Metadata: mustStruct(t, map[string]any{"k": "v"})})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.EncodeStoreResponse); r.GetStore() == pb.StoreType_STORE_TYPE_UNSPECIFIED || r.GetInitialFidelity() != 1 {
				t.Errorf("answer %v", r)
			}
		}},
		{"EncodeStore", "no content", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeStore(ctx, &pb.EncodeStoreRequest{})
		}, codes.InvalidArgument, nil},
		{"EncodeStore", "unknown store", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeStore(ctx, &pb.EncodeStoreRequest{Content: textContent("x"), Store: 42})
		}, codes.InvalidArgument, nil},
		{"EncodeStore", "content too large", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeStore(ctx, &pb.EncodeStoreRequest{Content: textContent(strings.Repeat("x", memory.MaxTextBlockBytes+1))})
		}, codes.InvalidArgument, nil},
		{"EncodeBatch", "two records", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeBatch(ctx, &pb.EncodeBatchRequest{Records: []*pb.EncodeStoreRequest{{Content: textContent("one")}, {Content: textContent("two")}}, InferAssociations: true})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.EncodeBatchResponse); len(r.GetResults()) != 2 {
				t.Errorf("answer %v", r)
			}
		}},
		{"EncodeBatch", "bad association target", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeBatch(ctx, &pb.EncodeBatchRequest{Records: []*pb.EncodeStoreRequest{{Content: textContent("x"), Associations: []*pb.ManualAssociation{{TargetId: "nope"}}}}})
		}, codes.InvalidArgument, nil},
		{"EncodeUpdate", "new content", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeUpdate(ctx, &pb.EncodeUpdateRequest{RecordId: other.GetRecordId(), Content: textContent("deploys go through staging, then production")})
		}, codes.OK, nil},
		{"EncodeUpdate", "unknown record", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeUpdate(ctx, &pb.EncodeUpdateRequest{RecordId: unknown, Content: textContent("x")})
		}, codes.NotFound, nil},
		{"EncodeUpdate", "no record id", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeUpdate(ctx, &pb.EncodeUpdateRequest{Content: textContent("x")})
		}, codes.InvalidArgument, nil},
		{"EncodeStoreRaw", "defaults", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeStoreRaw(ctx, &pb.EncodeStoreRawRequest{SessionId: "s1", Content: textContent("user asked about the cache")})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.EncodeStoreRawResponse); r.GetSecrecyLevel() != pb.SecrecyLevel_SECRECY_LEVEL_SENSITIVE || r.GetVisibility() != pb.Visibility_VISIBILITY_NORMAL {
				t.Errorf("defaults not applied: %v", r)
			}
		}},
		{"EncodeStoreRaw", "blank session", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeStoreRaw(ctx, &pb.EncodeStoreRawRequest{Content: textContent("x")})
		}, codes.InvalidArgument, nil},
		{"EncodeBatchStoreRaw", "two entries", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeBatchStoreRaw(ctx, &pb.EncodeBatchStoreRawRequest{Records: []*pb.EncodeStoreRawRequest{
				{SessionId: "s2", Content: textContent("a"), SecrecyLevel: pb.SecrecyLevel_SECRECY_LEVEL_PUBLIC},
				{SessionId: "s2", Content: textContent("b"), Speaker: pb.RawSpeaker_RAW_SPEAKER_ASSISTANT},
			}})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.EncodeBatchStoreRawResponse); len(r.GetResults()) != 2 {
				t.Errorf("answer %v", r)
			}
		}},
		{"EncodeBatchStoreRaw", "unknown source", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.EncodeBatchStoreRaw(ctx, &pb.EncodeBatchStoreRawRequest{Records: []*pb.EncodeStoreRawRequest{{SessionId: "s", Content: textContent("a"), Source: 9}}})
		}, codes.InvalidArgument, nil},
		{"RecallQuery", "text cue", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallQuery(ctx, &pb.RecallQueryRequest{Cue: &pb.RecallCue{Text: proto.String("where is the CI cache")}, RecallMode: pb.RecallMode_RECALL_MODE_PERFECT})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			r := m.(*pb.RecallQueryResponse)
			if len(r.GetMemories()) == 0 || r.GetMemories()[0].GetRecord().GetId() != id {
				t.Errorf("recall did not find %s first: %v", id, r)
			}
		}},
		{"RecallQuery", "limit 0", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallQuery(ctx, &pb.RecallQueryRequest{Cue: &pb.RecallCue{Text: proto.String("cache")}, Limit: proto.Uint32(0)})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.RecallQueryResponse); len(r.GetMemories()) != 0 {
				t.Errorf("limit 0 answered %d memories", len(r.GetMemories()))
			}
		}},
		{"RecallQuery", "min fidelity out of range", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallQuery(ctx, &pb.RecallQueryRequest{MinFidelity: proto.Float64(2)})
		}, codes.InvalidArgument, nil},
		{"RecallRawQuery", "session", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallRawQuery(ctx, &pb.RecallRawQueryRequest{SessionId: proto.String("s1")})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.RecallRawQueryResponse); len(r.GetRecords()) != 1 {
				t.Errorf("answer %v", r)
			}
		}},
		{"RecallRawQuery", "no secrecy level matches nothing", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallRawQuery(ctx, &pb.RecallRawQueryRequest{SessionId: proto.String("s1"), SecrecyLevels: &pb.SecrecyLevelList{}})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.RecallRawQueryResponse); len(r.GetRecords()) != 0 {
				t.Errorf("an empty secrecy list matched %v", r)
			}
		}},
		{"RecallRawQuery", "unknown secrecy level", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallRawQuery(ctx, &pb.RecallRawQueryRequest{SecrecyLevels: &pb.SecrecyLevelList{Values: []pb.SecrecyLevel{7}}})
		}, codes.InvalidArgument, nil},
		{"RecallAssociate", "from a record", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallAssociate(ctx, &pb.RecallAssociateRequest{RecordId: other.GetRecordId()})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.RecallAssociateResponse); len(r.GetMemories()) == 0 {
				t.Errorf("no associated memory: %v", r)
			}
		}},
		{"RecallAssociate", "unknown record", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallAssociate(ctx, &pb.RecallAssociateRequest{RecordId: unknown})
		}, codes.NotFound, nil},
		{"RecallTimeline", "a day", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallTimeline(ctx, &pb.RecallTimelineRequest{Range: dayRange, Granularity: pb.TimeGranularity_TIME_GRANULARITY_DAY})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.RecallTimelineResponse); len(r.GetBuckets()) == 0 {
				t.Errorf("no bucket: %v", r)
			}
		}},
		{"RecallTimeline", "reversed range", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallTimeline(ctx, &pb.RecallTimelineRequest{Range: &pb.TemporalRange{Start: dayRange.End, End: dayRange.Start}})
		}, codes.InvalidArgument, nil},
		{"RecallGraph", "around a record", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallGraph(ctx, &pb.RecallGraphRequest{CenterId: proto.String(other.GetRecordId()), IncludeMeta: true})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.RecallGraphResponse); len(r.GetNodes()) < 2 || len(r.GetEdges()) == 0 {
				t.Errorf("graph %v", r)
			}
		}},
		{"RecallGraph", "bad center", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.RecallGraph(ctx, &pb.RecallGraphRequest{CenterId: proto.String("not-a-uuid")})
		}, codes.InvalidArgument, nil},
		{"Consolidate", "dry run", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.Consolidate(ctx, &pb.ConsolidateRequest{DryRun: true})
		}, codes.OK, nil},
		{"Consolidate", "unknown strategy", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.Consolidate(ctx, &pb.ConsolidateRequest{Strategy: 12})
		}, codes.InvalidArgument, nil},
		{"DreamTick", "dry run", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.DreamTick(ctx, &pb.DreamTickRequest{DryRun: true})
		}, codes.OK, nil},
		{"DreamTick", "unspecified secrecy level", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.DreamTick(ctx, &pb.DreamTickRequest{SecrecyLevels: &pb.SecrecyLevelList{Values: []pb.SecrecyLevel{0}}})
		}, codes.InvalidArgument, nil},
		{"DecayTick", "an hour", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.DecayTick(ctx, &pb.DecayTickRequest{TickDurationSeconds: proto.Uint32(3600)})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.DecayTickResponse); r.GetRecordsUpdated() == 0 {
				t.Errorf("answer %v", r)
			}
		}},
		{"DecayTick", "bad header", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.DecayTick(ctx, &pb.DecayTickRequest{Header: &pb.CmpHeader{RequestId: "r-1"}})
		}, codes.InvalidArgument, nil},
		{"SetMode", "perfect for semantic", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.SetMode(ctx, &pb.SetModeRequest{Mode: pb.RecallMode_RECALL_MODE_PERFECT, Scope: []pb.StoreType{pb.StoreType_STORE_TYPE_SEMANTIC}})
		}, codes.OK, nil},
		{"SetMode", "no mode", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.SetMode(ctx, &pb.SetModeRequest{})
		}, codes.InvalidArgument, nil},
		{"Forget", "confirm absent", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.Forget(ctx, &pb.ForgetRequest{RecordIds: []string{id}})
		}, codes.InvalidArgument, nil},
		{"Forget", "confirm false", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.Forget(ctx, &pb.ForgetRequest{RecordIds: []string{id}, Confirm: proto.Bool(false)})
		}, codes.FailedPrecondition, nil},
		{"Forget", "bad id", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.Forget(ctx, &pb.ForgetRequest{RecordIds: []string{"x"}, Confirm: &yes})
		}, codes.InvalidArgument, nil},
		{"Forget", "confirmed, unknown id", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.Forget(ctx, &pb.ForgetRequest{RecordIds: []string{unknown}, Confirm: &yes})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.ForgetResponse); r.GetRecordsDeleted() != 0 {
				t.Errorf("answer %v", r)
			}
		}},
		{"Export", "everything", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			data, sum, err := exportAll(ctx, c, &pb.ExportRequest{IncludeRawJournal: true})
			if err == nil && uint64(len(data)) != sum.GetSizeBytes() {
				err = errors.New("size_bytes does not match the data")
			}
			return sum, err
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if s := m.(*pb.ExportSummary); s.GetRecordCount() < 2 || s.GetChecksum() == "" || s.GetArchiveId() == "" {
				t.Errorf("summary %v", s)
			}
		}},
		{"Export", "encrypt without a key", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			_, sum, err := exportAll(ctx, c, &pb.ExportRequest{Encrypt: true})
			return sum, err
		}, codes.InvalidArgument, nil},
		{"Import", "merge", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return importAll(ctx, c, chunks(&pb.ImportOptions{ArchiveId: "a1", ConflictResolution: pb.ConflictResolution_CONFLICT_RESOLUTION_KEEP_EXISTING}, archive, 1000)...)
		}, codes.OK, nil},
		{"Import", "no options", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return importAll(ctx, c, &pb.ImportRequest{Data: archive})
		}, codes.InvalidArgument, nil},
		{"Import", "not an archive", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return importAll(ctx, c, chunks(&pb.ImportOptions{ArchiveId: "a1"}, []byte("garbage\n"), 3)...)
		}, codes.AlreadyExists, nil},
		{"Stats", "counts", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.Stats(ctx, &pb.StatsRequest{})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.StatsResponse); r.GetTotalRecords() < 2 || r.GetRecordsByStore() == nil {
				t.Errorf("stats %v", r)
			}
		}},
		{"IntrospectRecord", "known", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.IntrospectRecord(ctx, &pb.IntrospectRecordRequest{RecordId: strings.ToUpper(id)})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			r := m.(*pb.IntrospectRecordResponse).GetRecord()
			if r.GetId() != id || string(r.GetContent().GetBlocks()[0].GetData()) != "the CI cache lives in bucket ci-cache-eu" || r.GetCreatedAt() == nil {
				t.Errorf("record %v", r)
			}
		}},
		{"IntrospectRecord", "unknown", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.IntrospectRecord(ctx, &pb.IntrospectRecordRequest{RecordId: unknown})
		}, codes.NotFound, nil},
		{"IntrospectRecord", "not a UUID", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.IntrospectRecord(ctx, &pb.IntrospectRecordRequest{RecordId: "not-a-uuid"})
		}, codes.InvalidArgument, nil},
		{"DecayForecast", "in a week", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.DecayForecast(ctx, &pb.DecayForecastRequest{RecordIds: []string{other.GetRecordId()}, ForecastAt: timestamppb.New(t0.Add(7 * 24 * 3600e9))})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.DecayForecastResponse); len(r.GetForecasts()) != 1 {
				t.Errorf("answer %v", r)
			}
		}},
		{"DecayForecast", "no time", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.DecayForecast(ctx, &pb.DecayForecastRequest{RecordIds: []string{id}})
		}, codes.InvalidArgument, nil},
		{"Evolution", "metrics", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.Evolution(ctx, &pb.EvolutionRequest{})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if m.(*pb.EvolutionResponse).GetMetrics() == nil {
				t.Error("no metrics")
			}
		}},
		{"Stats", "all namespaces", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.Stats(ctx, &pb.StatsRequest{AllNamespaces: true})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			if r := m.(*pb.StatsResponse); r.GetTotalRecords() < 2 {
				t.Errorf("stats %v", r)
			}
		}},
		{"Namespaces", "list", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.Namespaces(ctx, &pb.NamespacesRequest{})
		}, codes.OK, func(t *testing.T, m proto.Message) {
			list := m.(*pb.NamespacesResponse).GetNamespaces()
			if len(list) == 0 || list[0].GetName() != "default" || list[0].GetTotalRecords() < 2 || list[0].GetRecordsByStore()["episodic"] == 0 {
				t.Errorf("namespaces %v", list)
			}
		}},
		{"DropNamespace", "bad name", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.DropNamespace(ctx, &pb.DropNamespaceRequest{Name: "Not Valid", Confirm: true})
		}, codes.InvalidArgument, nil},
		{"DropNamespace", "unknown", func(ctx context.Context, c pb.MemsvcServiceClient) (proto.Message, error) {
			return c.DropNamespace(ctx, &pb.DropNamespaceRequest{Name: "never-made", Confirm: true})
		}, codes.NotFound, nil},
	}

	good, bad := map[string]bool{}, map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.rpc+"/"+tc.name, func(t *testing.T) {
			m, err := tc.call(ctx, c)
			if got := status.Code(err); got != tc.want {
				t.Fatalf("code %v (%v), want %v", got, err, tc.want)
			}
			if err != nil {
				if tc.want != codes.Internal && errorInfo(err) == nil {
					t.Errorf("status %v lacks the ErrorInfo detail", err)
				}
				return
			}
			if tc.check != nil {
				tc.check(t, m)
			}
		})
		if tc.want == codes.OK {
			good[tc.rpc] = true
		} else {
			bad[tc.rpc] = true
		}
	}
	sd := pb.MemsvcService_ServiceDesc
	var names []string
	for _, m := range sd.Methods {
		names = append(names, m.MethodName)
	}
	for _, s := range sd.Streams {
		names = append(names, s.StreamName)
	}
	if len(names) != 23 {
		t.Errorf("the service has %d RPCs, want the 21 CMP operations and the two of namespaces", len(names))
	}
	// Stats, Evolution and Namespaces take no input; their failures are
	// in TestErrorTable. This engine holds no namespace it could drop;
	// TestBoundKeys drops one through a service that does.
	noInput := map[string]bool{"Stats": true, "Evolution": true, "Namespaces": true}
	noGood := map[string]bool{"DropNamespace": true}
	for _, n := range names {
		if !good[n] && !noGood[n] || !bad[n] && !noInput[n] {
			t.Errorf("RPC %s lacks a good (%v) or a bad (%v) case", n, good[n], bad[n])
		}
	}
}

func errorInfo(err error) *errdetails.ErrorInfo {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

func retryInfo(err error) *errdetails.RetryInfo {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.RetryInfo); ok {
			return info
		}
	}
	return nil
}
