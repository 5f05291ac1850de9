package tools

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/tools/internal/protogen"
)

// TestProtoDrift regenerates the code of every .proto file into a
// temporary directory and compares it with the committed files: a .proto
// change without regeneration, a hand edit of generated code or a plugin
// version bump without regeneration all fail here. Fix with
// `go generate ./pkg/grpcapi` (or `cd tools && go run ./cmd/protogen`).
func TestProtoDrift(t *testing.T) {
	files, err := protogen.Generate(t.Context(), protogen.Default())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := protogen.Write(tmp, files); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for name := range files {
		dirs[filepath.Dir(filepath.FromSlash(name))] = true
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		want := generatedFiles(t, filepath.Join(tmp, dir))
		got := generatedFiles(t, filepath.Join("..", dir))
		for name, w := range want {
			g, ok := got[name]
			switch {
			case !ok:
				t.Errorf("%s is not committed; regenerate", filepath.Join(dir, name))
			case !bytes.Equal(g, w):
				t.Errorf("%s differs from what the generator writes (first difference at line %d); regenerate",
					filepath.Join(dir, name), firstDiffLine(g, w))
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("%s is a generated file no .proto produces any more; delete it", filepath.Join(dir, name))
			}
		}
	}
}

// TestProtoGenerationDeterministic: two runs give the same bytes.
func TestProtoGenerationDeterministic(t *testing.T) {
	a, err := protogen.Generate(t.Context(), protogen.Default())
	if err != nil {
		t.Fatal(err)
	}
	b, err := protogen.Generate(t.Context(), protogen.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("runs generated %d and %d files", len(a), len(b))
	}
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}

// generatedFiles reads the generated Go files (*.pb.go) of dir.
func generatedFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".pb.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func firstDiffLine(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}
