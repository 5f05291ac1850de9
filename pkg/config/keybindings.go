package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"memsvc.dev/memsvc/pkg/access"
)

// keyBindings reads auth.keys as TOML decodes it: an array of tables,
// each with a string key and a list of namespace strings. Messages never
// show a key.
func keyBindings(v any) ([]KeyBinding, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf(`want an array of tables such as [[auth.keys]] key = "..." namespaces = ["project-a"]`)
	}
	if len(list) == 0 {
		return nil, nil // no bindings, however written: one representation
	}
	out := make([]KeyBinding, 0, len(list))
	for i, item := range list {
		t, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("entry %d: want a table with key and namespaces", i+1)
		}
		var b KeyBinding
		for _, name := range slices.Sorted(maps.Keys(t)) {
			val := t[name]
			switch name {
			case "key":
				s, ok := val.(string)
				if !ok {
					return nil, fmt.Errorf("entry %d: key: want a string", i+1)
				}
				b.Key = s
			case "namespaces":
				names, ok := val.([]any)
				if !ok {
					return nil, fmt.Errorf(`entry %d: namespaces: want a list of strings such as ["project-a"] or ["*"]`, i+1)
				}
				for _, n := range names {
					s, ok := n.(string)
					if !ok {
						return nil, fmt.Errorf(`entry %d: namespaces: want a list of strings such as ["project-a"] or ["*"]`, i+1)
					}
					b.Namespaces = append(b.Namespaces, s)
				}
			default:
				return nil, fmt.Errorf("entry %d: unknown field %q; an entry has key and namespaces", i+1, name)
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// parseKeyBindings reads the environment form of auth.keys into what TOML
// decodes: a TOML array of inline tables, or the compact form
// "KEY=NS[+NS...],KEY2=*". In the compact form the namespaces follow the
// last '=' of an entry (a namespace name holds no '=', a key may), entries
// are separated by commas and blank entries are dropped.
func parseKeyBindings(s string) ([]any, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "[") {
		var doc struct{ V []any }
		if err := unmarshalTOML([]byte("V = "+t), &doc); err != nil {
			return nil, fmt.Errorf(`want KEY=NAMESPACE[+NAMESPACE...] entries separated by commas, or a TOML array such as [{key = "...", namespaces = ["a"]}]; the value does not parse as TOML`)
		}
		return doc.V, nil
	}
	out := []any{}
	for i, item := range strings.Split(t, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		eq := strings.LastIndexByte(item, '=')
		if eq < 0 {
			return nil, fmt.Errorf("entry %d: want KEY=NAMESPACE[+NAMESPACE...], or KEY=* for every namespace", i+1)
		}
		var names []any
		for _, n := range strings.Split(item[eq+1:], "+") {
			names = append(names, strings.TrimSpace(n))
		}
		out = append(out, map[string]any{"key": item[:eq], "namespaces": names})
	}
	return out, nil
}

// checkKeyBindings checks auth.keys: each key is set and bound to a valid
// namespace list, and no key is listed twice, here or in auth.api_keys
// (where it would mean every namespace). Keys are named by position only.
func checkKeyBindings(apiKeys []string, bindings []KeyBinding) string {
	for i, b := range bindings {
		if strings.TrimSpace(b.Key) == "" {
			return fmt.Sprintf("key %d is blank (or missing); every entry needs key and namespaces", i+1)
		}
		if _, err := access.ParseScope(b.Namespaces); err != nil {
			return fmt.Sprintf("key %d: namespaces: %v", i+1, err)
		}
		if slices.Contains(apiKeys, b.Key) {
			return fmt.Sprintf("key %d is also in auth.api_keys, where it may use every namespace; list it in one place only", i+1)
		}
		if j := slices.IndexFunc(bindings[:i], func(o KeyBinding) bool { return o.Key == b.Key }); j >= 0 {
			return fmt.Sprintf("key %d repeats key %d; list each key once, with all its namespaces", i+1, j+1)
		}
	}
	return ""
}

// AccessKeys returns the API keys of the configuration with the namespaces
// each may use: those of auth.api_keys every namespace, then those of
// auth.keys their own (BoundKeys).
func (c *Config) AccessKeys() ([]access.Key, error) {
	bound, err := c.BoundKeys()
	if err != nil {
		return nil, err
	}
	keys := make([]access.Key, 0, len(c.Auth.APIKeys)+len(bound))
	for _, k := range c.Auth.APIKeys {
		keys = append(keys, access.Key{Secret: k, Scope: access.AllNamespaces()})
	}
	return append(keys, bound...), nil
}

// BoundKeys returns the keys of auth.keys with the namespaces each may use.
// It fails only on a configuration that did not pass Validate.
func (c *Config) BoundKeys() ([]access.Key, error) {
	keys := make([]access.Key, 0, len(c.Auth.Keys))
	for i, b := range c.Auth.Keys {
		scope, err := access.ParseScope(b.Namespaces)
		if err != nil {
			return nil, fmt.Errorf("auth.keys: key %d: %w", i+1, err)
		}
		keys = append(keys, access.Key{Secret: b.Key, Scope: scope})
	}
	return keys, nil
}
