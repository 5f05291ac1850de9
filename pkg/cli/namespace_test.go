package cli

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestNamespace: the flag beats MEMSVC_NAMESPACE, both are trimmed,
// neither gives "", and a bad name is a usage error naming its source.
func TestNamespace(t *testing.T) {
	env := []string{"MEMSVC_NAMESPACE= from-env "}
	for _, tc := range []struct {
		flag    string
		environ []string
		want    string
		source  string // the source a usage error names; "" for none
	}{
		{"proj-a", env, "proj-a", ""},
		{" ", env, "from-env", ""},
		{"", nil, "", ""},
		{"Bad Name", env, "", "--namespace"},
		{"", []string{"MEMSVC_NAMESPACE=Bad Name"}, "", "MEMSVC_NAMESPACE"},
	} {
		got, err := Namespace(tc.flag, tc.environ)
		if tc.source == "" {
			if err != nil || got != tc.want {
				t.Errorf("Namespace(%q, %q) = %q, %v; want %q", tc.flag, tc.environ, got, err, tc.want)
			}
			continue
		}
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), tc.source+": ") {
			t.Errorf("Namespace(%q, %q) = %q, %v; want a usage error about %s", tc.flag, tc.environ, got, err, tc.source)
		}
	}
}

// TestNamespaceList: names are trimmed, * stands alone, a blank list is
// none; a bad or empty name and * beside names are usage errors naming
// the flag.
func TestNamespaceList(t *testing.T) {
	for list, want := range map[string][]string{
		"proj-a, proj-b": {"proj-a", "proj-b"},
		" * ":            {"*"},
		"":               nil,
		"  ":             nil,
	} {
		got, err := NamespaceList("--namespaces", list)
		if err != nil || !slices.Equal(got, want) || (want == nil) != (got == nil) {
			t.Errorf("NamespaceList(%q) = %q, %v; want %q", list, got, err, want)
		}
	}
	for _, list := range []string{"proj-a,*", "*,*", "Proj", "a,,b", "a,"} {
		got, err := NamespaceList("--namespaces", list)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "--namespaces: ") {
			t.Errorf("NamespaceList(%q) = %q, %v; want a usage error about --namespaces", list, got, err)
		}
	}
}
