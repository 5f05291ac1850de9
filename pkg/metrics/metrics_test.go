package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"memsvc.dev/memsvc/pkg/memory"
)

// fakeService answers encodes and recalls from canned values.
type fakeService struct {
	memory.Service
	err error
}

func (f *fakeService) EncodeStore(_ context.Context, req *memory.EncodeStoreRequest) (*memory.EncodeStoreResponse, error) {
	if f.err != nil {
		return nil, f.err
	}
	st := memory.StoreEpisodic
	if req.Store != nil {
		st = *req.Store
	}
	return &memory.EncodeStoreResponse{Store: st}, nil
}

func (f *fakeService) EncodeBatch(_ context.Context, req *memory.EncodeBatchRequest) (*memory.EncodeBatchResponse, error) {
	if f.err != nil {
		return nil, f.err
	}
	out := &memory.EncodeBatchResponse{}
	for _, r := range req.Records {
		out.Results = append(out.Results, memory.EncodeStoreResponse{Store: *r.Store})
	}
	return out, nil
}

func (f *fakeService) RecallQuery(context.Context, *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &memory.RecallQueryResponse{}, nil
}

func (f *fakeService) Stats(context.Context) (*memory.Stats, error) {
	return &memory.Stats{TotalRecords: 7}, nil
}

