package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestDiff: Diff names each changed key once, in table order, says
// whether serve applies it live, shows plain values and never a secret.
func TestDiff(t *testing.T) {
	const oldBody = `
data_dir = "/srv/a"
[auth]
enabled = true
api_keys = ["first-secret-key-0001", "second-secret-key-002"]
[rate_limit]
burst = 50
[log]
level = "info"
`
	old := loadBody(t, oldBody)
	// The same file without the log level, which is the default.
	sameBody := strings.Replace(oldBody, "[log]\nlevel = \"info\"\n", "", 1)
	if got := Diff(old, loadBody(t, sameBody)); len(got) != 0 {
		t.Fatalf("same values (one of them now the default): %+v, want no change", got)
	}

	newer := loadBody(t, `
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
	reordered := loadBody(t, strings.Replace(sameBody,
		`["first-secret-key-0001", "second-secret-key-002"]`, `["second-secret-key-002", "first-secret-key-0001"]`, 1))
	if got := Diff(old, reordered); len(got) != 1 || got[0].Detail != "reordered (2 now)" {
		t.Fatalf("reordered keys: %+v", got)
	}

	// The environment keeps its precedence: an edit of the file under it
	// changes nothing.
	env := "MEMSVC_RATE_LIMIT__BURST=7"
	if got := Diff(loadBody(t, "[rate_limit]\nburst = 50\n", env), loadBody(t, "[rate_limit]\nburst = 60\n", env)); len(got) != 0 {
		t.Fatalf("an edit under an environment variable: %+v, want no change", got)
	}
}

// loadBody loads a configuration file holding body, with the environment
// env.
func loadBody(t *testing.T, body string, env ...string) *Config {
	t.Helper()
	return mustLoad(t, LoadOptions{File: writeFile(t, body), Environ: env})
}

// keysTOML is a configuration with authentication on and an auth.keys
// entry for each binding: its key, then its namespaces.
func keysTOML(bindings ...[]string) string {
	var b strings.Builder
	b.WriteString("[auth]\nenabled = true\n")
	for _, kb := range bindings {
		ns := make([]string, len(kb)-1)
		for i, n := range kb[1:] {
			ns[i] = strconv.Quote(n)
		}
		fmt.Fprintf(&b, "[[auth.keys]]\nkey = %q\nnamespaces = [%s]\n", kb[0], strings.Join(ns, ", "))
	}
	return b.String()
}

// TestDiffKeyBindings: auth.keys entries compare by key and namespaces
// (a struct with a list, which == cannot compare), and the detail counts
// keys that came, went or changed namespaces without showing any key.
func TestDiffKeyBindings(t *testing.T) {
	a := []string{"key-of-project-a-0001", "project-a"}
	b := []string{"key-of-project-b-0002", "project-b", "shared"}
	base := loadBody(t, keysTOML(a, b))
	if got := Diff(base, loadBody(t, keysTOML(a, b))); len(got) != 0 {
		t.Fatalf("same bindings: %+v, want no change", got)
	}
	aRebound := []string{"key-of-project-a-0001", "project-c"}
	for _, tc := range []struct {
		name, body, detail string
	}{
		{"rebound", keysTOML(aRebound, b), "1 with other namespaces (2 now)"},
		{"one namespace more", keysTOML(a, []string{"key-of-project-b-0002", "project-b", "shared", "project-c"}), "1 with other namespaces (2 now)"},
		{"replaced and added", keysTOML([]string{"key-of-project-c-0003", "project-a"}, b, []string{"key-of-everything-04", "*"}), "2 added, 1 removed (3 now)"},
		{"reordered", keysTOML(b, a), "reordered (2 now)"},
	} {
		got := Diff(base, loadBody(t, tc.body))
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
	if next := WithLive(base, loadBody(t, keysTOML(aRebound))); len(next.Auth.Keys) != 1 || !reflect.DeepEqual(next.Auth.Keys[0].Namespaces, []string{"project-c"}) {
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
