package memory

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestCloneRecordSharesNothing checks that CloneRecord copies everything a
// caller could change: every pointer and non-empty slice of the copy is
// its own, and the copy equals the original. the record below must set every
// pointer and slice field somewhere, so a field added to the record
// without its line in CloneRecord fails here.
func TestCloneRecordSharesNothing(t *testing.T) {
	orig := &MemoryRecord{
		ID: idA, Store: StoreSemantic, CreatedAt: t0, UpdatedAt: t1, LastAccessedAt: t2, AccessCount: 3,
		Content: MemoryContent{
			Blocks: []ContentBlock{
				{Modality: ModalityText, Format: "text/plain", Data: Bytes("hi"), Embedding: []float32{0.5, -1, 0.25}},
				{Modality: ModalityStructured, Format: "application/json", Data: Bytes{}, Embedding: []float32{}},
			},
			Summary: ptr("greeting"),
		},
		Associations: []Association{{TargetID: idB, AssociationType: AssocCrossModal, Weight: 0.7, CreatedAt: t0, LastCoActivation: t1}},
		Metadata:     JSON(`{"src":"chat"}`),
		Version:      4,
		Meta:         fullMeta(),
	}
	ev := &orig.Meta.ContextEdges[0].Evidence[0]
	ev.RecordID, ev.RawRecordID, ev.Excerpt, ev.URI, ev.Confidence = &idC, &idA, ptr("excerpt"), ptr("https://x/z"), ptr(0.5)
	c := CloneRecord(orig)
	if !reflect.DeepEqual(orig, c) {
		t.Fatalf("clone differs:\n%+v\n%+v", orig, c)
	}
	seen := map[string]bool{}
	var walk func(a, b reflect.Value, path, field string)
	walk = func(a, b reflect.Value, path, field string) {
		if a.Type() == reflect.TypeOf(time.Time{}) {
			return // a value; its location is shared and never changed
		}
		switch a.Kind() {
		case reflect.Pointer:
			if a.IsNil() {
				return
			}
			seen[field] = true
			if a.Pointer() == b.Pointer() {
				t.Errorf("%s: the clone shares the pointer", path)
			}
			walk(a.Elem(), b.Elem(), path, field)
		case reflect.Slice:
			if a.IsNil() {
				return
			}
			seen[field] = true
			if a.Len() > 0 && a.Pointer() == b.Pointer() {
				t.Errorf("%s: the clone shares the slice", path)
			}
			for i := range a.Len() {
				walk(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i), field+"[]")
			}
		case reflect.Struct:
			for i := range a.NumField() {
				f := a.Type().Field(i)
				walk(a.Field(i), b.Field(i), path+"."+f.Name, field+"."+f.Name)
			}
		}
	}
	walk(reflect.ValueOf(orig), reflect.ValueOf(c), "record", "record")
	// Every pointer or slice field the record type has must have been
	// seen set.
	var fields func(t reflect.Type, field string, out map[string]bool)
	fields = func(typ reflect.Type, field string, out map[string]bool) {
		if typ == reflect.TypeOf(time.Time{}) {
			return
		}
		switch typ.Kind() {
		case reflect.Pointer:
			out[field] = true
			fields(typ.Elem(), field, out)
		case reflect.Slice:
			out[field] = true
			fields(typ.Elem(), field+"[]", out)
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				fields(f.Type, field+"."+f.Name, out)
			}
		}
	}
	want := map[string]bool{}
	fields(reflect.TypeOf(orig), "record", want)
	for f := range want {
		if !seen[f] {
			t.Errorf("the record leaves %s unset: set it so the clone of it is checked", f)
		}
	}
}
