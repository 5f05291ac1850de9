package cli

import (
	"slices"
	"strings"

	"memsvc.dev/memsvc/pkg/memory"
)

// EnvNamespace names the namespace the data commands, the MCP proxy and
// the recorder act in when no --namespace flag names one.
const EnvNamespace = "MEMSVC_NAMESPACE"

// Namespace is the namespace a command acts in: the value of its
// --namespace flag, else MEMSVC_NAMESPACE of environ, trimmed; "" when
// neither names one. A name that is no namespace is a usage error that
// says where it came from.
func Namespace(flag string, environ []string) (string, error) {
	ns, source := strings.TrimSpace(flag), "--namespace"
	if ns == "" {
		ns, source = strings.TrimSpace(Getenv(environ, EnvNamespace)), EnvNamespace
	}
	if ns == "" {
		return "", nil
	}
	if err := CheckNamespace(source, ns); err != nil {
		return "", err
	}
	return ns, nil
}

// CheckNamespace returns a usage error when name, given as what (a flag,
// a variable or an argument), is not a valid namespace name.
func CheckNamespace(what, name string) error {
	if err := memory.ValidateNamespace(name); err != nil {
		return Usagef("%s: %s", what, strings.TrimPrefix(err.Error(), "namespace: "))
	}
	return nil
}

// NamespaceList reads the comma-separated namespaces given as what (a flag
// such as --namespaces), or * alone for every namespace; a blank list
// names none (nil). A name that is no namespace (an empty one between
// commas included) and * beside other names are usage errors naming what.
func NamespaceList(what, list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name != memory.AllNamespaces {
			if err := CheckNamespace(what, name); err != nil {
				return nil, err
			}
		}
		out = append(out, name)
	}
	if len(out) > 1 && slices.Contains(out, memory.AllNamespaces) {
		return nil, Usagef("%s: * already means every namespace; give it alone", what)
	}
	return out, nil
}
