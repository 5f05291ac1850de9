package memory

import (
	"encoding/json"
	"math"
	"testing"
)

// TestExportedAppenders: the exported appenders write what json.Marshal
// writes, errors included.
func TestExportedAppenders(t *testing.T) {
	same := func(what string, got []byte, gotErr error, v any) {
		t.Helper()
		want, wantErr := json.Marshal(v)
		if (gotErr != nil) != (wantErr != nil) || (gotErr == nil && string(got) != string(want)) {
			t.Errorf("%s: got %s (%v), json.Marshal %s (%v)", what, got, gotErr, want, wantErr)
		}
	}
	for _, s := range []string{"", "plain", `" \ /`, "<&>", "\x00\x1f\n\t", "é\u2028\u2029🙂", "bad \xff\xfe"} {
		same("string "+s, AppendJSONString([]byte("x"), s)[1:], nil, s)
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1.105, 1.0923388230261548, 1e-7, 1e21, 123456789e-20, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1)} {
		b, err := AppendJSONFloat(nil, f)
		same("float", b, err, f)
	}
	id := ID{0x01, 0x90, 0xb6, 0xa4, 0x7c, 0x1e, 0x7a, 0x55, 0x9f, 0x1a, 0x5f, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f}
	same("id", id.AppendJSON(nil), nil, id)
	for _, s := range []StoreType{StoreEpisodic, StoreSemantic, StoreProcedural, StoreEmotional, StoreWorking, StoreType(0), StoreType(200)} {
		b, err := s.AppendJSON(nil)
		same("store "+s.String(), b, err, s)
	}
}
