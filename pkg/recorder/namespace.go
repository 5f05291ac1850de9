package recorder

import (
	"fmt"
	"path/filepath"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
)

// ProjectNamespace derives the namespace of a project from its directory's
// name, normalised to the namespace rule (memory.ValidateNamespace):
// letters lower-cased, every run of other characters (spaces, punctuation,
// letters outside ASCII) and dashes made one '-', no separator at either
// end, at most 64 bytes. "My App" becomes "my-app", "api_v2.1" stays as it is. A name
// with nothing left (only symbols or non-ASCII letters) is an error that
// asks for an explicit namespace.
func ProjectNamespace(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("project directory: %w", err)
	}
	base := filepath.Base(abs)
	var b strings.Builder
	dash := false
	for i := 0; i < len(base); i++ {
		c := base[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			if !dash {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		if c == '-' && dash {
			continue
		}
		b.WriteByte(c)
		dash = c == '-'
	}
	ns := strings.TrimLeft(b.String(), "-._")
	if len(ns) > memory.MaxNamespaceBytes {
		ns = ns[:memory.MaxNamespaceBytes]
	}
	ns = strings.TrimRight(ns, "-._")
	if err := memory.ValidateNamespace(ns); err != nil {
		return "", fmt.Errorf("no namespace can be derived from the directory name %s; pass --namespace (lower-case letters, digits, '.', '_' and '-')", memory.Quote(base))
	}
	return ns, nil
}
