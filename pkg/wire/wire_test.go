package wire

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

func TestStatus(t *testing.T) {
	want := map[memory.Code]int{
		memory.CodeNotFound:                404,
		memory.CodeStoreInvalid:            400,
		memory.CodeContentTooLarge:         413,
		memory.CodeValidation:              400,
		memory.CodeModalityUnsupported:     400,
		memory.CodeWorkingMemoryFull:       503,
		memory.CodeDecayEngineBusy:         503,
		memory.CodeConsolidationInProgress: 503,
		memory.CodeExportFailed:            500,
		memory.CodeImportConflict:          409,
		memory.CodeForgetUnconfirmed:       400,
		memory.CodeVersionMismatch:         400,
		memory.CodeUnauthorized:            401,
		memory.CodeRateLimited:             429,
		memory.CodeInternal:                500,
		memory.CodeInsufficientStorage:     507,
		memory.CodeForbidden:               403,
	}
	if len(want) != len(memory.Codes) {
		t.Fatalf("table has %d codes, memory.Codes %d", len(want), len(memory.Codes))
	}
	for _, c := range memory.Codes {
		if got := Status(c); got != want[c] {
			t.Errorf("Status(%s) = %d, want %d", c, got, want[c])
		}
	}
	if got := Status("SOMETHING_NEW"); got != 500 {
		t.Errorf("unknown code: %d", got)
	}
}

