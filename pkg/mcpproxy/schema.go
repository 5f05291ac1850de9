package mcpproxy

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// JSON Schemas of the tools' answers (outputSchema) and of the meta-memory
// argument are generated from Go types, so a field added to a type shows
// up in its schema. The rules are those of encoding/json and of this wire:
//
//   - a struct is an object with one property per exported field (named by
//     its json tag), every one required unless tagged omitempty, and no
//     other properties;
//   - a pointer may also be null;
//   - a slice is an array, never null: every type answered here writes an
//     empty list as [] (pkg/memory's MarshalJSON methods, which otherwise
//     keep the field shape, and the proxy's own result types see to it);
//   - a map is an object, whose keys are limited to an enumeration's names
//     when the key type is one;
//   - an enumeration is a string limited to memory.Names, an emotion label
//     one of memory.EmotionLabelNames, an ID a UUID string, a time (or a
//     timestamp string) an RFC 3339 string, memory.JSON any JSON value.
//
// The schemas use only keywords that JSON Schema draft-07 and 2020-12
// share and name no $schema, so both kinds of validator read them alike.

// emotionName is an emotion label in an answer.
type emotionName string

// timestamp is a time in an answer, already formatted as RFC 3339.
type timestamp string

// schemaGen builds schemas. Input schemas (arguments) require nothing and
// leave null out: the decoders behind them take null as absent, but some
// model providers refuse a list of types in a tool's arguments.
type schemaGen struct {
	input bool
	// known maps the types with a fixed schema to a constructor of it.
	known map[reflect.Type]func() map[string]any
	// inProgress guards against recursive types.
	inProgress map[reflect.Type]bool
}

func newSchemaGen(input bool) *schemaGen {
	g := &schemaGen{input: input, inProgress: map[reflect.Type]bool{}, known: map[reflect.Type]func() map[string]any{
		reflect.TypeFor[memory.ID]():   func() map[string]any { return map[string]any{"type": "string", "format": "uuid"} },
		reflect.TypeFor[time.Time]():   func() map[string]any { return map[string]any{"type": "string", "format": "date-time"} },
		reflect.TypeFor[timestamp]():   func() map[string]any { return map[string]any{"type": "string", "format": "date-time"} },
		reflect.TypeFor[memory.JSON](): func() map[string]any { return map[string]any{"description": "free-form JSON; {} when empty"} },
		reflect.TypeFor[emotionName](): func() map[string]any { return enumSchema(memory.EmotionLabelNames()) },
	}}
	addEnum[memory.StoreType](g)
	addEnum[memory.Modality](g)
	addEnum[memory.AssociationType](g)
	addEnum[memory.AssociationOrigin](g)
	addEnum[memory.RecallMode](g)
	addEnum[memory.RawSource](g)
	addEnum[memory.RawSpeaker](g)
	addEnum[memory.Visibility](g)
	addEnum[memory.SecrecyLevel](g)
	addEnum[memory.MetaCaptureStatus](g)
	addEnum[memory.MetaRelation](g)
	addEnum[memory.TimeGranularity](g)
	addEnum[memory.ConsolidationStrategy](g)
	addEnum[memory.ImportStrategy](g)
	addEnum[memory.ConflictResolution](g)
	return g
}

func addEnum[E memory.Enum](g *schemaGen) {
	g.known[reflect.TypeFor[E]()] = func() map[string]any { return enumSchema(memory.Names[E]()) }
}

func enumSchema(names []string) map[string]any {
	return map[string]any{"type": "string", "enum": names}
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

func (g *schemaGen) of(t reflect.Type) (map[string]any, error) {
	if mk, ok := g.known[t]; ok {
		return mk(), nil
	}
	if t.Kind() == reflect.Pointer {
		s, err := g.of(t.Elem())
		if err != nil || g.input {
			return s, err
		}
		return nullable(s), nil
	}
	if t.Kind() != reflect.Struct && (t.Implements(jsonMarshaler) || t.Implements(textMarshaler)) {
		return nil, fmt.Errorf("%v marshals itself: give it a fixed schema", t)
	}
	switch t.Kind() {
	case reflect.Struct:
		return g.object(t)
	case reflect.Slice, reflect.Array:
		if _, known := g.known[t.Elem()]; t.Elem().Kind() == reflect.Uint8 && !known {
			return nil, fmt.Errorf("%v: byte lists are not part of this wire", t)
		}
		items, err := g.of(t.Elem())
		if err != nil {
			return nil, fmt.Errorf("%v: %w", t, err)
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		return g.mapping(t)
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	}
	return nil, fmt.Errorf("no JSON schema for %v", t)
}

// object describes a struct: its fields by json name, in declaration
// order in the required list.
func (g *schemaGen) object(t reflect.Type) (map[string]any, error) {
	if g.inProgress[t] {
		return nil, fmt.Errorf("%v is recursive", t)
	}
	g.inProgress[t] = true
	defer delete(g.inProgress, t)
	props := map[string]any{}
	required := []string{}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous || name == "" {
			return nil, fmt.Errorf("%v.%s: give the field a json name", t, f.Name)
		}
		s, err := g.of(f.Type)
		if err != nil {
			return nil, fmt.Errorf("%v.%s: %w", t, f.Name, err)
		}
		props[name] = s
		omit := slices.Contains(strings.Split(opts, ","), "omitempty")
		if !g.input && !omit {
			required = append(required, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s, nil
}

func (g *schemaGen) mapping(t reflect.Type) (map[string]any, error) {
	values, err := g.of(t.Elem())
	if err != nil {
		return nil, fmt.Errorf("%v: %w", t, err)
	}
	s := map[string]any{"type": "object", "additionalProperties": values}
	if mk, ok := g.known[t.Key()]; ok {
		key := mk()
		if key["enum"] == nil {
			return nil, fmt.Errorf("%v: keys must be strings or an enumeration", t)
		}
		s["propertyNames"] = map[string]any{"enum": key["enum"]}
	} else if t.Key().Kind() != reflect.String {
		return nil, fmt.Errorf("%v: keys must be strings or an enumeration", t)
	}
	return s, nil
}

// nullable lets s also be null.
func nullable(s map[string]any) map[string]any {
	switch typ := s["type"].(type) {
	case string:
		s["type"] = []string{typ, "null"}
	case []string:
		if !slices.Contains(typ, "null") {
			s["type"] = append(slices.Clone(typ), "null")
		}
	}
	if enum, ok := s["enum"].([]string); ok {
		values := make([]any, 0, len(enum)+1)
		for _, e := range enum {
			values = append(values, e)
		}
		s["enum"] = append(values, nil)
	}
	return s
}
