package config

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite deploy-docs/memsvc.example.toml")

const examplePath = "../../deploy-docs/memsvc.example.toml"

// TestExampleFile keeps the example in deploy-docs in sync with the key
// table, and boots it: it must load, validate and equal the defaults.
func TestExampleFile(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteExample(&buf); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(examplePath, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("%s is out of date: run go test ./pkg/config -run TestExampleFile -update", examplePath)
	}
	c, err := Load(LoadOptions{File: examplePath})
	if err != nil {
		t.Fatalf("example does not load: %v", err)
	}
	want := Defaults()
	want.File = examplePath
	c.Sources, want.Sources = nil, nil
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("example config differs from defaults:\n got %+v\nwant %+v", c, want)
	}
	// Every key is documented in the file, set or commented out.
	for _, name := range Keys() {
		leaf := name[strings.LastIndex(name, ".")+1:]
		if !bytes.Contains(got, []byte("\n"+leaf+" = ")) && !bytes.Contains(got, []byte("\n# "+leaf+" = ")) {
			t.Errorf("key %s is not in the example file", name)
		}
		if !bytes.Contains(got, []byte(envName(name))) {
			t.Errorf("environment variable of %s is not in the example file", name)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := mustLoad(t, LoadOptions{})
	if c.DataDir != "./data" || c.HTTP.Port != 8420 || c.HTTP.BindAddress != "127.0.0.1" ||
		c.HTTP.MetricsEnabled || !c.Security.AuditLogEnabled || c.LLM.Provider != "none" ||
		c.Decay.BackgroundIntervalSecs != 3600 || c.Dream.BackgroundIntervalSecs != 86400 ||
		c.RateLimit.RequestsPerSecond != 100 || c.RateLimit.Burst != 50 ||
		c.Log.Level != "info" || c.Log.Format != "pretty" || c.Working.Capacity != 7 ||
		c.GRPC.Port != nil || c.Auth.Enabled || len(c.Auth.APIKeys) != 0 ||
		c.Decay.PruneBelow != 0 || c.Decay.StabilityDays != (StabilityDays{Episodic: 1, Semantic: 30, Procedural: 90, Emotional: 14}) {
		t.Fatalf("unexpected defaults: %+v", c)
	}
	if got := c.AuditLogPath(); got != filepath.Join("data", "audit.jsonl") {
		t.Errorf("AuditLogPath = %q", got)
	}
	if !c.PersistSearchIndexes() {
		t.Error("search indexes should persist without store encryption")
	}
	if c.IndexSnapshotsForbidden() {
		t.Error("index snapshots forbidden without persist_search_indexes set")
	}
}

// mustLoad loads opts, which must succeed.
func mustLoad(t *testing.T, opts LoadOptions) *Config {
	t.Helper()
	c, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "memsvc.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPrecedence(t *testing.T) {
	file := writeFile(t, `
data_dir = "/from/file"
[http]
port = 9001
bind_address = "::1"
[log]
level = "debug"
`)
	c := mustLoad(t, LoadOptions{
		File:    file,
		Environ: []string{"MEMSVC_HTTP__PORT=9002", "MEMSVC_LOG__FORMAT=json", "PATH=/bin"},
		Overrides: []Override{
			{Key: "http.port", Value: "9003", Flag: "--port"},
		},
	})
	if c.DataDir != "/from/file" || c.HTTP.BindAddress != "::1" || c.Log.Level != "debug" {
		t.Errorf("file values lost: %+v", c)
	}
	if c.Log.Format != "json" {
		t.Errorf("env did not override default: %q", c.Log.Format)
	}
	if c.HTTP.Port != 9003 {
		t.Errorf("flag did not win: port %d", c.HTTP.Port)
	}
	if c.Sources["http.port"] != "--port" || c.Sources["log.format"] != "MEMSVC_LOG__FORMAT" || c.Sources["data_dir"] != file {
		t.Errorf("sources: %v", c.Sources)
	}

	c = mustLoad(t, LoadOptions{File: file, Environ: []string{"MEMSVC_HTTP__PORT=9002"}})
	if c.HTTP.Port != 9002 {
		t.Errorf("env did not beat file: %d", c.HTTP.Port)
	}
}

func TestEnvironment(t *testing.T) {
	c := mustLoad(t, LoadOptions{Environ: []string{
		"MEMSVC_AUTH__ENABLED=true",
		"MEMSVC_AUTH_API_KEYS= k1 , k2,",
		"MEMSVC_HTTP_TRUSTED_PROXY_CIDRS=10.0.0.0/8, fd00::/8",
		`MEMSVC_HTTP__CORS_ORIGINS=["https://a.example", "https://b.example"]`,
		"MEMSVC_GRPC__PORT=8421",
		"MEMSVC_GRPC__PORT=9999", // a duplicate: the first entry wins, as for os.Getenv
		"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=correct horse",
		"MEMSVC_DATA_DIR=/srv/memsvc",
		"MEMSVC_SERVER_URL=http://127.0.0.1:1", // a client variable, not config
	}})
	if !c.Auth.Enabled || !reflect.DeepEqual(c.Auth.APIKeys, []string{"k1", "k2"}) {
		t.Errorf("auth: %+v", c.Auth)
	}
	if !reflect.DeepEqual(c.HTTP.TrustedProxyCIDRs, []string{"10.0.0.0/8", "fd00::/8"}) {
		t.Errorf("cidrs: %v", c.HTTP.TrustedProxyCIDRs)
	}
	if !reflect.DeepEqual(c.HTTP.CORSOrigins, []string{"https://a.example", "https://b.example"}) {
		t.Errorf("cors: %v", c.HTTP.CORSOrigins)
	}
	if c.GRPC.Port == nil || *c.GRPC.Port != 8421 {
		t.Errorf("grpc port: %v", c.GRPC.Port)
	}
	if c.DataDir != "/srv/memsvc" {
		t.Errorf("data dir: %q", c.DataDir)
	}
	if c.PersistSearchIndexes() {
		t.Error("search indexes must default to memory while store encryption is on")
	}
	if c.IndexSnapshotsForbidden() {
		t.Error("sealed index snapshots forbidden by default while store encryption is on")
	}
}

// TestPersistSearchIndexesExplicit: persist_search_indexes set explicitly
// decides whether indexes are kept in plaintext, encryption or not, and
// only an explicit false forbids sealed snapshots too.
func TestPersistSearchIndexesExplicit(t *testing.T) {
	for _, tc := range []struct {
		env                []string
		persist, forbidden bool
	}{
		{[]string{"MEMSVC_SECURITY__PERSIST_SEARCH_INDEXES=false"}, false, true},
		{[]string{"MEMSVC_SECURITY__PERSIST_SEARCH_INDEXES=true",
			"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=correct horse"}, true, false},
		{[]string{"MEMSVC_SECURITY__PERSIST_SEARCH_INDEXES=false",
			"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=correct horse"}, false, true},
	} {
		c := mustLoad(t, LoadOptions{Environ: tc.env})
		if c.PersistSearchIndexes() != tc.persist || c.IndexSnapshotsForbidden() != tc.forbidden {
			t.Errorf("%q: PersistSearchIndexes %v, IndexSnapshotsForbidden %v; want %v, %v",
				tc.env, c.PersistSearchIndexes(), c.IndexSnapshotsForbidden(), tc.persist, tc.forbidden)
		}
	}
}

// TestDecayKeys: the decay model's parameters load from a file (integers
// and floats alike) and from MEMSVC_DECAY__... variables, which win.
func TestDecayKeys(t *testing.T) {
	file := writeFile(t, `
[decay]
prune_below = 0.01
[decay.stability_days]
episodic = 2
semantic = 45.5
`)
	c := mustLoad(t, LoadOptions{File: file, Environ: []string{
		"MEMSVC_DECAY__STABILITY_DAYS__EPISODIC=0.5",
		"MEMSVC_DECAY__STABILITY_DAYS__EMOTIONAL= 7 ",
		"MEMSVC_DECAY__PRUNE_BELOW=0.05",
	}})
	want := Decay{BackgroundIntervalSecs: 3600, PruneBelow: 0.05,
		StabilityDays: StabilityDays{Episodic: 0.5, Semantic: 45.5, Procedural: 90, Emotional: 7}}
	if c.Decay != want {
		t.Fatalf("decay %+v, want %+v", c.Decay, want)
	}
	if c.Sources["decay.stability_days.semantic"] != file || c.Sources["decay.stability_days.episodic"] != "MEMSVC_DECAY__STABILITY_DAYS__EPISODIC" {
		t.Errorf("sources: %v", c.Sources)
	}
}

func TestHomeExpansion(t *testing.T) {
	c := mustLoad(t, LoadOptions{Environ: []string{"HOME=/home/ada", "MEMSVC_DATA_DIR=~/memsvc"}})
	if c.DataDir != "/home/ada/memsvc" {
		t.Errorf("data dir %q", c.DataDir)
	}
}

// TestErrors checks that every kind of mistake is refused with a message
// naming the key, the source and what is accepted.
func TestErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.toml")
	tests := []struct {
		name    string
		opts    LoadOptions
		wantAll []string
	}{
		{"missing file", LoadOptions{File: missing}, []string{missing, "does not exist"}},
		{"syntax", LoadOptions{File: writeFile(t, "[http\nport = 1")}, []string{"line 1"}},
		{"unknown key", LoadOptions{File: writeFile(t, "[http]\nprot = 1\n")}, []string{"http.prot", "unknown key"}},
		{"unknown key suggestion", LoadOptions{File: writeFile(t, "[server]\nport = 1\n")}, []string{"server.port", "did you mean http.port"}},
		{"wrong type", LoadOptions{File: writeFile(t, "[http]\nport = \"8420\"\n")}, []string{"http.port", "want a whole number", `"8420"`}},
		{"port range", LoadOptions{File: writeFile(t, "[http]\nport = 70000\n")}, []string{"http.port", "between 0 and 65535", "70000"}},
		{"env not a number", LoadOptions{Environ: []string{"MEMSVC_HTTP__PORT=eighty"}}, []string{"http.port", "whole number", `"eighty"`}},
		{"env bool", LoadOptions{Environ: []string{"MEMSVC_AUTH__ENABLED=yes please"}}, []string{"auth.enabled", "true or false"}},
		{"env unknown", LoadOptions{Environ: []string{"MEMSVC_HTTP__PROT=1"}}, []string{"MEMSVC_HTTP__PROT", "not a memsvc configuration variable"}},
		{"env single underscore", LoadOptions{Environ: []string{"MEMSVC_LOG_LEVEL=debug"}}, []string{"MEMSVC_LOG_LEVEL", "did you mean MEMSVC_LOG__LEVEL"}},
		{"log level", LoadOptions{Environ: []string{"MEMSVC_LOG__LEVEL=INFO"}}, []string{"log.level", "trace, debug, info, warn, error", `"INFO"`}},
		{"log format", LoadOptions{File: writeFile(t, "[log]\nformat = \"xml\"\n")}, []string{"log.format", "pretty, json"}},
		{"llm provider", LoadOptions{File: writeFile(t, "[llm]\nprovider = \"openai\"\n")}, []string{"llm.provider", `"openai"`, `set llm.provider = "none"`}},
		{"llm unknown", LoadOptions{File: writeFile(t, "[llm]\nprovider = \"cohere\"\n")}, []string{"llm.provider", `only accepted value is "none"`}},
		{"bind hostname", LoadOptions{File: writeFile(t, "[http]\nbind_address = \"example.com\"\n")}, []string{"http.bind_address", "IP address", "localhost"}},
		{"cidr", LoadOptions{Environ: []string{"MEMSVC_HTTP_TRUSTED_PROXY_CIDRS=10.0.0.1"}}, []string{"http.trusted_proxy_cidrs", "CIDR", `"10.0.0.1"`}},
		{"auth without keys", LoadOptions{Environ: []string{"MEMSVC_AUTH__ENABLED=true"}}, []string{"auth.api_keys", "MEMSVC_AUTH_API_KEYS"}},
		{"blank key", LoadOptions{File: writeFile(t, "[auth]\napi_keys = [\"a\", \"  \"]\n")}, []string{"auth.api_keys", "key 2 is blank"}},
		{"blank passphrase", LoadOptions{Environ: []string{"MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=  "}}, []string{"security.store_encryption_passphrase", "must not be blank"}},
		{"kdf memory low", LoadOptions{Environ: []string{"MEMSVC_SECURITY__STORE_KDF_MEMORY_MIB=8"}}, []string{"security.store_kdf_memory_mib", "19 to 1024 MiB", "got 8"}},
		{"kdf memory high", LoadOptions{File: writeFile(t, "[security]\nstore_kdf_memory_mib = 4096\n")}, []string{"security.store_kdf_memory_mib", "19 to 1024 MiB", "got 4096"}},
		{"kdf passes", LoadOptions{File: writeFile(t, "[security]\nstore_kdf_iterations = 1\n")}, []string{"security.store_kdf_iterations", "2 to 64 passes", "got 1"}},
		{"kdf lanes", LoadOptions{Environ: []string{"MEMSVC_SECURITY__STORE_KDF_PARALLELISM=0"}}, []string{"security.store_kdf_parallelism", "1 to 64 lanes", "got 0"}},
		{"kdf lanes high", LoadOptions{Environ: []string{"MEMSVC_SECURITY__STORE_KDF_PARALLELISM=65"}}, []string{"security.store_kdf_parallelism", "1 to 64 lanes", "got 65"}},
		{"grpc equals http", LoadOptions{Environ: []string{"MEMSVC_GRPC__PORT=8420"}}, []string{"grpc.port", "differ from http.port"}},
		{"tls half", LoadOptions{File: writeFile(t, "[grpc]\ntls_cert_path = \"/c.pem\"\n")}, []string{"grpc.tls_cert_path", "set together"}},
		{"zero interval", LoadOptions{File: writeFile(t, "[decay]\nbackground_interval_secs = 0\n")}, []string{"decay.background_interval_secs", "at least 1"}},
		{"zero burst", LoadOptions{Environ: []string{"MEMSVC_RATE_LIMIT__BURST=0"}}, []string{"rate_limit.burst"}},
		{"blank data dir", LoadOptions{Overrides: []Override{{Key: "data_dir", Value: " ", Flag: "--data-dir"}}}, []string{"data_dir", "--data-dir", "blank"}},
		{"table for scalar", LoadOptions{File: writeFile(t, "[http.port]\nx = 1\n")}, []string{"http.port", "want a whole number", "a table"}},
		{"import limit", LoadOptions{File: writeFile(t, "max_import_bytes = 4096\n")}, []string{"max_import_bytes", "at least 1048576", "4096"}},
		{"working capacity", LoadOptions{File: writeFile(t, "[working]\ncapacity = 0\n")}, []string{"working.capacity", "between 1 and 10000"}},
		{"prune above dormant", LoadOptions{File: writeFile(t, "[decay]\nprune_below = 0.2\n")}, []string{"decay.prune_below", "between 0 (never prune) and 0.05", "got 0.2"}},
		{"negative prune", LoadOptions{Environ: []string{"MEMSVC_DECAY__PRUNE_BELOW=-0.01"}}, []string{"decay.prune_below", "MEMSVC_DECAY__PRUNE_BELOW", "got -0.01"}},
		{"prune NaN", LoadOptions{Environ: []string{"MEMSVC_DECAY__PRUNE_BELOW=NaN"}}, []string{"decay.prune_below", "got NaN"}},
		{"prune not a number", LoadOptions{Environ: []string{"MEMSVC_DECAY__PRUNE_BELOW=low"}}, []string{"decay.prune_below", "want a number", `"low"`}},
		{"prune wrong type", LoadOptions{File: writeFile(t, "[decay]\nprune_below = \"0.01\"\n")}, []string{"decay.prune_below", "want a number", `"0.01"`}},
		{"zero stability", LoadOptions{File: writeFile(t, "[decay.stability_days]\nepisodic = 0\n")}, []string{"decay.stability_days.episodic", "positive number of days", "got 0"}},
		{"negative stability", LoadOptions{Environ: []string{"MEMSVC_DECAY__STABILITY_DAYS__SEMANTIC=-3"}}, []string{"decay.stability_days.semantic", "positive number of days"}},
		{"infinite stability", LoadOptions{File: writeFile(t, "[decay.stability_days]\nprocedural = inf\n")}, []string{"decay.stability_days.procedural", "positive number of days", "+Inf"}},
		{"stability unknown store", LoadOptions{File: writeFile(t, "[decay.stability_days]\nworking = 2\n")}, []string{"decay.stability_days.working", "unknown key"}},
		{"stability single underscore", LoadOptions{Environ: []string{"MEMSVC_DECAY_STABILITY_DAYS_EMOTIONAL=3"}}, []string{"did you mean MEMSVC_DECAY__STABILITY_DAYS__EMOTIONAL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { loadInvalid(t, tt.opts, tt.wantAll) })
	}
}

// loadInvalid loads opts, which must fail with ErrInvalid and an error
// that mentions every string of wantAll, and returns the error.
func loadInvalid(t *testing.T, opts LoadOptions, wantAll []string) error {
	t.Helper()
	_, err := Load(opts)
	if err == nil {
		t.Fatal("no error")
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("error %v does not match ErrInvalid", err)
	}
	for _, want := range wantAll {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	return err
}

func TestSecretsNotEchoed(t *testing.T) {
	_, err := Load(LoadOptions{File: writeFile(t, "[auth]\napi_keys = \"hunter2-secret\"\n")})
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error echoes a secret: %v", err)
	}
	// A list of keys that does not parse (found by FuzzLoad).
	_, err = Load(LoadOptions{Environ: []string{`MEMSVC_AUTH_API_KEYS=["hunter2-secret"`}})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error echoes a secret: %v", err)
	}
	// A list that is not secret is still quoted.
	_, err = Load(LoadOptions{Environ: []string{`MEMSVC_HTTP__TRUSTED_PROXY_CIDRS=["10.0.0.0/8"`}})
	if err == nil || !strings.Contains(err.Error(), "10.0.0.0/8") {
		t.Fatalf("error does not quote the bad list: %v", err)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "[::1]": true, "localhost": true, "LOCALHOST": true,
		"0.0.0.0": false, "::": false, "10.0.0.1": false, "example.com": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}

// TestUIEnabled: the inspector is on by default on loopback only, and the
// key decides when it is set, from the file or the environment.
func TestUIEnabled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    bool
	}{
		{"loopback default", nil, true},
		{"any address default", []string{"MEMSVC_HTTP__BIND_ADDRESS=0.0.0.0"}, false},
		{"any address enabled", []string{"MEMSVC_HTTP__BIND_ADDRESS=0.0.0.0", "MEMSVC_HTTP__UI_ENABLED=true"}, true},
		{"loopback disabled", []string{"MEMSVC_HTTP__UI_ENABLED=false"}, false},
	} {
		c, err := Load(LoadOptions{Environ: tc.environ})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := c.UIEnabled(); got != tc.want {
			t.Errorf("%s: UIEnabled() = %v, want %v", tc.name, got, tc.want)
		}
	}
	c, err := Load(LoadOptions{File: writeFile(t, "[http]\nui_enabled = false\n")})
	if err != nil {
		t.Fatal(err)
	}
	if c.UIEnabled() {
		t.Error("ui_enabled = false in the file left the inspector on")
	}
}

// TestStoreKDFKeys: the key derivation keys default to OWASP's
// recommended Argon2id setting and load from the file and the
// environment.
func TestStoreKDFKeys(t *testing.T) {
	c := mustLoad(t, LoadOptions{})
	if want := (StoreKDF{MemoryMiB: 19, Iterations: 2, Parallelism: 1}); c.Security.StoreKDF != want {
		t.Errorf("defaults %+v, want %+v", c.Security.StoreKDF, want)
	}
	c = mustLoad(t, LoadOptions{
		File:    writeFile(t, "[security]\nstore_kdf_memory_mib = 64\nstore_kdf_iterations = 3\n"),
		Environ: []string{"MEMSVC_SECURITY__STORE_KDF_PARALLELISM=4"},
	})
	if want := (StoreKDF{MemoryMiB: 64, Iterations: 3, Parallelism: 4}); c.Security.StoreKDF != want {
		t.Errorf("set %+v, want %+v", c.Security.StoreKDF, want)
	}
	if Live("security.store_kdf_memory_mib") {
		t.Error("store_kdf_memory_mib is live; it only applies when a directory's encryption starts")
	}
}
