package access

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"memsvc.dev/memsvc/pkg/memory"
)

func mustScope(t *testing.T, names ...string) Scope {
	t.Helper()
	s, err := ParseScope(names)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseScope(t *testing.T) {
	if s := mustScope(t, "*"); !s.All() || s.Names() != nil || !s.Allows("anything") {
		t.Errorf(`["*"]: %v`, s)
	}
	s := mustScope(t, "b", "a", "b")
	if s.All() || !slices.Equal(s.Names(), []string{"a", "b"}) || s.String() != `["a", "b"]` {
		t.Errorf("[b a b]: %v %v", s.Names(), s)
	}
	if !s.Allows("a") || !s.Allows("b") || s.Allows("c") || s.Allows(memory.DefaultNamespace) || s.Allows("") {
		t.Errorf("Allows of %v is wrong", s)
	}
	for _, bad := range [][]string{nil, {}, {"*", "a"}, {"a", "*"}, {"A"}, {""}, {"a b"}} {
		if _, err := ParseScope(bad); err == nil {
			t.Errorf("ParseScope(%q) accepted", bad)
		}
	}
	if (Scope{}).Allows(memory.DefaultNamespace) {
		t.Error("the zero Scope allows the default namespace")
	}
}

func TestScopeResolve(t *testing.T) {
	all, one, two, withDefault := AllNamespaces(), mustScope(t, "proj-a"), mustScope(t, "a", "b"), mustScope(t, "default", "a")
	for _, tc := range []struct {
		scope     Scope
		requested string
		want      string
		forbidden bool
	}{
		{all, "", memory.DefaultNamespace, false},
		{all, "x", "x", false},
		// A key bound to one namespace uses it when the call names none.
		{one, "", "proj-a", false},
		{one, "proj-a", "proj-a", false},
		{one, "default", "", true},
		{one, "proj-b", "", true},
		// Bound to several: naming none means default, which it may not use.
		{two, "", "", true},
		{two, "b", "b", false},
		{two, "c", "", true},
		{withDefault, "", memory.DefaultNamespace, false},
		{withDefault, "a", "a", false},
	} {
		got, err := tc.scope.Resolve(tc.requested)
		if tc.forbidden {
			if !errors.Is(err, memory.ErrForbidden) {
				t.Errorf("%v.Resolve(%q) = %q, %v; want FORBIDDEN", tc.scope, tc.requested, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v.Resolve(%q) = %q, %v; want %q", tc.scope, tc.requested, got, err, tc.want)
		}
	}
	_, err := two.Resolve("")
	if err == nil || !strings.Contains(err.Error(), "X-Memsvc-Namespace") {
		t.Errorf("a call naming no namespace with a key that may not use default: %v; want a hint to name one", err)
	}
	_, err = two.Resolve("c")
	if err == nil || !strings.Contains(err.Error(), `"c"`) {
		t.Errorf("forbidden namespace c: %v; want the error to name it", err)
	}
}

func TestScopeRequireAll(t *testing.T) {
	if err := AllNamespaces().RequireAll("stats"); err != nil {
		t.Error(err)
	}
	err := mustScope(t, "a").RequireAll("stats of all namespaces")
	if !errors.Is(err, memory.ErrForbidden) || !strings.Contains(err.Error(), "stats of all namespaces") {
		t.Errorf("bound key: %v", err)
	}
}

func TestScopeVisible(t *testing.T) {
	list := []memory.NamespaceInfo{
		{Name: "default", TotalRecords: 3},
		{Name: "a", TotalRecords: 1},
		{Name: "c", TotalRecords: 7},
	}
	if got := AllNamespaces().Visible(list); len(got) != 3 {
		t.Errorf("all: %v", got)
	}
	got := mustScope(t, "c", "b", "a").Visible(list)
	var names []string
	for _, n := range got {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Fatalf("bound to a, b, c: %v", names)
	}
	if got[0].TotalRecords != 1 || got[2].TotalRecords != 7 {
		t.Errorf("counts changed: %+v", got)
	}
	if got[1].TotalRecords != 0 || len(got[1].RecordsByStore) != len(memory.AllStores) {
		t.Errorf("an empty bound namespace: %+v", got[1])
	}
}

func TestIdentify(t *testing.T) {
	k, err := NewScopedKeyring([]Key{
		{Secret: "all-key", Scope: AllNamespaces()},
		{Secret: "a-key", Scope: mustScope(t, "a")},
		{Secret: "ab-key", Scope: mustScope(t, "a", "b")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want Scope
	}{
		{"all-key", AllNamespaces()},
		{"a-key", mustScope(t, "a")},
		{"ab-key", mustScope(t, "b", "a")},
	} {
		id, err := k.Identify("Bearer "+tc.key, "send a key")
		if err != nil || !id.Scope.Equal(tc.want) || id.ClientKey == "" {
			t.Errorf("%s: %+v %v", tc.key, id, err)
		}
	}
	if _, err := k.Identify("Bearer b-key", "send a key"); !errors.Is(err, memory.ErrUnauthorized) {
		t.Errorf("unknown key: %v", err)
	}
	var off *Keyring
	if id, err := off.Identify("", "x"); err != nil || !id.Scope.All() || id.ClientKey != "" {
		t.Errorf("authentication off: %+v %v", id, err)
	}
}

// TestGateIdentity: Gate.Admit returns the caller's identity from the
// policy that admitted it, so a swap rebinds a key's namespaces for every
// call admitted after it; a refused call has no identity.
func TestGateIdentity(t *testing.T) {
	ring := func(scope Scope) *Keyring {
		k, err := NewScopedKeyring([]Key{{Secret: "project-key", Scope: scope}, {Secret: "admin-key", Scope: AllNamespaces()}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	addr := at(netip.MustParseAddr("192.0.2.7"))
	rate := RateLimit{RequestsPerSecond: 100, Burst: 100}
	g := NewGate(Policy{Keys: ring(mustScope(t, "a")), Rate: rate}, nil)
	id, err := g.Admit(addr, "Bearer project-key", "send a key")
	if err != nil || !id.Scope.Equal(mustScope(t, "a")) || id.ClientKey == "" {
		t.Fatalf("before the swap: %+v %v, want namespaces [a]", id, err)
	}
	if ns, err := id.Scope.Resolve(""); err != nil || ns != "a" {
		t.Fatalf("before the swap, no namespace named: %q %v, want a", ns, err)
	}
	g.SetPolicy(Policy{Keys: ring(mustScope(t, "b", "c")), Rate: rate})
	id2, err := g.Admit(addr, "Bearer project-key", "send a key")
	if err != nil || !id2.Scope.Equal(mustScope(t, "b", "c")) || id2.ClientKey != id.ClientKey {
		t.Fatalf("after the swap: %+v %v, want namespaces [b c] and the same client key", id2, err)
	}
	if _, err := id2.Scope.Resolve("a"); !errors.Is(err, memory.ErrForbidden) {
		t.Fatalf("after the swap, namespace a: %v, want FORBIDDEN", err)
	}
	if id, err := g.Admit(addr, "Bearer admin-key", "send a key"); err != nil || !id.Scope.All() {
		t.Fatalf("admin key: %+v %v", id, err)
	}
	if id, err := g.Admit(addr, "Bearer no-such-key", "send a key"); !errors.Is(err, memory.ErrUnauthorized) || id.ClientKey != "" || id.Scope.Allows(memory.DefaultNamespace) {
		t.Fatalf("unknown key: %+v %v", id, err)
	}
	// Without rate limiting too.
	g.SetPolicy(Policy{Keys: ring(mustScope(t, "d"))})
	if id, err := g.Admit(addr, "Bearer project-key", "send a key"); err != nil || !id.Scope.Equal(mustScope(t, "d")) {
		t.Fatalf("no rate limit: %+v %v", id, err)
	}
}

func TestScopedKeyringRefusals(t *testing.T) {
	if _, err := NewScopedKeyring(nil); err == nil {
		t.Error("no keys accepted")
	}
	a := mustScope(t, "a")
	if _, err := NewScopedKeyring([]Key{{Secret: "k1", Scope: a}, {Secret: " ", Scope: a}}); err == nil || !strings.Contains(err.Error(), "API key 2 is blank") {
		t.Errorf("blank key: %v", err)
	}
	_, err := NewScopedKeyring([]Key{{Secret: "same-key", Scope: AllNamespaces()}, {Secret: "other", Scope: a}, {Secret: "same-key", Scope: a}})
	if err == nil || !strings.Contains(err.Error(), "API key 3 repeats key 1") || strings.Contains(err.Error(), "same-key") {
		t.Errorf("a key with two scopes: %v", err)
	}
	// The same key twice with the same scope is harmless (auth.api_keys
	// has always allowed it).
	if _, err := NewKeyring([]string{"dup", "dup"}); err != nil {
		t.Errorf("a repeated key of one scope: %v", err)
	}
}

func TestScopeCheckExportImport(t *testing.T) {
	ab := mustScope(t, "a", "b")
	for _, tc := range []struct {
		scope Scope
		names []string
		code  memory.Code // "" for allowed
	}{
		{ab, nil, ""},
		{ab, []string{"a"}, ""},
		{ab, []string{"b", "a"}, ""},
		{ab, []string{"a", "c"}, memory.CodeForbidden},
		{ab, []string{"*"}, memory.CodeForbidden},
		{AllNamespaces(), []string{"*"}, ""},
		{AllNamespaces(), []string{"c", "default"}, ""},
		{AllNamespaces(), []string{"*", "a"}, memory.CodeValidation},
		{AllNamespaces(), []string{"a", "Bad"}, memory.CodeValidation},
	} {
		err := tc.scope.CheckExport(tc.names)
		if tc.code == "" && err != nil || tc.code != "" && memory.CodeOf(err) != tc.code {
			t.Errorf("%v.CheckExport(%q) = %v, want %q", tc.scope, tc.names, err, tc.code)
		}
	}
	if err := ab.CheckExport([]string{"a", "Bad"}); err == nil || !strings.Contains(err.Error(), "namespaces[1]") {
		t.Errorf("a bad name is not named by its position: %v", err)
	}
	if err := ab.CheckImport(false); err != nil {
		t.Error(err)
	}
	if err := ab.CheckImport(true); !errors.Is(err, memory.ErrForbidden) || !strings.Contains(err.Error(), "preserve_namespaces") {
		t.Errorf("preserve_namespaces with a bound key: %v", err)
	}
	if err := AllNamespaces().CheckImport(true); err != nil {
		t.Error(err)
	}
}
