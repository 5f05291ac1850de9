package grpcapi

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"memsvc.dev/memsvc/pkg/memory"
)

// codec is one message type of the fuzz target: decode to the model and
// encode back.
type codec struct {
	name string
	new  func() proto.Message
	dec  func(*decoder, proto.Message) any
	enc  func(*encoder, any) proto.Message
}

func codecOf[P proto.Message, M any](name string, toModel func(*decoder, string, P) *M, toProto func(*encoder, *M) P) codec {
	return codec{
		name: name,
		new:  func() proto.Message { var p P; return p.ProtoReflect().New().Interface() },
		dec:  func(d *decoder, p proto.Message) any { return toModel(d, "", p.(P)) },
		enc:  func(e *encoder, m any) proto.Message { return toProto(e, m.(*M)) },
	}
}

func codecs() []codec {
	return []codec{
		codecOf("EncodeStoreRequest", toModelEncodeStoreRequest, toProtoEncodeStoreRequest),
		codecOf("EncodeBatchRequest", toModelEncodeBatchRequest, toProtoEncodeBatchRequest),
		codecOf("EncodeUpdateRequest", toModelEncodeUpdateRequest, toProtoEncodeUpdateRequest),
		codecOf("EncodeStoreRawRequest", toModelEncodeStoreRawRequest, toProtoEncodeStoreRawRequest),
		codecOf("EncodeBatchStoreRawRequest", toModelEncodeBatchStoreRawRequest, toProtoEncodeBatchStoreRawRequest),
		codecOf("RecallQueryRequest", toModelRecallQueryRequest, toProtoRecallQueryRequest),
		codecOf("RecallRawQueryRequest", toModelRecallRawQueryRequest, toProtoRecallRawQueryRequest),
		codecOf("RecallAssociateRequest", toModelRecallAssociateRequest, toProtoRecallAssociateRequest),
		codecOf("RecallTimelineRequest", toModelRecallTimelineRequest, toProtoRecallTimelineRequest),
		codecOf("RecallGraphRequest", toModelRecallGraphRequest, toProtoRecallGraphRequest),
		codecOf("ConsolidateRequest", toModelConsolidateRequest, toProtoConsolidateRequest),
		codecOf("DreamTickRequest", toModelDreamTickRequest, toProtoDreamTickRequest),
		codecOf("DecayTickRequest", toModelDecayTickRequest, toProtoDecayTickRequest),
		codecOf("SetModeRequest", toModelSetModeRequest, toProtoSetModeRequest),
		codecOf("ForgetRequest", toModelForgetRequest, toProtoForgetRequest),
		codecOf("ExportRequest", toModelExportRequest, toProtoExportRequest),
		codecOf("ImportOptions", toModelImportOptions, toProtoImportOptions),
		codecOf("IntrospectRecordRequest", toModelIntrospectRecordRequest, toProtoIntrospectRecordRequest),
		codecOf("DecayForecastRequest", toModelDecayForecastRequest, toProtoDecayForecastRequest),
		codecOf("RecallQueryResponse", toModelRecallQueryResponse, toProtoRecallQueryResponse),
		codecOf("RecallRawQueryResponse", toModelRecallRawQueryResponse, toProtoRecallRawQueryResponse),
		codecOf("RecallGraphResponse", toModelRecallGraphResponse, toProtoRecallGraphResponse),
		codecOf("Stats", toModelStats, toProtoStats),
	}
}

// FuzzDecode feeds arbitrary bytes, as any of the messages, to the
// conversion to the model. It must never panic, and whatever it accepts
// must convert back and forth to the same model value.
func FuzzDecode(f *testing.F) {
	cs := codecs()
	for i, c := range cs {
		// Seed with a fully populated message of each kind.
		var d decoder
		var e encoder
		m := c.dec(&d, c.new())
		full := c.enc(&e, fillModel(m))
		b, err := proto.Marshal(full)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
		f.Add(uint8(i), []byte{})
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		if len(data) > 64<<10 {
			return // the seeds are a few KiB; larger inputs only slow the fuzzer
		}
		c := cs[int(kind)%len(cs)]
		msg := c.new()
		if err := proto.Unmarshal(data, msg); err != nil {
			return
		}
		var d decoder
		m := c.dec(&d, msg)
		if d.err != nil {
			if memory.CodeOf(d.err) != memory.CodeValidation {
				t.Fatalf("%s: decode error %v is not a validation error", c.name, d.err)
			}
			return
		}
		var e encoder
		again := c.enc(&e, m)
		if e.err != nil {
			t.Fatalf("%s: the decoded value does not encode: %v", c.name, e.err)
		}
		var d2 decoder
		m2 := c.dec(&d2, again)
		if d2.err != nil {
			t.Fatalf("%s: the re-encoded message does not decode: %v", c.name, d2.err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("%s: decode is not stable:\n%+v\n%+v", c.name, m, m2)
		}
	})
}

// fillModel returns a fully populated value of the type p points to.
func fillModel(p any) any {
	v := reflect.New(reflect.TypeOf(p).Elem())
	(&filler{}).fill(v.Elem())
	if r, ok := v.Interface().(*memory.ImportRequest); ok {
		r.ArchiveData = nil
	}
	return v.Interface()
}
