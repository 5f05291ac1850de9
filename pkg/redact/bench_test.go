package redact_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/redact"
)

func readEvent(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/event.json")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestBenchmarkEvent pins what the benchmark event loses, so the benchmark
// measures real work.
func TestBenchmarkEvent(t *testing.T) {
	ev := readEvent(t)
	got := redact.Text(string(ev))
	for _, secret := range []string{"mk_0a1b2c3d4e5f60718293a4b5c6d7e8f9", "devpass123", "not-a-real-key-0123456789"} {
		if !bytes.Contains(ev, []byte(secret)) {
			t.Fatalf("event does not contain %q", secret)
		}
		if strings.Contains(got, secret) {
			t.Errorf("Text kept %q", secret)
		}
	}
	out, err := redact.JSON(ev)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("devpass123")) || bytes.Contains(out, []byte("mk_0a1b")) {
		t.Errorf("JSON kept a secret:\n%s", out)
	}
}

// BenchmarkText redacts a ~4 KiB PostToolUse event as text.
func BenchmarkText(b *testing.B) {
	ev := string(readEvent(b))
	b.SetBytes(int64(len(ev)))
	b.ReportAllocs()
	for b.Loop() {
		redact.Text(ev)
	}
}

// BenchmarkJSON redacts the same event structurally.
func BenchmarkJSON(b *testing.B) {
	ev := readEvent(b)
	b.SetBytes(int64(len(ev)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := redact.JSON(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTextAdversarial runs 256 KiB inputs (the recorder's line limit)
// built to defeat linear scanning; each should cost about what a plain
// 256 KiB text does.
func BenchmarkTextAdversarial(b *testing.B) {
	const size = 256 << 10
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	for _, bc := range []struct{ name, in string }{
		{"prose", fill("The token bucket refills; Basic understanding helps. ")},
		{"nested assignments", fill("password=") + "("},
		{"placeholder chain", fill("TOKEN=$A=")},
		{"token prefixes", fill("sk-a-")},
		{"jwt prefixes", fill("eyJ-")},
		{"bearer words", fill("Bearer x/")},
		{"pem headers", fill("-----BEGIN RSA PRIVATE KEY----- x ")},
		{"url schemes", fill("a://b:c")},
		{"quoted keys", fill(`"password": "`)},
		{"flags", fill("--token a:")},
		{"separators", fill("a=")},
		{"url userinfo", fill("a://b:c@d")},
		{"command words", fill("mysql -p ")},
		{"command quotes", "curl '" + fill("curl -u x ")},
		{"netrc", fill("machine h login u password ")},
		{"netrc keywords", "default " + fill("machine ")},
		{"kube secrets", fill("kind: Secret\ndata:\n  a: b\n")},
		{"azure anchors", fill("ab1Q~")},
		{"call pairs", fill(`f("token", `)},
		{"bracket keys", fill(`x['token']=`)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				redact.Text(bc.in)
			}
		})
	}
}
