package httpapi

import (
	"net/http"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// recallQuery serves POST /v1/recall/query: the full answer, or with
// ?view=brief the brief one (memory.RecallBrief) for clients that show a
// few fields of each memory. The recall itself is the same either way.
func (s *Server) recallQuery(w http.ResponseWriter, r *http.Request) (any, error) {
	brief := false
	for _, v := range r.URL.Query()[wire.QueryView] {
		switch v {
		case memory.ViewBrief:
			brief = true
		case "full":
			brief = false
		default:
			return nil, memory.Invalid(wire.QueryView, "query value %s: want %s or full", memory.Quote(v), memory.ViewBrief)
		}
	}
	var req memory.RecallQueryRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return nil, err
	}
	resp, err := s.svc.RecallQuery(r.Context(), &req)
	if err != nil || !brief {
		return resp, err
	}
	return memory.RecallBrief{Response: resp}, nil
}
