package mcpproxy

import (
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/client"
)

// TestArgumentErrorsQuoteAPrefix: an argument error quotes at most a
// short prefix of a huge input, whether the value or the argument's name.
func TestArgumentErrorsQuoteAPrefix(t *testing.T) {
	p := newProxy(t, closedURL(t), client.Options{}, Options{ExportDir: t.TempDir()})
	big := strings.Repeat("Q", 100_000)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"store", map[string]any{"content": "x", "emotion": big}},
		{"store", map[string]any{"content": "x", big: 1}},
		{"inspect", map[string]any{"record_id": big}},
		{"recall", map[string]any{"limit": big}},
		{"recall", map[string]any{"stores": big}},
		{"recall_raw", map[string]any{"start": big, "end": big}},
		{"consolidate", map[string]any{"strategy": big}},
		{"export", map[string]any{"output_path": "/" + big}},
	} {
		text, isErr := callTool(t, p, tc.tool, tc.args)
		if !isErr || len(text) > 1024 || !strings.Contains(text, "(100000 bytes)") && !strings.Contains(text, "(100001 bytes)") {
			t.Errorf("%s: isError %v, %d bytes: %.300s", tc.tool, isErr, len(text), text)
		}
	}
}
