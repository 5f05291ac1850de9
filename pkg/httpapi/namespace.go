package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"memsvc.dev/memsvc/pkg/access"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

type identityKey struct{}

// withIdentity records in r who admission found the caller to be.
func withIdentity(r *http.Request, id access.Identity) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), identityKey{}, id))
}

// scopeOf is the set of namespaces the caller of r may use. A request
// that did not pass admission (which does not happen on protected routes)
// may use none.
func scopeOf(r *http.Request) access.Scope {
	id, _ := r.Context().Value(identityKey{}).(access.Identity)
	return id.Scope
}

// confine puts the namespace a protected route acts in into the request's
// context, after admission and before the handler, and refuses a caller
// whose key may not use it (403 FORBIDDEN); see wire.Reach.
func (s *Server) confine(reach wire.Reach, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scope := scopeOf(r)
		var (
			ns  string
			err error
		)
		switch reach {
		case wire.InHeader:
			if ns, err = headerNamespace(r); err == nil {
				ns, err = scope.Resolve(ns)
			}
		case wire.InPath:
			if ns, err = pathNamespace(r); err == nil {
				ns, err = scope.Resolve(ns)
			}
		case wire.KeyWide:
			// Answers for the namespaces of the key (GET /v1/namespaces
			// filters them); acts in none.
		case wire.ServerWide:
			err = scope.RequireAll("server-wide " + r.URL.Path)
		default:
			err = errors.New("route of unknown namespace reach")
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if ns != "" {
			r = r.WithContext(memory.WithNamespace(r.Context(), ns))
		}
		next.ServeHTTP(w, r)
	})
}

// headerNamespace is the namespace the X-Memsvc-Namespace header names,
// checked; "" when there is none.
func headerNamespace(r *http.Request) (string, error) {
	values := r.Header.Values(wire.HeaderNamespace)
	switch len(values) {
	case 0:
		return "", nil
	case 1:
	default:
		return "", memory.Invalid(wire.HeaderNamespace+" header", "sent %d times; send it once", len(values))
	}
	if err := memory.ValidateNamespace(values[0]); err != nil {
		return "", renamed(err, wire.HeaderNamespace+" header")
	}
	return values[0], nil
}

// pathNamespace is the namespace of the {namespace} path segment,
// checked.
func pathNamespace(r *http.Request) (string, error) {
	ns := mux.Vars(r)[wire.ParamNamespace]
	if err := memory.ValidateNamespace(ns); err != nil {
		return "", renamed(err, "path segment {"+wire.ParamNamespace+"}")
	}
	return ns, nil
}

// renamed says where a namespace that memory.ValidateNamespace refused
// came from, in place of its generic field name.
func renamed(err error, where string) error {
	var me *memory.Error
	if !errors.As(err, &me) {
		return err
	}
	return memory.Invalid(where, "%s", strings.TrimPrefix(me.Message, "namespace: "))
}

// namespaces serves GET /v1/namespaces: the namespaces the caller's key
// may see.
func (s *Server) namespaces(_ http.ResponseWriter, r *http.Request) (any, error) {
	resp, err := s.svc.Namespaces(r.Context())
	if err != nil {
		return nil, err
	}
	return &memory.NamespacesResponse{Namespaces: scopeOf(r).Visible(resp.Namespaces)}, nil
}

// dropNamespace serves DELETE /v1/namespaces/{namespace}; the path names
// the namespace (confine checked it and the key), whatever the body says.
func (s *Server) dropNamespace(w http.ResponseWriter, r *http.Request) (any, error) {
	var req memory.DropNamespaceRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	req.Name = memory.NamespaceFrom(r.Context())
	return s.svc.DropNamespace(r.Context(), &req)
}

// stats serves GET /v1/introspect/stats: the statistics of the request's
// namespace, or with all_namespaces=true, for a key that may see every
// namespace, those of the whole server.
func (s *Server) stats(_ http.ResponseWriter, r *http.Request) (any, error) {
	all := false
	for _, v := range r.URL.Query()[wire.QueryAllNamespaces] {
		switch v {
		case "true":
			all = true
		case "false":
			all = false
		default:
			return nil, memory.Invalid(wire.QueryAllNamespaces, "query value %s: want true or false", memory.Quote(v))
		}
	}
	if !all {
		return s.svc.Stats(r.Context())
	}
	if err := scopeOf(r).RequireAll("stats of all namespaces"); err != nil {
		return nil, err
	}
	return s.svc.StatsAll(r.Context())
}
