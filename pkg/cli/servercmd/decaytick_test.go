package servercmd

import (
	"strings"
	"testing"
)

// TestDecayTickCap: a tick over 30 days is refused unless --allow-long asks
// for it (it can make every memory dormant at once).
func TestDecayTickCap(t *testing.T) {
	dir := t.TempDir()
	storeText(t, dir, "an episode worth keeping")
	_, errOut, code := run(t, dir, "decay-tick", "--duration", "4294967295")
	if code != 2 || !strings.Contains(errOut, "--allow-long") {
		t.Fatalf("a 136-year tick: exit %d, %q", code, errOut)
	}
	if s := stats(t, dir); s.AvgFidelity != 1 {
		t.Fatalf("the refused tick aged the memory: fidelity %v", s.AvgFidelity)
	}
	out, errOut, code := run(t, dir, "decay-tick", "--duration", "4294967295", "--allow-long")
	if code != 0 || !strings.Contains(out, "records below threshold: 1") {
		t.Fatalf("an allowed long tick: exit %d, %q %s", code, out, errOut)
	}
}
