package mcpproxy

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// argError is a tool argument the proxy refuses before calling the server.
// Its text names the argument and says what is accepted, so a model can
// correct the call.
type argError struct {
	name string // "store", or "records[2].content" inside a batch
	msg  string
}

func (e *argError) Error() string {
	return fmt.Sprintf("invalid argument %s: %s", memory.Quote(e.name), e.msg)
}

func badArg(name, format string, a ...any) error {
	return &argError{name: name, msg: fmt.Sprintf(format, a...)}
}

// args reads the arguments of one tool call (or one record of a batch).
// Absent and null arguments are the same: "not given". The readers accept
// what models commonly send besides the declared type, and the older
// forms of the list and object arguments: numbers and booleans as strings,
// lists as comma-separated strings, objects and arrays as JSON text in a
// string.
type args struct {
	m      map[string]any
	prefix string // prepended to argument names in errors
}

func (a args) name(n string) string { return a.prefix + n }

func (a args) get(n string) (any, bool) {
	v, ok := a.m[n]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

// unknown refuses arguments that are not accepted: a misspelt optional
// argument would otherwise be silently ignored. The error lists the
// declared ones.
func (a args) unknown(accepted, known []string) error {
	var extra []string
	for k := range a.m {
		if !slices.Contains(accepted, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	list := "none"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	return badArg(a.name(extra[0]), "unknown argument; this tool accepts: %s", list)
}

// str returns a string argument; ok is false when it is absent.
func (a args) str(n string) (s string, ok bool, err error) {
	v, ok := a.get(n)
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, badArg(a.name(n), "must be a string, got %s", jsonType(v))
	}
	return s, true, nil
}

// text returns a required string that is not blank. The text is returned
// as given (untrimmed).
func (a args) text(n, what string) (string, error) {
	s, ok, err := a.str(n)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", badArg(a.name(n), "required: %s", what)
	}
	if strings.TrimSpace(s) == "" {
		return "", badArg(a.name(n), "must not be blank: %s", what)
	}
	return s, nil
}

// optText returns an optional string; blank counts as absent.
func (a args) optText(n string) (*string, error) {
	s, ok, err := a.str(n)
	if err != nil || !ok || strings.TrimSpace(s) == "" {
		return nil, err
	}
	return &s, nil
}

// integer returns an integer argument within [lo, hi], or def when absent.
func (a args) integer(n string, def, lo, hi int64) (int64, error) {
	v, ok := a.get(n)
	if !ok {
		return def, nil
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case json.Number:
		p, err := x.Float64()
		if err != nil {
			return 0, badArg(a.name(n), "must be a whole number between %d and %d, got %s", lo, hi, x)
		}
		f = p
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, badArg(a.name(n), "must be a whole number between %d and %d, got %s", lo, hi, memory.Quote(x))
		}
		f = p
	default:
		return 0, badArg(a.name(n), "must be a whole number between %d and %d, got %s", lo, hi, jsonType(v))
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, badArg(a.name(n), "must be a whole number between %d and %d, got %v", lo, hi, f)
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, badArg(a.name(n), "must be between %d and %d, got %v", lo, hi, f)
	}
	return int64(f), nil
}

// boolean returns a boolean argument, or def when absent.
func (a args) boolean(n string, def bool) (bool, error) {
	v, ok := a.get(n)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, badArg(a.name(n), "must be true or false, got %s", describe(v))
}

// choice returns one of values (matched case-insensitively after trimming),
// or def when absent or blank.
func (a args) choice(n, def string, values []string) (string, error) {
	s, ok, err := a.str(n)
	if err != nil || !ok || strings.TrimSpace(s) == "" {
		return def, err
	}
	t := strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(values, t) {
		return t, nil
	}
	return "", badArg(a.name(n), "%s is not accepted; use one of: %s", memory.Quote(s), strings.Join(values, ", "))
}

// list returns the items of a JSON array of strings (or of a
// comma-separated string, the older form), trimmed, blank items skipped.
// ok is false when the argument is absent or holds no items.
func (a args) list(n string) (items []string, ok bool, err error) {
	v, present := a.get(n)
	if !present {
		return nil, false, nil
	}
	var raw []string
	switch x := v.(type) {
	case string:
		raw = strings.Split(x, ",")
	case []any:
		for i, e := range x {
			s, isStr := e.(string)
			if !isStr {
				return nil, false, badArg(a.name(n), "item %d must be a string, got %s", i, jsonType(e))
			}
			raw = append(raw, s)
		}
	default:
		return nil, false, badArg(a.name(n), "must be an array of strings, got %s", jsonType(v))
	}
	for _, s := range raw {
		if t := strings.TrimSpace(s); t != "" {
			items = append(items, t)
		}
	}
	return items, len(items) > 0, nil
}

// jsonText returns the JSON document of an object or array argument,
// given as the value itself or, the older form, as JSON text in a string.
// ok is false when the argument is absent or blank.
func (a args) jsonText(n string) (doc []byte, ok bool, err error) {
	v, present := a.get(n)
	if !present {
		return nil, false, nil
	}
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return nil, false, nil
		}
		return []byte(x), true, nil
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, false, badArg(a.name(n), "cannot be encoded: %v", err)
		}
		return b, true, nil
	default:
		return nil, false, badArg(a.name(n), "must be a JSON object or array, got %s", jsonType(v))
	}
}

