package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Change is one key whose value differs between two configurations.
type Change struct {
	// Key is the key's name ("rate_limit.burst").
	Key string
	// Live reports whether a running serve applies it without a restart.
	Live bool
	// Detail says how the value changed, for a log line: "50 -> 100", or
	// for a secret key only how many values came and went, never one of
	// them ("1 added, 1 removed").
	Detail string
}

// Diff returns the keys whose values differ between old and new, in the
// order of the key table. The configuration a running server reloads goes
// through Load, like the one it started with (file, then environment and
// flags on top, then validation), and Diff tells it what the edit changed:
// the Live changes it can apply, and the others, which need a restart.
func Diff(old, new *Config) []Change {
	var out []Change
	for i := range keys {
		k := &keys[i]
		a, b := reflect.ValueOf(k.field(old)).Elem(), reflect.ValueOf(k.field(new)).Elem()
		if equalValues(a, b) {
			continue
		}
		out = append(out, Change{Key: k.name, Live: k.live, Detail: k.detail(a, b)})
	}
	return out
}

// equalValues compares two values of a key's field: an unset optional key
// differs from every set one, an empty list equals a nil one, and two
// structs (the entries of auth.keys) are equal when all their fields are.
func equalValues(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if !equalValues(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalValues(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalValues(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	}
	return a.Equal(b)
}

// detail describes a change of the key's value from a to b.
func (k *key) detail(a, b reflect.Value) string {
	if !k.secret {
		return showValue(a) + " -> " + showValue(b)
	}
	if a.Kind() != reflect.Slice {
		return "changed (value not shown)"
	}
	was, is := multiset(a), multiset(b)
	added, removed := 0, 0
	for v, n := range is {
		added += max(0, n-was[v])
	}
	for v, n := range was {
		removed += max(0, n-is[v])
	}
	// A key whose namespaces changed is neither added nor removed.
	rebound := rebound(a, b)
	added, removed = added-rebound, removed-rebound
	var parts []string
	if added > 0 {
		parts = append(parts, fmt.Sprintf("%d added", added))
	}
	if removed > 0 {
		parts = append(parts, fmt.Sprintf("%d removed", removed))
	}
	if rebound > 0 {
		parts = append(parts, fmt.Sprintf("%d with other namespaces", rebound))
	}
	if len(parts) == 0 {
		parts = append(parts, "reordered")
	}
	return fmt.Sprintf("%s (%d now)", strings.Join(parts, ", "), b.Len())
}

// multiset counts the items of a list value: strings by their text,
// structs by all their fields. The map only counts; nothing shows it.
func multiset(v reflect.Value) map[string]int {
	m := map[string]int{}
	for i := range v.Len() {
		item := v.Index(i)
		if item.Kind() == reflect.String {
			m[item.String()]++
		} else {
			m[fmt.Sprintf("%#v", item.Interface())]++
		}
	}
	return m
}

// rebound counts the keys of auth.keys (lists a and b of KeyBinding) that
// both lists hold with other namespaces in b; 0 for other lists.
func rebound(a, b reflect.Value) int {
	was, ok := a.Interface().([]KeyBinding)
	if !ok {
		return 0
	}
	is := b.Interface().([]KeyBinding)
	n := 0
	for _, kb := range is {
		i := slices.IndexFunc(was, func(o KeyBinding) bool { return o.Key == kb.Key })
		if i >= 0 && !slices.Equal(was[i].Namespaces, kb.Namespaces) {
			n++
		}
	}
	return n
}

// showValue renders a value as the configuration file would hold it, or
// "unset" for an unset optional key.
func showValue(v reflect.Value) string {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "unset"
		}
		return tomlValue(v.Interface())
	}
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	return tomlValue(p.Interface())
}

// WithLive returns a copy of running with the value of every live key
// taken from loaded: the configuration a running serve works with after
// applying a reload, where the keys that need a restart keep the values
// it started with. Keys, Sources and File are those of loaded.
func WithLive(running, loaded *Config) *Config {
	next := *running
	next.File = loaded.File
	next.Sources = loaded.Sources
	for i := range keys {
		k := &keys[i]
		if !k.live {
			continue
		}
		reflect.ValueOf(k.field(&next)).Elem().Set(reflect.ValueOf(k.field(loaded)).Elem())
	}
	return &next
}
