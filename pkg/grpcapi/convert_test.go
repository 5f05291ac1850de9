package grpcapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// filler sets every field of a model value to a valid, non-zero value,
// recursively, so that a round trip through the protobuf messages shows
// any field a conversion forgets. Values vary with a counter so that two
// fields never hold the same value by accident.
type filler struct{ n int }

var (
	typeTime    = reflect.TypeFor[time.Time]()
	typeID      = reflect.TypeFor[memory.ID]()
	typeJSON    = reflect.TypeFor[memory.JSON]()
	typeRaw     = reflect.TypeFor[json.RawMessage]()
	typeBytes   = reflect.TypeFor[memory.Bytes]()
	typeValider = reflect.TypeFor[interface{ Valid() bool }]()
)

func (f *filler) fill(v reflect.Value) {
	f.n++
	n := f.n
	t := v.Type()
	switch {
	case t == typeTime:
		v.Set(reflect.ValueOf(time.Date(2026, 1, 1+n%27, n%24, n%60, n%60, n*1000+7, time.UTC)))
		return
	case t == typeID:
		var id memory.ID
		for i := range id {
			id[i] = byte(n + i*7)
		}
		v.Set(reflect.ValueOf(id))
		return
	case t == typeJSON:
		v.SetBytes(fmt.Appendf(nil, `{"a%d":[1,"x<y>&",true,null,{"n":-2.5}],"b":{}}`, n))
		return
	case t == typeRaw:
		v.SetBytes(fmt.Appendf(nil, `["v%d",3,{"k":false}]`, n))
		return
	case t == typeBytes:
		v.SetBytes([]byte{byte(n), 0, 255, byte(n >> 8)})
		return
	case t.Kind() == reflect.Uint8 && t.Implements(typeValider):
		var valid []uint64
		for i := uint64(1); i < 256; i++ {
			x := reflect.New(t).Elem()
			x.SetUint(i)
			if x.Interface().(interface{ Valid() bool }).Valid() {
				valid = append(valid, i)
			}
		}
		v.SetUint(valid[n%len(valid)])
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if sf := t.Field(i); sf.IsExported() && sf.Tag.Get("json") != "-" {
				f.fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		f.fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(t, 2, 2))
		for i := range 2 {
			f.fill(v.Index(i))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		for range 2 {
			k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			f.fill(k)
			f.fill(e)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d ünïcode", n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.25)
	default:
		panic("filler: unsupported kind " + v.Kind().String() + " of " + t.String())
	}
}

// populated reports the first field of m, recursively, that is unset or
// zero. Well-known types are leaves.
func populated(m protoreflect.Message, path string) string {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		p := join(path, string(fd.Name()))
		if !m.Has(fd) {
			return p
		}
		v := m.Get(fd)
		switch {
		case fd.IsList() && fd.Message() != nil:
			for j := range v.List().Len() {
				if bad := populated(v.List().Get(j).Message(), index(p, j)); bad != "" {
					return bad
				}
			}
		case fd.IsMap():
		case fd.Message() != nil && !strings.HasPrefix(string(fd.Message().FullName()), "google.protobuf."):
			if bad := populated(v.Message(), p); bad != "" {
				return bad
			}
		}
	}
	return ""
}

// roundTrip fills a model value, converts it to a message, sends that
// through the wire encoding, converts it back and compares. It also checks
// that the message has every field set, so a proto field no conversion
// writes fails as well as a model field no conversion reads.
func roundTrip[M any, P proto.Message](t *testing.T, toProto func(*encoder, *M) P, toModel func(*decoder, string, P) *M, adjust func(*M)) {
	t.Helper()
	var m M
	(&filler{}).fill(reflect.ValueOf(&m).Elem())
	if adjust != nil {
		adjust(&m)
	}
	var e encoder
	msg := toProto(&e, &m)
	if e.err != nil {
		t.Fatalf("to proto: %v", e.err)
	}
	if bad := populated(msg.ProtoReflect(), ""); bad != "" {
		t.Errorf("%s: field %s is not written by the conversion", msg.ProtoReflect().Descriptor().FullName(), bad)
	}
	wire, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	back := msg.ProtoReflect().New().Interface().(P)
	if err := proto.Unmarshal(wire, back); err != nil {
		t.Fatal(err)
	}
	var d decoder
	got := toModel(&d, "", back)
	if d.err != nil {
		t.Fatalf("to model: %v", d.err)
	}
	if !reflect.DeepEqual(*got, m) {
		gj, _ := json.Marshal(got)
		mj, _ := json.Marshal(m)
		t.Errorf("round trip changed the value:\n got %s\nwant %s", gj, mj)
	}
}

func TestRoundTrip(t *testing.T) {
	noArchive := func(r *memory.ImportRequest) { r.ArchiveData = nil }
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"EncodeStoreRequest", func(t *testing.T) { roundTrip(t, toProtoEncodeStoreRequest, toModelEncodeStoreRequest, nil) }},
		{"EncodeStoreResponse", func(t *testing.T) { roundTrip(t, toProtoEncodeStoreResponse, toModelEncodeStoreResponse, nil) }},
		{"EncodeBatchRequest", func(t *testing.T) { roundTrip(t, toProtoEncodeBatchRequest, toModelEncodeBatchRequest, nil) }},
		{"EncodeBatchResponse", func(t *testing.T) { roundTrip(t, toProtoEncodeBatchResponse, toModelEncodeBatchResponse, nil) }},
		{"EncodeUpdateRequest", func(t *testing.T) { roundTrip(t, toProtoEncodeUpdateRequest, toModelEncodeUpdateRequest, nil) }},
		{"EncodeStoreRawRequest", func(t *testing.T) { roundTrip(t, toProtoEncodeStoreRawRequest, toModelEncodeStoreRawRequest, nil) }},
		{"EncodeStoreRawResponse", func(t *testing.T) { roundTrip(t, toProtoEncodeStoreRawResponse, toModelEncodeStoreRawResponse, nil) }},
		{"EncodeBatchStoreRawRequest", func(t *testing.T) {
			roundTrip(t, toProtoEncodeBatchStoreRawRequest, toModelEncodeBatchStoreRawRequest, nil)
		}},
		{"EncodeBatchStoreRawResponse", func(t *testing.T) {
			roundTrip(t, toProtoEncodeBatchStoreRawResponse, toModelEncodeBatchStoreRawResponse, nil)
		}},
		{"RecallQueryRequest", func(t *testing.T) { roundTrip(t, toProtoRecallQueryRequest, toModelRecallQueryRequest, nil) }},
		{"RecallQueryResponse", func(t *testing.T) { roundTrip(t, toProtoRecallQueryResponse, toModelRecallQueryResponse, nil) }},
		{"RecallRawQueryRequest", func(t *testing.T) {
			roundTrip(t, toProtoRecallRawQueryRequest, toModelRecallRawQueryRequest, nil)
		}},
		{"RecallRawQueryResponse", func(t *testing.T) {
			roundTrip(t, toProtoRecallRawQueryResponse, toModelRecallRawQueryResponse, nil)
		}},
		{"RecallAssociateRequest", func(t *testing.T) {
			roundTrip(t, toProtoRecallAssociateRequest, toModelRecallAssociateRequest, nil)
		}},
		{"RecallAssociateResponse", func(t *testing.T) {
			roundTrip(t, toProtoRecallAssociateResponse, toModelRecallAssociateResponse, nil)
		}},
		{"RecallTimelineRequest", func(t *testing.T) { roundTrip(t, toProtoRecallTimelineRequest, toModelRecallTimelineRequest, nil) }},
		{"RecallTimelineResponse", func(t *testing.T) {
			roundTrip(t, toProtoRecallTimelineResponse, toModelRecallTimelineResponse, nil)
		}},
		{"RecallGraphRequest", func(t *testing.T) { roundTrip(t, toProtoRecallGraphRequest, toModelRecallGraphRequest, nil) }},
		{"RecallGraphResponse", func(t *testing.T) { roundTrip(t, toProtoRecallGraphResponse, toModelRecallGraphResponse, nil) }},
		{"ConsolidateRequest", func(t *testing.T) { roundTrip(t, toProtoConsolidateRequest, toModelConsolidateRequest, nil) }},
		{"ConsolidateResponse", func(t *testing.T) { roundTrip(t, toProtoConsolidateResponse, toModelConsolidateResponse, nil) }},
		{"DreamTickRequest", func(t *testing.T) { roundTrip(t, toProtoDreamTickRequest, toModelDreamTickRequest, nil) }},
		{"DreamTickResponse", func(t *testing.T) { roundTrip(t, toProtoDreamTickResponse, toModelDreamTickResponse, nil) }},
		{"DecayTickRequest", func(t *testing.T) { roundTrip(t, toProtoDecayTickRequest, toModelDecayTickRequest, nil) }},
		{"DecayTickResponse", func(t *testing.T) { roundTrip(t, toProtoDecayTickResponse, toModelDecayTickResponse, nil) }},
		{"SetModeRequest", func(t *testing.T) { roundTrip(t, toProtoSetModeRequest, toModelSetModeRequest, nil) }},
		{"ForgetRequest", func(t *testing.T) { roundTrip(t, toProtoForgetRequest, toModelForgetRequest, nil) }},
		{"ForgetResponse", func(t *testing.T) { roundTrip(t, toProtoForgetResponse, toModelForgetResponse, nil) }},
		{"ExportRequest", func(t *testing.T) { roundTrip(t, toProtoExportRequest, toModelExportRequest, nil) }},
		{"ExportSummary", func(t *testing.T) { roundTrip(t, toProtoExportSummary, toModelExportSummary, nil) }},
		{"ImportOptions", func(t *testing.T) { roundTrip(t, toProtoImportOptions, toModelImportOptions, noArchive) }},
		{"ImportResponse", func(t *testing.T) { roundTrip(t, toProtoImportResponse, toModelImportResponse, nil) }},
		{"Stats", func(t *testing.T) { roundTrip(t, toProtoStats, toModelStats, nil) }},
		{"IntrospectRecordRequest", func(t *testing.T) {
			roundTrip(t, toProtoIntrospectRecordRequest, toModelIntrospectRecordRequest, nil)
		}},
		{"MemoryRecord", func(t *testing.T) { roundTrip(t, toProtoRecord, toModelRecord, nil) }},
		{"DecayForecastRequest", func(t *testing.T) { roundTrip(t, toProtoDecayForecastRequest, toModelDecayForecastRequest, nil) }},
		{"DecayForecastResponse", func(t *testing.T) { roundTrip(t, toProtoDecayForecastResponse, toModelDecayForecastResponse, nil) }},
		{"EvolutionMetrics", func(t *testing.T) { roundTrip(t, toProtoEvolutionResponse, toModelEvolutionResponse, nil) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

// TestRoundTripAbsence: the values that mean "absent" survive a round trip
// as absent, and present-but-empty lists stay present.
func TestRoundTripAbsence(t *testing.T) {
	var e encoder
	var d decoder
	rq := memory.DefaultRecallQueryRequest()
	if got := toModelRecallQueryRequest(&d, "", toProtoRecallQueryRequest(&e, &rq)); !reflect.DeepEqual(*got, rq) {
		t.Errorf("default recall request: got %+v, want %+v", *got, rq)
	}
	rq.Stores = []memory.StoreType{}
	if got := toModelRecallQueryRequest(&d, "", toProtoRecallQueryRequest(&e, &rq)); got.Stores == nil || len(got.Stores) != 0 {
		t.Errorf("empty store list came back as %#v", got.Stores)
	}
	raw := memory.DefaultRecallRawQueryRequest()
	raw.SecrecyLevels = []memory.SecrecyLevel{}
	if got := toModelRecallRawQueryRequest(&d, "", toProtoRecallRawQueryRequest(&e, &raw)); got.SecrecyLevels == nil {
		t.Error("empty secrecy list came back absent")
	}
	up := memory.EncodeUpdateRequest{RecordID: memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057"), Metadata: memory.JSON("{}")}
	got := toModelEncodeUpdateRequest(&d, "", toProtoEncodeUpdateRequest(&e, &up))
	if string(got.Metadata) != "{}" || got.Content != nil || got.Emotion != nil || got.Meta != nil {
		t.Errorf("update with only empty metadata came back as %+v", got)
	}
	if d.err != nil || e.err != nil {
		t.Fatal(d.err, e.err)
	}
}

// TestDecodeDefaults: an empty message decodes to the model's defaults,
// exactly as an empty JSON object does.
func TestDecodeDefaults(t *testing.T) {
	fromJSON := func(v any) any {
		if err := json.Unmarshal([]byte("{}"), v); err != nil {
			t.Fatal(err)
		}
		return reflect.ValueOf(v).Elem().Interface()
	}
	var d decoder
	tests := []struct {
		name      string
		got, want any
	}{
		{"recall query", *toModelRecallQueryRequest(&d, "", &pb.RecallQueryRequest{}), fromJSON(&memory.RecallQueryRequest{})},
		{"recall raw", *toModelRecallRawQueryRequest(&d, "", &pb.RecallRawQueryRequest{}), fromJSON(&memory.RecallRawQueryRequest{})},
		{"associate", *toModelRecallAssociateRequest(&d, "", &pb.RecallAssociateRequest{RecordId: "01890a5d-ac96-774b-bcce-b302099a8057"}),
			memory.RecallAssociateRequest{RecordID: memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057"), Depth: 2, MinWeight: 0.1, Limit: 10}},
		{"timeline", *toModelRecallTimelineRequest(&d, "", &pb.RecallTimelineRequest{}), fromJSON(&memory.RecallTimelineRequest{})},
		{"graph", *toModelRecallGraphRequest(&d, "", &pb.RecallGraphRequest{}), fromJSON(&memory.RecallGraphRequest{})},
		{"consolidate", *toModelConsolidateRequest(&d, "", &pb.ConsolidateRequest{}), fromJSON(&memory.ConsolidateRequest{})},
		{"dream", *toModelDreamTickRequest(&d, "", &pb.DreamTickRequest{}), fromJSON(&memory.DreamTickRequest{})},
		{"decay", *toModelDecayTickRequest(&d, "", &pb.DecayTickRequest{}), fromJSON(&memory.DecayTickRequest{})},
		{"export", *toModelExportRequest(&d, "", &pb.ExportRequest{}), fromJSON(&memory.ExportRequest{})},
		{"import", *toModelImportOptions(&d, "", &pb.ImportOptions{}), fromJSON(&memory.ImportRequest{})},
		{"store raw", *toModelEncodeStoreRawRequest(&d, "", &pb.EncodeStoreRawRequest{}), fromJSON(&memory.EncodeStoreRawRequest{})},
		{"meta", *toModelEncodeStoreRequest(&d, "", &pb.EncodeStoreRequest{Meta: &pb.MetaMemory{ContextEdges: []*pb.MetaEdge{{TargetId: "01890a5d-ac96-774b-bcce-b302099a8057"}}}}).Meta,
			func() any {
				var m memory.MetaMemory
				if err := json.Unmarshal([]byte(`{"context_edges":[{"target_id":"01890a5d-ac96-774b-bcce-b302099a8057"}]}`), &m); err != nil {
					t.Fatal(err)
				}
				return m
			}()},
		{"absent meta", d.meta("meta", nil), fromJSON(&memory.MetaMemory{})},
	}
	if d.err != nil {
		t.Fatal(d.err)
	}
	for _, tc := range tests {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
}

// TestDecodeErrors: what the conversion rejects, and that the message
// names the field by its JSON path.
func TestDecodeErrors(t *testing.T) {
	badTime := &timestamppb.Timestamp{Seconds: 1, Nanos: 2e9}
	tests := []struct {
		name string
		dec  func(d *decoder)
		want string
	}{
		{"bad uuid", func(d *decoder) { toModelIntrospectRecordRequest(d, "", &pb.IntrospectRecordRequest{RecordId: "nope"}) }, `record_id: invalid UUID "nope"`},
		{"missing uuid", func(d *decoder) { toModelEncodeUpdateRequest(d, "", &pb.EncodeUpdateRequest{}) }, "record_id: required"},
		{"unknown enum", func(d *decoder) { toModelEncodeStoreRequest(d, "", &pb.EncodeStoreRequest{Store: 42}) }, "store: unknown enum value 42"},
		{"negative enum", func(d *decoder) { toModelSetModeRequest(d, "", &pb.SetModeRequest{Mode: -1}) }, "mode: unknown enum value -1"},
		{"nested path", func(d *decoder) {
			toModelEncodeBatchRequest(d, "", &pb.EncodeBatchRequest{Records: []*pb.EncodeStoreRequest{{}, {Content: &pb.MemoryContent{Blocks: []*pb.ContentBlock{{Modality: 77}}}}}})
		}, "records[1].content.blocks[0].modality: unknown enum value 77"},
		{"bad timestamp", func(d *decoder) { toModelDecayForecastRequest(d, "", &pb.DecayForecastRequest{ForecastAt: badTime}) }, "forecast_at: invalid timestamp"},
		{"bad list element", func(d *decoder) {
			toModelRecallRawQueryRequest(d, "", &pb.RecallRawQueryRequest{SecrecyLevels: &pb.SecrecyLevelList{Values: []pb.SecrecyLevel{1, 9}}})
		}, "secrecy_levels[1]: unknown enum value 9"},
		{"bad header request id", func(d *decoder) { toModelStatsHeader(d) }, "header.request_id: invalid UUID"},
		{"bad evidence id", func(d *decoder) {
			toModelEncodeStoreRequest(d, "", &pb.EncodeStoreRequest{Meta: &pb.MetaMemory{Evidence: []*pb.MetaEvidenceRef{{RecordId: proto.String("x")}}}})
		}, "meta.evidence[0].record_id: invalid UUID"},
		{"stats key", func(d *decoder) {
			toModelStats(d, "", &pb.StatsResponse{RecordsByStore: map[string]uint32{"attic": 1}})
		}, `records_by_store: key "attic"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var d decoder
			tc.dec(&d)
			if d.err == nil {
				t.Fatal("no error")
			}
			if memory.CodeOf(d.err) != memory.CodeValidation || !strings.Contains(d.err.Error(), tc.want) {
				t.Fatalf("error %q (%s), want VALIDATION_ERROR containing %q", d.err, memory.CodeOf(d.err), tc.want)
			}
		})
	}
}

func toModelStatsHeader(d *decoder) {
	toModelDecayTickRequest(d, "", &pb.DecayTickRequest{Header: &pb.CmpHeader{RequestId: "r1"}})
}

// TestEnumsMatchModel: every protobuf enum has the model's values under
// the same numbers, spelled as the JSON model spells them.
func TestEnumsMatchModel(t *testing.T) {
	tests := []struct {
		desc  protoreflect.EnumDescriptor
		model reflect.Type
	}{
		{pb.StoreType(0).Descriptor(), reflect.TypeFor[memory.StoreType]()},
		{pb.Modality(0).Descriptor(), reflect.TypeFor[memory.Modality]()},
		{pb.AssociationType(0).Descriptor(), reflect.TypeFor[memory.AssociationType]()},
		{pb.RecallMode(0).Descriptor(), reflect.TypeFor[memory.RecallMode]()},
		{pb.RawSource(0).Descriptor(), reflect.TypeFor[memory.RawSource]()},
		{pb.RawSpeaker(0).Descriptor(), reflect.TypeFor[memory.RawSpeaker]()},
		{pb.Visibility(0).Descriptor(), reflect.TypeFor[memory.Visibility]()},
		{pb.SecrecyLevel(0).Descriptor(), reflect.TypeFor[memory.SecrecyLevel]()},
		{pb.MetaCaptureStatus(0).Descriptor(), reflect.TypeFor[memory.MetaCaptureStatus]()},
		{pb.MetaRelation(0).Descriptor(), reflect.TypeFor[memory.MetaRelation]()},
		{pb.TimeGranularity(0).Descriptor(), reflect.TypeFor[memory.TimeGranularity]()},
		{pb.ConsolidationStrategy(0).Descriptor(), reflect.TypeFor[memory.ConsolidationStrategy]()},
		{pb.ImportStrategy(0).Descriptor(), reflect.TypeFor[memory.ImportStrategy]()},
		{pb.ConflictResolution(0).Descriptor(), reflect.TypeFor[memory.ConflictResolution]()},
	}
	for _, tc := range tests {
		t.Run(string(tc.desc.Name()), func(t *testing.T) {
			values := tc.desc.Values()
			prefix := strings.TrimSuffix(string(values.ByNumber(0).Name()), "UNSPECIFIED")
			if prefix == string(values.ByNumber(0).Name()) {
				t.Fatalf("value 0 is %s, want *_UNSPECIFIED", values.ByNumber(0).Name())
			}
			for i := range values.Len() {
				v := values.Get(i)
				if v.Number() == 0 {
					continue
				}
				m := reflect.New(tc.model).Elem()
				m.SetUint(uint64(v.Number()))
				name := strings.ToLower(strings.TrimPrefix(string(v.Name()), prefix))
				if got := m.Interface().(fmt.Stringer).String(); got != name {
					t.Errorf("%s = %d is %q in the model, want %q", v.Name(), v.Number(), got, name)
				}
			}
			beyond := reflect.New(tc.model).Elem()
			beyond.SetUint(uint64(values.Len()))
			if beyond.Interface().(interface{ Valid() bool }).Valid() {
				t.Errorf("the model has a value %d the protobuf enum lacks", values.Len())
			}
		})
	}
}

// TestStructPreservesJSON: metadata keeps its values, including HTML
// characters and nesting, and ends up compact.
func TestStructPreservesJSON(t *testing.T) {
	in := memory.JSON(`{"b":{"c":[1,2.5,"<&>",null,true]},"a":"é"}`)
	var e encoder
	var d decoder
	got := d.object("metadata", e.object(in))
	if e.err != nil || d.err != nil {
		t.Fatal(e.err, d.err)
	}
	if want := `{"a":"é","b":{"c":[1,2.5,"<&>",null,true]}}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// JSON has no NaN; protobuf's JSON mapping writes it as a string.
	nan := &structpb.Struct{Fields: map[string]*structpb.Value{"x": structpb.NewNumberValue(nanValue())}}
	if got := d.object("metadata", nan); string(got) != `{"x":"NaN"}` || d.err != nil {
		t.Fatalf("NaN metadata became %s (%v)", got, d.err)
	}
	if e.object(memory.JSON("[1]")); e.err == nil {
		t.Fatal("an array as metadata converted without error")
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}
