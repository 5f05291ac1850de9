package memory

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestValidateNamespace(t *testing.T) {
	for _, ok := range []string{"default", "a", "0", "project-a", "team.alpha_2", strings.Repeat("x", 64)} {
		if err := ValidateNamespace(ok); err != nil {
			t.Errorf("ValidateNamespace(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "A", "-a", ".a", "_a", "a b", "a/b", "ä", "proj:x", strings.Repeat("x", 65), "a\x00"} {
		err := ValidateNamespace(bad)
		if !errors.Is(err, ErrValidation) {
			t.Errorf("ValidateNamespace(%q) = %v, want a validation error", bad, err)
		}
	}
	// A long bad name is quoted by a prefix only.
	err := ValidateNamespace(strings.Repeat("Q", 10000))
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("error for a 10,000-byte name is %d bytes: %v", len(err.Error()), err)
	}
}

func TestNamespaceContext(t *testing.T) {
	ctx := context.Background()
	if got := NamespaceFrom(ctx); got != DefaultNamespace || NamespaceSet(ctx) {
		t.Errorf("empty context: %q, set %v", got, NamespaceSet(ctx))
	}
	if got := NamespaceFrom(WithNamespace(ctx, "")); got != DefaultNamespace {
		t.Errorf("WithNamespace(\"\") = %q", got)
	}
	a := WithNamespace(ctx, "a")
	if got := NamespaceFrom(a); got != "a" || !NamespaceSet(a) {
		t.Errorf("namespace a: %q, set %v", got, NamespaceSet(a))
	}
	if got := NamespaceFrom(WithNamespace(a, "b")); got != "b" {
		t.Errorf("inner namespace = %q, want b", got)
	}
	if err := Forbidden("b"); !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("Forbidden = %v", err)
	}
}
