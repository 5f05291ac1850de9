package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
)

// FuzzLoad loads an arbitrary TOML file together with arbitrary MEMSVC_
// variables (one NAME=value a line). Load either fails with an *Error that
// never quotes the value of a secret key, or gives a configuration in
// which every key set by the environment came from it (the environment
// wins over the file) and every source is the file or a variable; writing
// that configuration out as TOML and loading it again gives the same
// configuration.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("data_dir = \"/srv/memsvc\"\n[http]\nport = 9000\nbind_address = \"0.0.0.0\"\n[auth]\nenabled = true\napi_keys = [\"k1\", \"k2\"]\n"), "")
	f.Add([]byte("[decay.stability_days]\nepisodic = 0.5\n[grpc]\nport = 9001\n"), "MEMSVC_HTTP__PORT=9001\nMEMSVC_GRPC__PORT=9002")
	f.Add([]byte("[log]\nlevel = \"debug\"\n"), "MEMSVC_LOG__LEVEL=warn\nMEMSVC_AUTH_API_KEYS=a, b,,c\nMEMSVC_AUTH__ENABLED=true")
	f.Add([]byte("[http\nport = 1"), "MEMSVC_LOG_LEVEL=debug")
	f.Add([]byte("[security]\nstore_encryption_passphrase = 5\n"), "MEMSVC_SERVER_URL=http://x")
	f.Add([]byte(""), "MEMSVC_AUTH_API_KEYS=[\"a-long-secret-key\"")
	f.Add([]byte("data_dir = \"~/memsvc\"\n[working]\ncapacity = 0\n"), "MEMSVC_DECAY__PRUNE_BELOW=NaN\nmemsvc_http__port=\"80\"")
	f.Add([]byte(""), "MEMSVC_SECURITY__STORE_ENCRYPTION_PASSPHRASE=\"quoted secret value\"\nMEMSVC_LLM__API_KEY=")
	path := filepath.Join(f.TempDir(), "memsvc.toml")
	f.Fuzz(func(t *testing.T, file []byte, env string) {
		if len(file) > 16<<10 || len(env) > 4<<10 {
			return
		}
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		// HOME comes first (the first entry wins) so that "~/" expands the
		// same way on every load.
		environ := append([]string{"HOME=/home/fuzz"}, strings.Split(env, "\n")...)
		c, err := Load(LoadOptions{File: path, Environ: environ})
		if err != nil {
			checkLoadError(t, err, environ)
			return
		}
		for key, src := range c.Sources {
			if src != path && !slices.ContainsFunc(environ, func(kv string) bool { return strings.HasPrefix(kv, src+"=") }) {
				t.Fatalf("key %s from %q, which is neither the file nor a variable", key, src)
			}
			if src == path && envSets(environ, key) {
				t.Fatalf("key %s came from the file although the environment sets it", key)
			}
		}
		out, ok := renderTOML(t, c)
		if !ok {
			return // a value TOML cannot hold (invalid UTF-8 from a variable)
		}
		if err := os.WriteFile(path, out, 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := Load(LoadOptions{File: path, Environ: environ[:1]})
		if err != nil {
			t.Fatalf("the loaded configuration, written out, does not load: %v\n%s", err, out)
		}
		c.Sources, again.Sources = nil, nil
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("round trip changed the configuration:\n got %+v\nwant %+v\n%s", again, c, out)
		}
	})
}

// checkLoadError: a load error is an *Error and quotes no secret given in
// a variable, as is or escaped (values of at least 8 bytes, so that a short one cannot
// match the message's own words by chance).
func checkLoadError(t *testing.T, err error, environ []string) {
	t.Helper()
	if _, ok := errors.AsType[*Error](err); !ok || !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %v (%T) is not a configuration *Error", err, err)
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		k := envKey(name)
		quoted := strconv.Quote(value)
		if k != nil && k.secret && len(value) >= 8 && (strings.Contains(err.Error(), value) || strings.Contains(err.Error(), quoted[1:len(quoted)-1])) {
			t.Fatalf("error quotes the secret value of %s: %v", name, err)
		}
	}
}

// envKey returns the key a variable sets, or nil.
func envKey(name string) *key {
	upper := strings.ToUpper(name)
	if k, ok := listEnv[upper]; ok {
		return lookup(k)
	}
	rest, ok := strings.CutPrefix(upper, "MEMSVC_")
	if !ok {
		return nil
	}
	return lookup(strings.ToLower(strings.ReplaceAll(rest, "__", ".")))
}

// envSets reports whether a variable sets key.
func envSets(environ []string, key string) bool {
	for _, kv := range environ {
		if name, _, ok := strings.Cut(kv, "="); ok {
			if k := envKey(name); k != nil && k.name == key {
				return true
			}
		}
	}
	return false
}

// renderTOML writes every set key of c as a TOML document. It reports
// false when a string is not valid UTF-8.
func renderTOML(t *testing.T, c *Config) ([]byte, bool) {
	t.Helper()
	doc := map[string]any{}
	for i := range keys {
		k := &keys[i]
		v := reflect.ValueOf(k.field(c)).Elem()
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				continue
			}
			v = v.Elem()
		}
		val := v.Interface()
		if b, ok := val.([]KeyBinding); ok {
			if len(b) == 0 {
				continue // nil and empty load the same: no [[auth.keys]]
			}
			if slices.ContainsFunc(b, func(kb KeyBinding) bool { return !utf8.ValidString(kb.Key) }) {
				return nil, false
			}
			val = keyTables(b)
		}
		if s, ok := val.(string); ok && !utf8.ValidString(s) {
			return nil, false
		}
		if l, ok := val.([]string); ok && slices.ContainsFunc(l, func(s string) bool { return !utf8.ValidString(s) }) {
			return nil, false
		}
		parts := strings.Split(k.name, ".")
		m := doc
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = val
	}
	out, err := toml.Marshal(doc)
	if err != nil {
		t.Fatalf("render the configuration as TOML: %v", err)
	}
	return out, true
}

// keyTables renders [[auth.keys]] under the names the file uses.
func keyTables(b []KeyBinding) []map[string]any {
	out := make([]map[string]any, len(b))
	for i, kb := range b {
		out[i] = map[string]any{"key": kb.Key, "namespaces": kb.Namespaces}
	}
	return out
}