func TestEnvelopeJSON(t *testing.T) {
	tests := []struct {
		name string
		err  *memory.Error
		rid  string
		want string
	}{
		{"plain", memory.NotFound(memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")), "7d0c3c2e-2b7a-4a57-9f59-3f0b7c1e2a10",
			`{"code":"RECORD_NOT_FOUND","message":"record not found: 0196a9e2-5c1d-7f00-8a00-0000000000aa","details":null,"retry_after":null,"request_id":"7d0c3c2e-2b7a-4a57-9f59-3f0b7c1e2a10"}`},
		{"opaque request id", &memory.Error{Code: memory.CodeValidation, Message: "bad"}, "trace-1",
			`{"code":"VALIDATION_ERROR","message":"bad","details":null,"retry_after":null}`},
		{"retry after", &memory.Error{Code: memory.CodeRateLimited, Message: "rate limit exceeded", RetryAfter: 3}, "",
			`{"code":"RATE_LIMITED","message":"rate limit exceeded","details":null,"retry_after":3}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(NewEnvelope(tc.err, tc.rid))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
			env, ok := DecodeEnvelope(b)
			if !ok {
				t.Fatal("own envelope not recognised")
			}
			back := env.Err()
			if back.Code != tc.err.Code || back.Message != tc.err.Message || back.RetryAfter != tc.err.RetryAfter {
				t.Errorf("round trip: %+v, want %+v", back, tc.err)
			}
		})
	}
}

func TestDecodeEnvelope(t *testing.T) {
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"code":"RECORD_NOT_FOUND","message":"x"}`, true},
		{`{"code":"FUTURE_CODE","message":""}`, true},
		{`{"code":"X","message":"m","retry_after":5,"extra":[1]}`, true},
		{`{"code":"","message":"m"}`, false},
		{`{"message":"m"}`, false},
		{`{"code":"X"}`, false},
		{`{"code":1,"message":"m"}`, false},
		{`{"error":"not found"}`, false},
		{`<html>Bad Gateway</html>`, false},
		{``, false},
		{`[]`, false},
	} {
		if _, ok := DecodeEnvelope([]byte(tc.body)); ok != tc.ok {
			t.Errorf("DecodeEnvelope(%s) = %v, want %v", tc.body, ok, tc.ok)
		}
	}
}

func TestEnvelopeRequestID(t *testing.T) {
	const id = "7d0c3c2e-2b7a-4a57-9f59-3f0b7c1e2a10"
	for _, tc := range []struct{ in, want string }{
		{id, id},
		{strings.ToUpper(id), strings.ToUpper(id)},
		{strings.ReplaceAll(id, "-", ""), strings.ReplaceAll(id, "-", "")},
		{"{" + id + "}", "{" + id + "}"},
		{"urn:uuid:" + id, "urn:uuid:" + id},
		{" " + id, ""},
		{id + " ", ""},
		{"req-42", ""},
		{"", ""},
	} {
		if got := EnvelopeRequestID(tc.in); got != tc.want {
			t.Errorf("EnvelopeRequestID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRoutes(t *testing.T) {
	seen := map[string]bool{}
	v1 := 0
	for _, rt := range Routes() {
		key := rt.Method + " " + rt.Path
		if seen[key] {
			t.Errorf("route %s listed twice", key)
		}
		seen[key] = true
		if strings.HasPrefix(rt.Path, "/v1/") {
			if !rt.Protected || rt.Op == "" {
				t.Errorf("%s: /v1 routes are protected and name their operation", key)
			}
			if rt.Path != PathExportStream && rt.Path != PathImportStream && !strings.HasPrefix(rt.Path, PathNamespaces) {
				v1++
			}
		}
		if rt.Status != http.StatusOK && rt.Status != http.StatusNoContent {
			t.Errorf("%s: status %d", key, rt.Status)
		}
		if rt.Body != (rt.Method != http.MethodGet) {
			t.Errorf("%s: body %v", key, rt.Body)
		}
	}
	if v1 != 21 {
		t.Errorf("%d upstream /v1 routes, want 21", v1)
	}
	for _, key := range []string{"GET /health", "GET /readiness", "GET /metrics", "PATCH /v1/encode/{record_id}", "PUT /v1/lifecycle/mode", "DELETE /v1/lifecycle/forget"} {
		if !seen[key] {
			t.Errorf("route %s missing", key)
		}
	}
	id := memory.MustParseID("0196a9e2-5c1d-7f00-8a00-0000000000aa")
	if got := RecordPath(PathRecallAssociate, id); got != "/v1/recall/associate/0196a9e2-5c1d-7f00-8a00-0000000000aa" {
		t.Errorf("RecordPath = %s", got)
	}
	if got := NamespacePath("team.a"); got != "/v1/namespaces/team.a" {
		t.Errorf("NamespacePath = %s", got)
	}
	if got := NamespacePath("a/b"); got != "/v1/namespaces/a%2Fb" {
		t.Errorf("NamespacePath of a name with a slash = %s", got)
	}
}

// TestRouteReach: the CMP operations act in the namespace of the header;
// only the routes that say why reach further, and the path-scoped route
// has the path parameter to name its namespace.
func TestRouteReach(t *testing.T) {
	want := map[string]Reach{
		"GET " + PathMetrics:      ServerWide,
		"GET " + PathNamespaces:   KeyWide,
		"DELETE " + PathNamespace: InPath,
	}
	for _, rt := range Routes() {
		key := rt.Method + " " + rt.Path
		if !rt.Protected {
			continue
		}
		if w, ok := want[key]; ok {
			if rt.Namespace != w {
				t.Errorf("%s: reach %v, want %v", key, rt.Namespace, w)
			}
			delete(want, key)
		} else if rt.Namespace != InHeader {
			t.Errorf("%s: reach %v; a CMP operation acts in the namespace of %s", key, rt.Namespace, HeaderNamespace)
		}
		if (rt.Namespace == InPath) != strings.Contains(rt.Path, "{"+ParamNamespace+"}") {
			t.Errorf("%s: reach %v and path %s disagree", key, rt.Namespace, rt.Path)
		}
	}
	for key := range want {
		t.Errorf("route %s missing", key)
	}
}

func TestExportArchiveResponseJSON(t *testing.T) {
	b, err := json.Marshal(ExportArchiveResponse{
		ExportResponse: memory.ExportResponse{ArchiveID: "a", SizeBytes: 2, RecordCount: 1, Checksum: "c"},
		ArchiveData:    memory.Bytes("{}"),
	})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"archive_id":"a","size_bytes":2,"record_count":1,"checksum":"c","archive_data":[123,125]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
