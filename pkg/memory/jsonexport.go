package memory

// Exported forms of the hand-written JSON appenders (jsonenc.go) for
// packages that assemble JSON of their own from model values, such as the
// MCP proxy's tool results, which it writes on every search. Each writes
// exactly what encoding/json writes for the same value.

// AppendJSONString appends s as encoding/json writes a string: quoted,
// with <, > and & escaped, invalid UTF-8 as \ufffd.
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }

// AppendJSONFloat appends f as encoding/json writes a float64. A NaN or
// an infinity is an error, as it is there.
func AppendJSONFloat(dst []byte, f float64) ([]byte, error) { return appendJSONFloat(dst, f, 64) }

// AppendJSON appends id as encoding/json writes it: its text, quoted.
func (id ID) AppendJSON(dst []byte) []byte { return appendJSONID(dst, id) }

// AppendJSON appends s as encoding/json writes it: its name, quoted. A
// value without a name is an error, as it is for MarshalText.
func (s StoreType) AppendJSON(dst []byte) ([]byte, error) {
	return appendJSONEnum(dst, storeNames, uint8(s))
}