// gather returns every sample as "name{labels}" -> value (counters) or
// sample count (histograms).
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			var l []string
			for _, p := range m.GetLabel() {
				l = append(l, p.GetName()+"="+p.GetValue())
			}
			key := f.GetName() + "{" + strings.Join(l, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func TestInstrument(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	fake := &fakeService{}
	svc := m.Instrument(fake)
	ctx := context.Background()
	sem, proc := memory.StoreSemantic, memory.StoreProcedural

	if _, err := svc.EncodeStore(ctx, &memory.EncodeStoreRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.EncodeStore(ctx, &memory.EncodeStoreRequest{Store: &sem}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.EncodeBatch(ctx, &memory.EncodeBatchRequest{Records: []memory.EncodeStoreRequest{{Store: &sem}, {Store: &proc}, {Store: &proc}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RecallQuery(ctx, &memory.RecallQueryRequest{}); err != nil {
		t.Fatal(err)
	}
	fake.err = memory.Invalid("content", "no blocks")
	_, _ = svc.EncodeStore(ctx, &memory.EncodeStoreRequest{Store: &proc})
	_, _ = svc.EncodeStore(ctx, &memory.EncodeStoreRequest{})
	_, _ = svc.EncodeBatch(ctx, &memory.EncodeBatchRequest{})
	_, _ = svc.RecallQuery(ctx, &memory.RecallQueryRequest{})
	// Other methods pass through untouched.
	if st, err := svc.Stats(ctx); err != nil || st.TotalRecords != 7 {
		t.Errorf("Stats through the decorator: %v, %v", st, err)
	}
	m.DecayPanic()
	m.ObserveHTTP("GET", "/health", 200, time.Millisecond)
	m.ObserveHTTP("WEIRD", "unknown", 405, time.Millisecond)
	m.BackgroundRound(LoopDecay, RoundOK)
	m.BackgroundRound(LoopDecay, RoundOK)
	m.BackgroundRound(LoopDream, RoundError)
	m.BackgroundRound(LoopDream, RoundSkipped)
	m.ConfigReloaded(false)

	want := map[string]float64{
		"memsvc_encode_total{store=episodic}":                                        1,
		"memsvc_encode_total{store=semantic}":                                        2,
		"memsvc_encode_total{store=procedural}":                                      2,
		"memsvc_encode_duration_seconds{store=episodic}":                             1,
		"memsvc_encode_duration_seconds{store=semantic}":                             1,
		"memsvc_encode_duration_seconds{store=procedural}":                           1, // failed, requested store
		"memsvc_encode_duration_seconds{store=unknown}":                              1, // failed, auto-routed
		"memsvc_encode_duration_seconds{store=batch}":                                2,
		"memsvc_recall_total{}":                                                      1,
		"memsvc_recall_duration_seconds{}":                                           2,
		"memsvc_decay_panics_total{}":                                                1,
		"memsvc_http_requests_total{method=GET,path=/health,status=200}":             1,
		"memsvc_http_request_duration_seconds{method=GET,path=/health,status=200}":   1,
		"memsvc_http_requests_total{method=OTHER,path=unknown,status=405}":           1,
		"memsvc_http_request_duration_seconds{method=OTHER,path=unknown,status=405}": 1,
		"memsvc_background_rounds_total{loop=decay,result=ok}":                       2,
		"memsvc_background_rounds_total{loop=decay,result=error}":                    0, // served from the start
		"memsvc_background_rounds_total{loop=dream,result=ok}":                       0,
		"memsvc_background_rounds_total{loop=dream,result=error}":                    1,
		"memsvc_background_rounds_total{loop=decay,result=skipped}":                  0,
		"memsvc_background_rounds_total{loop=dream,result=skipped}":                  1,
		"memsvc_config_last_reload_successful{}":                                     0,
	}
	got := gather(t, reg)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected sample %s = %v", k, got[k])
		}
	}
}

func TestNilMetrics(t *testing.T) {
	var m *Metrics
	fake := &fakeService{}
	if m.Instrument(fake) != memory.Service(fake) {
		t.Error("nil Metrics wraps the service")
	}
	m.DecayPanic()
	m.ObserveHTTP("GET", "/", 200, 0)
	m.BackgroundRound(LoopDecay, RoundOK)
	m.ConfigReloaded(true)
}

// TestState: the state gauges read their sources at each scrape; the
// audit counter is served only with an audit log; a failing source leaves
// its series out rather than failing the scrape.
func TestState(t *testing.T) {
	reg := prometheus.NewRegistry()
	pending := uint32(3)
	var statsErr error
	failures := uint64(0)
	free := map[string]uint64{"/data": 5 << 30, "/audit": 1 << 30}
	err := RegisterState(reg, State{
		Stats: func(context.Context) (*memory.Stats, error) {
			return &memory.Stats{RecordsByStore: map[memory.StoreType]uint32{memory.StoreSemantic: 4}, RawJournalPendingDream: pending}, statsErr
		},
		Volumes:       map[string]string{"data": "/data", "audit": "/audit"},
		Free:          func(p string) (uint64, error) { return free[p], nil },
		MinFreeBytes:  256 << 20,
		AuditFailures: func() uint64 { return failures },
	})
	if err != nil {
		t.Fatal(err)
	}
	got := gather(t, reg)
	want := map[string]float64{
		"memsvc_records{store=working}":           0,
		"memsvc_records{store=episodic}":          0,
		"memsvc_records{store=semantic}":          4,
		"memsvc_records{store=procedural}":        0,
		"memsvc_records{store=emotional}":         0,
		"memsvc_dream_pending_entries{}":          3,
		"memsvc_storage_free_bytes{volume=data}":  5 << 30,
		"memsvc_storage_free_bytes{volume=audit}": 1 << 30,
		"memsvc_storage_min_free_bytes{}":         256 << 20,
		"memsvc_audit_append_failures_total{}":    0,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("samples %v, want exactly %v", got, want)
	}

	pending, failures, free["/data"] = 9, 2, 1<<20
	statsErr = nil
	got = gather(t, reg)
	if got["memsvc_dream_pending_entries{}"] != 9 || got["memsvc_audit_append_failures_total{}"] != 2 || got["memsvc_storage_free_bytes{volume=data}"] != 1<<20 {
		t.Errorf("a second scrape does not read the sources again: %v", got)
	}

	statsErr = errors.New("engine closed")
	got = gather(t, reg)
	if _, ok := got["memsvc_dream_pending_entries{}"]; ok {
		t.Error("a failing Stats still served the backlog")
	}
	if _, ok := got["memsvc_storage_min_free_bytes{}"]; !ok {
		t.Error("a failing Stats took the other series with it")
	}

	noAudit := prometheus.NewRegistry()
	if err := RegisterState(noAudit, State{}); err != nil {
		t.Fatal(err)
	}
	for k := range gather(t, noAudit) {
		if strings.HasPrefix(k, "memsvc_audit_") || strings.HasPrefix(k, "memsvc_records") {
			t.Errorf("served without its source: %s", k)
		}
	}
	if RegisterState(nil, State{}) == nil {
		t.Error("nil registerer accepted")
	}
}

func TestNew(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Error("nil registerer accepted")
	}
	reg := prometheus.NewRegistry()
	if _, err := New(reg); err != nil {
		t.Fatal(err)
	}
	_, err := New(reg)
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		t.Errorf("second registration: %v, want AlreadyRegisteredError", err)
	}
}
