package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestKeyBindings reads auth.keys from every source: the file as an array
// of tables or inline, and the environment in the compact and TOML forms;
// AccessKeys gives each key its namespaces and the keys of auth.api_keys
// all of them.
func TestKeyBindings(t *testing.T) {
	want := []KeyBinding{
		{Key: "key-of-a-and-b", Namespaces: []string{"a", "b"}},
		{Key: "key-of-all", Namespaces: []string{"*"}},
	}
	for _, tc := range []struct {
		name string
		opts LoadOptions
	}{
		{"tables", LoadOptions{File: writeFile(t, "[auth]\nenabled = true\n\n[[auth.keys]]\nkey = \"key-of-a-and-b\"\nnamespaces = [\"a\", \"b\"]\n\n[[auth.keys]]\nkey = \"key-of-all\"\nnamespaces = [\"*\"]\n")}},
		{"inline", LoadOptions{File: writeFile(t, "[auth]\nenabled = true\nkeys = [{key = \"key-of-a-and-b\", namespaces = [\"a\", \"b\"]}, {key = \"key-of-all\", namespaces = [\"*\"]}]\n")}},
		{"env compact", LoadOptions{Environ: []string{"MEMSVC_AUTH__ENABLED=true", "MEMSVC_AUTH_KEYS=key-of-a-and-b=a+b, key-of-all=*,"}}},
		{"env double underscore", LoadOptions{Environ: []string{"MEMSVC_AUTH__ENABLED=true", "MEMSVC_AUTH__KEYS=key-of-a-and-b=a+b,key-of-all=*"}}},
		{"env TOML", LoadOptions{Environ: []string{"MEMSVC_AUTH__ENABLED=true", `MEMSVC_AUTH_KEYS=[{key="key-of-a-and-b", namespaces=["a","b"]}, {key="key-of-all", namespaces=["*"]}]`}}},
		// The environment wins over the file, as for every key.
		{"env over file", LoadOptions{
			File:    writeFile(t, "[auth]\nenabled = true\n[[auth.keys]]\nkey = \"old\"\nnamespaces = [\"x\"]\n"),
			Environ: []string{"MEMSVC_AUTH_KEYS=key-of-a-and-b=a+b,key-of-all=*"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Auth.Keys, want) {
				t.Errorf("auth.keys = %+v, want %+v", c.Auth.Keys, want)
			}
		})
	}

	// A key may hold '=' (base64 padding): the namespaces follow the last.
	c, err := Load(LoadOptions{Environ: []string{"MEMSVC_AUTH__ENABLED=true", "MEMSVC_AUTH_API_KEYS=every-namespace-key", "MEMSVC_AUTH_KEYS=YWJjZA===proj.x"}})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := c.AccessKeys()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0].Secret != "every-namespace-key" || !keys[0].Scope.All() ||
		keys[1].Secret != "YWJjZA==" || keys[1].Scope.All() || !keys[1].Scope.Allows("proj.x") || keys[1].Scope.Allows("default") {
		t.Errorf("AccessKeys = %+v", keys)
	}
}

// TestKeyBindingErrors: every mistake in auth.keys names the key by its
// position, says what is accepted, and never shows a key.
func TestKeyBindingErrors(t *testing.T) {
	const secret = "hunter2-very-secret"
	file := func(entries string) LoadOptions {
		return LoadOptions{File: writeFile(t, "[auth]\nenabled = true\n"+entries)}
	}
	for _, tc := range []struct {
		name    string
		opts    LoadOptions
		wantAll []string
	}{
		{"no namespaces", file("[[auth.keys]]\nkey = \"" + secret + "\"\n"), []string{"auth.keys", "key 1", "no namespaces"}},
		{"empty namespaces", file("[[auth.keys]]\nkey = \"" + secret + "\"\nnamespaces = []\n"), []string{"key 1", "no namespaces"}},
		{"bad namespace", file("[[auth.keys]]\nkey = \"" + secret + "\"\nnamespaces = [\"Project A\"]\n"), []string{"key 1", "namespaces", "lower-case"}},
		{"star and names", file("[[auth.keys]]\nkey = \"" + secret + "\"\nnamespaces = [\"*\", \"a\"]\n"), []string{"key 1", `"*"`, "alone"}},
		{"blank key", file("[[auth.keys]]\nkey = \" \"\nnamespaces = [\"a\"]\n"), []string{"key 1 is blank"}},
		{"missing key", file("[[auth.keys]]\nnamespaces = [\"a\"]\n"), []string{"key 1 is blank (or missing)"}},
		{"unknown field", file("[[auth.keys]]\nkey = \"" + secret + "\"\nnamespace = [\"a\"]\n"), []string{"entry 1", `unknown field "namespace"`}},
		{"key not a string", file("[[auth.keys]]\nkey = 42\nnamespaces = [\"a\"]\n"), []string{"entry 1", "key: want a string"}},
		{"namespaces not a list", file("[[auth.keys]]\nkey = \"" + secret + "\"\nnamespaces = \"a\"\n"), []string{"entry 1", "namespaces: want a list"}},
		{"not tables", file("keys = \"" + secret + "\"\n"), []string{"auth.keys", "array of tables"}},
		{"repeated", file("[[auth.keys]]\nkey = \"" + secret + "\"\nnamespaces = [\"a\"]\n[[auth.keys]]\nkey = \"other\"\nnamespaces = [\"b\"]\n[[auth.keys]]\nkey = \"" + secret + "\"\nnamespaces = [\"b\"]\n"), []string{"key 3 repeats key 1"}},
		{"also in api_keys", LoadOptions{File: writeFile(t, "[auth]\nenabled = true\napi_keys = [\""+secret+"\"]\n[[auth.keys]]\nkey = \""+secret+"\"\nnamespaces = [\"a\"]\n")}, []string{"key 1 is also in auth.api_keys"}},
		{"env without namespaces", LoadOptions{Environ: []string{"MEMSVC_AUTH_KEYS=" + secret}}, []string{"auth.keys", "MEMSVC_AUTH_KEYS", "entry 1", "KEY=NAMESPACE"}},
		{"env empty namespace", LoadOptions{Environ: []string{"MEMSVC_AUTH_KEYS=" + secret + "=a+"}}, []string{"key 1", "must not be empty"}},
		{"env bad TOML", LoadOptions{Environ: []string{"MEMSVC_AUTH_KEYS=[{key=\"" + secret + "\""}}, []string{"auth.keys", "does not parse as TOML"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
			for _, want := range tc.wantAll {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows a key: %v", err)
			}
		})
	}
}

// TestAuthWithBoundKeysOnly: auth.keys alone is enough to turn
// authentication on.
func TestAuthWithBoundKeysOnly(t *testing.T) {
	c, err := Load(LoadOptions{Environ: []string{"MEMSVC_AUTH__ENABLED=true", "MEMSVC_AUTH_KEYS=k=a"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Auth.APIKeys) != 0 || len(c.Auth.Keys) != 1 {
		t.Errorf("auth = %+v", c.Auth)
	}
}
