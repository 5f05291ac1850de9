package memory

import (
	"context"
	"fmt"
)

// DefaultNamespace holds everything a request that names no namespace
// stores and sees, so clients that know nothing of namespaces, and data
// written before they existed, keep working unchanged.
const DefaultNamespace = "default"

// MaxNamespaceBytes bounds a namespace name.
const MaxNamespaceBytes = 64

// ValidateNamespace checks a namespace name: 1 to 64 bytes of lower-case
// ASCII letters, digits, '.', '_' and '-', starting with a letter or digit
// ([a-z0-9][a-z0-9._-]{0,63}). The rule keeps names safe in file names,
// header values, metric-free logs and URLs without escaping.
func ValidateNamespace(name string) error {
	switch {
	case name == "":
		return Invalid("namespace", "must not be empty")
	case len(name) > MaxNamespaceBytes:
		return Invalid("namespace", "%s is %d bytes long; at most %d are allowed", Quote(name), len(name), MaxNamespaceBytes)
	case !nsFirst(name[0]):
		return Invalid("namespace", "%s must start with a lower-case letter or a digit", Quote(name))
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !nsFirst(c) && c != '.' && c != '_' && c != '-' {
			return Invalid("namespace", "%s holds %s; use lower-case letters, digits, '.', '_' and '-'", Quote(name), fmt.Sprintf("%q", rune(c)))
		}
	}
	return nil
}

func nsFirst(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

type namespaceKey struct{}

// WithNamespace returns a context whose Service calls act in namespace
// name. Transports set it after they have checked that the caller may use
// the namespace; pkg/client sends it to the server with each request. An
// empty name leaves ctx as it is (the default namespace).
func WithNamespace(ctx context.Context, name string) context.Context {
	if name == "" {
		return ctx
	}
	return context.WithValue(ctx, namespaceKey{}, name)
}

// NamespaceFrom returns the namespace a Service call made with ctx acts
// in: the one set with WithNamespace, else DefaultNamespace.
func NamespaceFrom(ctx context.Context) string {
	if ns, ok := ctx.Value(namespaceKey{}).(string); ok && ns != "" {
		return ns
	}
	return DefaultNamespace
}

// NamespaceSet from ctx reports whether ctx names a namespace explicitly.
func NamespaceSet(ctx context.Context) bool {
	ns, ok := ctx.Value(namespaceKey{}).(string)
	return ok && ns != ""
}

// NamespaceInfo describes one namespace in the answer of GET /v1/namespaces.
type NamespaceInfo struct {
	Name string `json:"name"`
	// TotalRecords counts the curated records of every store.
	TotalRecords uint32 `json:"total_records"`
	// RecordsByStore counts curated records per store name.
	RecordsByStore map[string]uint32 `json:"records_by_store"`
	// RawJournalRecords counts raw journal entries.
	RawJournalRecords uint32 `json:"raw_journal_records"`
}

// NamespacesResponse is the answer of GET /v1/namespaces: the namespaces
// the caller may see that hold data (and "default" always), by name.
type NamespacesResponse struct {
	Namespaces []NamespaceInfo `json:"namespaces"`
}

// DropNamespaceRequest deletes a namespace with every record, raw entry
// and setting in it, permanently. Confirm must be true.
type DropNamespaceRequest struct {
	Name    string `json:"name"`
	Confirm bool   `json:"confirm"`
}

// DropNamespaceResponse reports what a drop deleted.
type DropNamespaceResponse struct {
	Name              string `json:"name"`
	RecordsDeleted    uint32 `json:"records_deleted"`
	RawEntriesDeleted uint32 `json:"raw_entries_deleted"`
}

// Forbidden says the caller's key may not use namespace ns.
func Forbidden(ns string) *Error {
	return Errorf(CodeForbidden, "this API key may not use namespace %s; use a key bound to it (auth.keys), or another namespace", Quote(ns))
}