// id returns a required record id.
func (a args) id(n string) (memory.ID, error) {
	s, ok, err := a.str(n)
	if err != nil {
		return memory.ID{}, err
	}
	if !ok || strings.TrimSpace(s) == "" {
		return memory.ID{}, badArg(a.name(n), "required: a record id such as 0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f (recall, recall_raw and timeline return ids)")
	}
	return parseID(a.name(n), s)
}

func parseID(name, s string) (memory.ID, error) {
	id, err := memory.ParseID(strings.TrimSpace(s))
	if err != nil {
		return memory.ID{}, badArg(name, "%s is not a record id; want a UUID such as 0190b6a4-7c1e-7a55-9f1a-5f2b3c4d5e6f", memory.Quote(s))
	}
	return id, nil
}

// count reads the whole number n into the request field *dst, which holds
// the default, between lo and hi (integer).
func (a args) count(n string, dst *uint32, lo, hi int64) error {
	v, err := a.integer(n, int64(*dst), lo, hi)
	if err != nil {
		return err
	}
	*dst = uint32(v)
	return nil
}

// sessionID returns the optional session_id, trimmed.
func (a args) sessionID() (*string, error) {
	id, err := a.optText("session_id")
	if id != nil {
		s := strings.TrimSpace(*id)
		id = &s
	}
	return id, err
}

// timeRange returns the optional RFC 3339 times start and end, refusing a
// start after the end.
func (a args) timeRange() (start, end *time.Time, err error) {
	if start, err = a.timestamp("start"); err != nil {
		return nil, nil, err
	}
	if end, err = a.timestamp("end"); err != nil {
		return nil, nil, err
	}
	if start != nil && end != nil && start.After(*end) {
		return nil, nil, badArg("start", "%s is after end %s", start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	return start, end, nil
}

// rawFilter reads the arguments that choose the raw journal entries a
// call sees into the request's fields: include_private_scratch,
// include_sealed and secrecy_levels (each field holds its default).
func (a args) rawFilter(private, sealed *bool, levels *[]memory.SecrecyLevel) error {
	var err error
	if *private, err = a.boolean("include_private_scratch", *private); err != nil {
		return err
	}
	if *sealed, err = a.boolean("include_sealed", *sealed); err != nil {
		return err
	}
	*levels, err = enumList[memory.SecrecyLevel](a, "secrecy_levels")
	return err
}

// timestamp returns an optional RFC 3339 time.
func (a args) timestamp(n string) (*time.Time, error) {
	s, ok, err := a.str(n)
	if err != nil || !ok || strings.TrimSpace(s) == "" {
		return nil, err
	}
	t, perr := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if perr != nil {
		return nil, badArg(a.name(n), "%s is not an RFC 3339 time; want e.g. 2026-05-01T09:30:00Z", memory.Quote(s))
	}
	return &t, nil
}

// enumChoice sets *dst to the value of the enumeration named by argument
// n (matched case-insensitively after trimming); an absent or blank
// argument leaves *dst, the default, as it is.
func enumChoice[E memory.Enum, P interface {
	*E
	encoding.TextUnmarshaler
}](a args, n string, dst P) error {
	s, err := a.choice(n, "", memory.Names[E]())
	if err != nil || s == "" {
		return err
	}
	return dst.UnmarshalText([]byte(s))
}

// enumList returns the values of an optional list of enumeration names:
// an array of names, or a comma-separated string. nil means absent.
func enumList[E memory.Enum, P interface {
	*E
	encoding.TextUnmarshaler
}](a args, n string) ([]E, error) {
	items, ok, err := a.list(n)
	if err != nil || !ok {
		return nil, err
	}
	names := memory.Names[E]()
	out := make([]E, 0, len(items))
	for _, it := range items {
		var v E
		if P(&v).UnmarshalText([]byte(strings.ToLower(it))) != nil {
			return nil, badArg(a.name(n), "%s is not accepted; give a list of: %s", memory.Quote(it), strings.Join(names, ", "))
		}
		out = append(out, v)
	}
	return out, nil
}

// store returns an optional store; nil lets the server route the record.
func (a args) store(n string) (*memory.StoreType, error) {
	var st memory.StoreType
	if err := enumChoice(a, n, &st); err != nil || st == 0 {
		return nil, err
	}
	return &st, nil
}

// emotion returns an optional emotion vector from a label.
func (a args) emotion(n string) (*memory.EmotionVector, error) {
	s, ok, err := a.str(n)
	if err != nil || !ok || strings.TrimSpace(s) == "" {
		return nil, err
	}
	v, perr := memory.ParseEmotionLabel(s)
	if perr != nil {
		return nil, badArg(a.name(n), "%s is not an emotion label; use one of: %s", memory.Quote(s), strings.Join(memory.EmotionLabelNames(), ", "))
	}
	return &v, nil
}

// meta returns the optional meta-memory given as JSON text.
func (a args) meta(n string) (*memory.MetaMemory, error) {
	doc, ok, err := a.jsonText(n)
	if err != nil || !ok {
		return nil, err
	}
	m, perr := memory.ParseMetaJSON(a.name(n), string(doc))
	if perr != nil {
		return nil, &argError{name: a.name(n), msg: strings.TrimPrefix(perr.Error(), a.name(n)+": ")}
	}
	return m, nil
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// describe shows a value in an error message.
func describe(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	if b, err := json.Marshal(v); err == nil && len(b) <= 60 {
		return string(b)
	}
	return jsonType(v)
}
