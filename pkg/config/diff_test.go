package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDiff: Diff names each changed key once, in table order, says
// whether serve applies it live, shows plain values and never a secret.
func TestDiff(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		path := filepath.Join(dir, "memsvc.toml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	load := func(body string, env ...string) *Config {
		c, err := Load(LoadOptions{File: write(body), Environ: env})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	old := load(`
data_dir = "/srv/a"
[auth]
enabled = true
api_keys = ["first-secret-key-0001", "second-secret-key-002"]
[rate_limit]
burst = 50
[log]
level = "info"
`)
	if got := Diff(old, load(`
data_dir = "/srv/a"
[auth]
enabled = true
api_keys = ["first-secret-key-0001", "second-secret-key-002"]
[rate_limit]
burst = 50
`)); len(got) != 0 {
		t.Fatalf("same values (one of them now the default): %+v, want no change", got)
	}

	newer := load(`
data_dir = "/srv/b"
[auth]
enabled = true
api_keys = ["second-secret-key-002", "third-secret-key-0003", "fourth-secret-key-004"]
[rate_limit]
burst = 80
[grpc]
port = 9000
[log]
level = "debug"
`)
	got := Diff(old, newer)
	want := []Change{
		{Key: "data_dir", Live: false, Detail: `"/srv/a" -> "/srv/b"`},
		{Key: "grpc.port", Live: false, Detail: "unset -> 9000"},
		{Key: "auth.api_keys", Live: true, Detail: "2 added, 1 removed (3 now)"},
		{Key: "rate_limit.burst", Live: true, Detail: "50 -> 80"},
		{Key: "log.level", Live: true, Detail: `"info" -> "debug"`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Diff:\n got %+v\nwant %+v", got, want)
	}
	for _, c := range got {
		for _, secret := range []string{"first-secret", "second-secret", "third-secret", "fourth-secret"} {
			if strings.Contains(c.Detail, secret) {
				t.Errorf("%s: detail %q shows a key", c.Key, c.Detail)
			}
		}
	}

	// A reordered key list is a change the log can name without values.
	reordered := load(`
data_dir = "/srv/a"
[auth]
enabled = true
api_keys = ["second-secret-key-002", "first-secret-key-0001"]
[rate_limit]
burst = 50
`)
	if got := Diff(old, reordered); len(got) != 1 || got[0].Detail != "reordered (2 now)" {
		t.Fatalf("reordered keys: %+v", got)
	}

	// The environment keeps its precedence: an edit of the file under it
	// changes nothing.
	env := "MEMSVC_RATE_LIMIT__BURST=7"
	if got := Diff(load("[rate_limit]\nburst = 50\n", env), load("[rate_limit]\nburst = 60\n", env)); len(got) != 0 {
		t.Fatalf("an edit under an environment variable: %+v, want no change", got)
	}
}

// TestDiffKeyBindings: auth.keys entries compare by key and namespaces
// (a struct with a list, which == cannot compare), and the detail counts
// keys that came, went or changed namespaces without showing any key.
func TestDiffKeyBindings(t *testing.T) {
	load := func(body string) *Config {
		t.Helper()
		path := filepath.Join(t.TempDir(), "memsvc.toml")
		if err := os.WriteFile(path, []byte("[auth]\nenabled = true\n"+body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(LoadOptions{File: path})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := load(`
[[auth.keys]]
key = "key-of-project-a-0001"
namespaces = ["project-a"]
[[auth.keys]]
key = "key-of-project-b-0002"
namespaces = ["project-b", "shared"]
`)
	same := load(`
[[auth.keys]]
key = "key-of-project-a-0001"
namespaces = ["project-a"]
[[auth.keys]]
key = "key-of-project-b-0002"
namespaces = ["project-b", "shared"]
`)
	if got := Diff(base, same); len(got) != 0 {
		t.Fatalf("same bindings: %+v, want no change", got)
	}
	for _, tc := range []struct {
		name, body, detail string
	}{
		{"rebound", `
[[auth.keys]]
key = "key-of-project-a-0001"
namespaces = ["project-c"]
[[auth.keys]]
key = "key-of-project-b-0002"
namespaces = ["project-b", "shared"]
`, "1 with other namespaces (2 now)"},
		{"one namespace more", `
[[auth.keys]]
key = "key-of-project-a-0001"
namespaces = ["project-a"]
[[auth.keys]]
key = "key-of-project-b-0002"
namespaces = ["project-b", "shared", "project-c"]
`, "1 with other namespaces (2 now)"},
		{"replaced and added", `
[[auth.keys]]
key = "key-of-project-c-0003"
namespaces = ["project-a"]
[[auth.keys]]
key = "key-of-project-b-0002"
namespaces = ["project-b", "shared"]
[[auth.keys]]
key = "key-of-everything-04"
namespaces = ["*"]
`, "2 added, 1 removed (3 now)"},
		{"reordered", `
[[auth.keys]]
key = "key-of-project-b-0002"
namespaces = ["project-b", "shared"]
[[auth.keys]]
key = "key-of-project-a-0001"
namespaces = ["project-a"]
`, "reordered (2 now)"},
	} {
		got := Diff(base, load(tc.body))
		want := []Change{{Key: "auth.keys", Live: true, Detail: tc.detail}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, want)
		}
		for _, c := range got {
			if strings.Contains(c.Detail, "key-of-") || strings.Contains(c.Detail, "project-") {
				t.Errorf("%s: detail %q shows a key or a namespace", tc.name, c.Detail)
			}
		}
	}
	if next := WithLive(base, load(`
[[auth.keys]]
key = "key-of-project-a-0001"
namespaces = ["project-c"]
`)); len(next.Auth.Keys) != 1 || !reflect.DeepEqual(next.Auth.Keys[0].Namespaces, []string{"project-c"}) {
		t.Fatalf("WithLive kept auth.keys %+v", next.Auth.Keys)
	}
}

// TestLiveKeys pins the keys serve applies without a restart: each needs
// code in pkg/server that applies it, so adding one here alone is wrong.
func TestLiveKeys(t *testing.T) {
	var live []string
	for _, name := range Keys() {
		if Live(name) {
			live = append(live, name)
		}
	}
	want := []string{"grpc.tls_cert_path", "grpc.tls_key_path", "auth.api_keys", "auth.keys",
		"rate_limit.requests_per_second", "rate_limit.burst", "rate_limit.limit_loopback", "log.level"}
	if !reflect.DeepEqual(live, want) {
		t.Fatalf("live keys %v, want %v", live, want)
	}
	if Live("no.such.key") {
		t.Fatal("an unknown key is live")
	}
}

// TestWithLive: live keys come from the loaded configuration, the others
// stay as they were, and the running configuration is not changed.
func TestWithLive(t *testing.T) {
	running := Defaults()
	running.DataDir = "/srv/a"
	loaded := Defaults()
	loaded.DataDir = "/srv/b"
	loaded.RateLimit.Burst = 99
	loaded.Auth.APIKeys = []string{"k1-0123456789abcdef"}
	loaded.Log.Level = "debug"
	cert := "/etc/memsvc/new.crt"
	loaded.GRPC.TLSCertPath = &cert
	next := WithLive(running, loaded)
	if next.DataDir != "/srv/a" || next.RateLimit.Burst != 99 || next.Log.Level != "debug" ||
		len(next.Auth.APIKeys) != 1 || next.GRPC.TLSCertPath == nil || *next.GRPC.TLSCertPath != cert {
		t.Fatalf("WithLive = %+v", next)
	}
	if running.RateLimit.Burst != 50 || running.Log.Level != "info" || running.GRPC.TLSCertPath != nil {
		t.Fatalf("WithLive changed the running configuration: %+v", running)
	}
	if d := Diff(next, loaded); len(d) != 1 || d[0].Key != "data_dir" {
		t.Fatalf("what still differs: %+v, want data_dir alone", d)
	}
}
