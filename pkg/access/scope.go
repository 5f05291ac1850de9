package access

import (
	"fmt"
	"slices"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
)

// AnyNamespace is the namespace list entry that binds a key to every
// namespace, the ones created later included.
const AnyNamespace = "*"

// Scope is the set of namespaces an API key may use: all of them, or a
// fixed list. The zero Scope allows none; keys get theirs from
// ParseScope or AllNamespaces.
type Scope struct {
	all   bool
	names []string // sorted, without duplicates
}

// AllNamespaces is the scope of keys that may use every namespace: those
// of auth.api_keys, keys bound to "*", and every caller when
// authentication is off.
func AllNamespaces() Scope { return Scope{all: true} }

// ParseScope reads a key's namespace list: names that pass
// memory.ValidateNamespace, or "*" alone for every namespace. An empty
// list is refused: a key that may use no namespace can do nothing.
func ParseScope(names []string) (Scope, error) {
	if len(names) == 0 {
		return Scope{}, fmt.Errorf(`no namespaces; list the namespaces the key may use, or "*" for all of them`)
	}
	var s Scope
	for _, n := range names {
		if n == AnyNamespace {
			if len(names) > 1 {
				return Scope{}, fmt.Errorf(`"*" already means every namespace; list it alone`)
			}
			return AllNamespaces(), nil
		}
		if err := memory.ValidateNamespace(n); err != nil {
			return Scope{}, err
		}
		s.names = append(s.names, n)
	}
	slices.Sort(s.names)
	s.names = slices.Compact(s.names)
	return s, nil
}

// All reports whether the scope holds every namespace.
func (s Scope) All() bool { return s.all }

// Names returns the namespaces of a bound scope in order; nil when the
// scope holds every namespace.
func (s Scope) Names() []string { return slices.Clone(s.names) }

// Allows reports whether the scope holds namespace ns.
func (s Scope) Allows(ns string) bool {
	if s.all {
		return true
	}
	_, found := slices.BinarySearch(s.names, ns)
	return found
}

// Equal reports whether two scopes hold the same namespaces.
func (s Scope) Equal(o Scope) bool { return s.all == o.all && slices.Equal(s.names, o.names) }

// String is the scope as a configuration file lists it.
func (s Scope) String() string {
	if s.all {
		return `["*"]`
	}
	q := make([]string, len(s.names))
	for i, n := range s.names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Resolve decides the namespace of a call that named requested (already
// checked with memory.ValidateNamespace by the transport, which knows
// where it came from), or none (""). A call that names none acts in the
// default namespace, except that a key bound to exactly one namespace acts
// in that one: a client that knows nothing of namespaces, given such a
// key, is confined to it without sending anything new. A namespace outside
// the scope is FORBIDDEN.
func (s Scope) Resolve(requested string) (string, error) {
	ns := requested
	if ns == "" {
		ns = memory.DefaultNamespace
		if !s.all && len(s.names) == 1 {
			ns = s.names[0]
		}
	}
	if s.Allows(ns) {
		return ns, nil
	}
	if requested == "" {
		return "", memory.Errorf(memory.CodeForbidden, "this API key may not use the default namespace, and the request names no other; "+
			"name one of the key's namespaces in the X-Memsvc-Namespace header (gRPC: memsvc-namespace metadata; CLI: --namespace)")
	}
	return "", memory.Forbidden(ns)
}

// RequireAll refuses a scope that does not hold every namespace, for an
// operation (what, e.g. "stats of all namespaces") that reaches across
// them.
func (s Scope) RequireAll(what string) error {
	if s.all {
		return nil
	}
	return memory.Errorf(memory.CodeForbidden, "%s: this API key is bound to namespaces %s and may not see the others; "+
		"use a key of auth.api_keys, or one bound to \"*\"", what, s)
}

// Visible keeps the namespaces of list that the scope holds. For a bound
// scope, every namespace it holds is listed, with zero counts where the
// service listed none (nothing stored yet), so a key's holder sees where
// it may work; the answer is in name order.
func (s Scope) Visible(list []memory.NamespaceInfo) []memory.NamespaceInfo {
	if s.all {
		return list
	}
	out := make([]memory.NamespaceInfo, 0, len(s.names))
	for _, info := range list {
		if s.Allows(info.Name) {
			out = append(out, info)
		}
	}
	for _, n := range s.names {
		if !slices.ContainsFunc(out, func(i memory.NamespaceInfo) bool { return i.Name == n }) {
			empty := memory.NamespaceInfo{Name: n, RecordsByStore: make(map[string]uint32, len(memory.AllStores))}
			for _, st := range memory.AllStores {
				empty.RecordsByStore[st.String()] = 0
			}
			out = append(out, empty)
		}
	}
	slices.SortFunc(out, func(a, b memory.NamespaceInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// CheckExport authorises the namespaces an export names
// (memory.ExportRequest.Namespaces): none is the request's own namespace,
// which admission checked; "*" alone is every namespace, for a scope that
// holds them all; otherwise each name must be valid and in the scope.
func (s Scope) CheckExport(names []string) error {
	for i, n := range names {
		if n == AnyNamespace {
			if len(names) > 1 {
				return memory.Invalid("namespaces", `"*" already means every namespace; list it alone`)
			}
			return s.RequireAll("export of every namespace")
		}
		if err := memory.ValidateNamespace(n); err != nil {
			return memory.Invalid(fmt.Sprintf("namespaces[%d]", i), "%s", strings.TrimPrefix(err.Error(), "namespace: "))
		}
		if !s.Allows(n) {
			return memory.Forbidden(n)
		}
	}
	return nil
}

// CheckImport authorises an import that keeps the archive's namespaces
// (memory.ImportRequest.PreserveNamespaces): it may write into any of
// them, so only a scope that holds every namespace may ask for it.
func (s Scope) CheckImport(preserve bool) error {
	if !preserve {
		return nil
	}
	return s.RequireAll("import into the archive's own namespaces (preserve_namespaces)")
}
