// Package metrics defines memsvc's Prometheus series, exactly these:
//
//	memsvc_http_requests_total{method,path,status}               counter
//	memsvc_http_request_duration_seconds{method,path,status}     histogram
//	memsvc_encode_total{store}                                   counter
//	memsvc_encode_duration_seconds{store}                        histogram
//	memsvc_recall_total                                          counter
//	memsvc_recall_duration_seconds                               histogram
//	memsvc_decay_panics_total                                    counter
//
// and, beyond the spec's list, the series operators need to run memsvc
// (the dashboard and alert rules in deploy-docs use them):
//
//	memsvc_background_rounds_total{loop,result}                  counter
//	memsvc_config_last_reload_successful                         gauge
//	memsvc_records{store}                                        gauge
//	memsvc_dream_pending_entries                                 gauge
//	memsvc_storage_free_bytes{volume}                            gauge
//	memsvc_storage_min_free_bytes                                gauge
//	memsvc_audit_append_failures_total                           counter
//
// New registers them on a registry the caller owns (never the global
// default one); the last five read the server's state when scraped
// (RegisterState). The encode and recall series are recorded by a
// memory.Service decorator (Instrument), so every transport that serves the
// decorated service is counted the same way; pkg/httpapi records the HTTP
// series; the server's background decay loop calls DecayPanic.
//
// Label values:
//
//   - method is the upper-case request method; methods outside the standard
//     nine are reported as OTHER, so clients cannot grow the series set.
//   - path is the matched route template ("/v1/encode/{record_id}"), or
//     "unknown" when no route matched. Never the raw path.
//   - status is the numeric status code.
//   - store on memsvc_encode_total is the store each curated record went to;
//     every record of a batch counts. Raw journal writes are not encodes.
//   - store on memsvc_encode_duration_seconds is the store a single encode
//     was routed to; when it failed before routing it is the requested
//     store, or "unknown" when none was requested. A batch is one commit and
//     is timed once, under store="batch": splitting its latency across the
//     stores of its records would describe nothing real.
//
// memsvc_recall_* cover recall.query: the total counts successful calls,
// the histogram times every call.
//
//   - loop on memsvc_background_rounds_total is "decay" or "dream"
//     (LoopDecay, LoopDream); result is "ok", "error", or "skipped" for a
//     round not run while the disk is below the free-space floor. A round
//     that panics is counted by memsvc_decay_panics_total instead.
//   - store on memsvc_records is each store (working, episodic, semantic,
//     procedural, emotional).
//   - volume on memsvc_storage_free_bytes is "data" (the file system of
//     the data directory) or "audit" (that of the audit log, when it is
//     elsewhere).
//
// A nil *Metrics is valid and records nothing.
package metrics

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"memsvc.dev/memsvc/pkg/memory"
)

// Metrics holds memsvc's series.
type Metrics struct {
	httpRequests   *prometheus.CounterVec
	httpDuration   *prometheus.HistogramVec
	encodeTotal    *prometheus.CounterVec
	encodeDuration *prometheus.HistogramVec
	recallTotal    prometheus.Counter
	recallDuration prometheus.Histogram
	decayPanics    prometheus.Counter
	rounds         *prometheus.CounterVec
	reloadOK       prometheus.Gauge
}

// The loop and result label values of memsvc_background_rounds_total.
const (
	LoopDecay = "decay"
	LoopDream = "dream"

	RoundOK      = "ok"
	RoundError   = "error"
	RoundSkipped = "skipped"
)

// Label values of memsvc_encode_duration_seconds that are not store names.
const (
	StoreBatch   = "batch"
	StoreUnknown = "unknown"
)

// PathUnknown is the path label of requests no route matched.
const PathUnknown = "unknown"

// requestBuckets suit an HTTP API whose typical answer takes a millisecond
// and whose exports can take a minute.
func requestBuckets() []float64 {
	return []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
}

// operationBuckets suit a synced encode (about 1-2 ms) and a recall (under
// 10 ms at 100,000 records).
func operationBuckets() []float64 {
	return []float64{0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
}

// New creates the series and registers them on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		return nil, fmt.Errorf("metrics: a registerer is required")
	}
	m := &Metrics{
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memsvc_http_requests_total",
			Help: "HTTP requests answered, by method, route template and status.",
		}, []string{"method", "path", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "memsvc_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by method, route template and status.",
			Buckets: requestBuckets(),
		}, []string{"method", "path", "status"}),
		encodeTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memsvc_encode_total",
			Help: "Curated records stored, by store (each record of a batch counts).",
		}, []string{"store"}),
		encodeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "memsvc_encode_duration_seconds",
			Help:    "Time of encode calls, by store; batches are timed once under store=\"batch\".",
			Buckets: operationBuckets(),
		}, []string{"store"}),
		recallTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "memsvc_recall_total",
			Help: "Successful recall queries.",
		}),
		recallDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "memsvc_recall_duration_seconds",
			Help:    "Time of recall queries, successful or not.",
			Buckets: operationBuckets(),
		}),
		decayPanics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "memsvc_decay_panics_total",
			Help: "Panics recovered in the background decay loop; non-zero deserves a look at the log.",
		}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memsvc_background_rounds_total",
			Help: "Rounds of the background loops, by loop (decay, dream) and result (ok, error, skipped while the disk is low).",
		}, []string{"loop", "result"}),
		reloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "memsvc_config_last_reload_successful",
			Help: "1 when the last configuration reload was applied (or none was tried), 0 when it was refused and the running settings stayed.",
		}),
	}
	// Every series exists from the start, so a rate over them is defined
	// before the first round (the dream loop's comes after a day).
	for _, loop := range []string{LoopDecay, LoopDream} {
		for _, result := range []string{RoundOK, RoundError, RoundSkipped} {
			m.rounds.WithLabelValues(loop, result)
		}
	}
	m.reloadOK.Set(1)
	for _, c := range []prometheus.Collector{m.httpRequests, m.httpDuration, m.encodeTotal, m.encodeDuration, m.recallTotal, m.recallDuration, m.decayPanics, m.rounds, m.reloadOK} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	return m, nil
}

// DecayPanic counts a panic recovered in the background decay loop.
func (m *Metrics) DecayPanic() {
	if m != nil {
		m.decayPanics.Inc()
	}
}

// BackgroundRound counts a round of a background loop (LoopDecay or
// LoopDream) with its result (RoundOK, RoundError or RoundSkipped).
func (m *Metrics) BackgroundRound(loop, result string) {
	if m == nil {
		return
	}
	m.rounds.WithLabelValues(loop, result).Inc()
}

// ConfigReloaded records the outcome of a configuration reload.
func (m *Metrics) ConfigReloaded(ok bool) {
	if m == nil {
		return
	}
	if ok {
		m.reloadOK.Set(1)
	} else {
		m.reloadOK.Set(0)
	}
}

// ObserveHTTP records one answered HTTP request. path must be a route
// template or PathUnknown.
func (m *Metrics) ObserveHTTP(method, path string, status int, d time.Duration) {
	if m == nil {
		return
	}
	method = MethodLabel(method)
	code := strconv.Itoa(status)
	m.httpRequests.WithLabelValues(method, path, code).Inc()
	m.httpDuration.WithLabelValues(method, path, code).Observe(d.Seconds())
}

// MethodLabel bounds the method label to the standard methods.
func MethodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	default:
		return "OTHER"
	}
}

// Instrument returns svc recording the encode and recall series. Methods
// other than EncodeStore, EncodeBatch and RecallQuery pass straight
// through. With a nil m it returns svc itself.
func (m *Metrics) Instrument(svc memory.Service) memory.Service {
	if m == nil {
		return svc
	}
	return &instrumented{Service: svc, m: m}
}

type instrumented struct {
	memory.Service
	m *Metrics
}

func (s *instrumented) EncodeStore(ctx context.Context, req *memory.EncodeStoreRequest) (*memory.EncodeStoreResponse, error) {
	start := time.Now()
	resp, err := s.Service.EncodeStore(ctx, req)
	label := StoreUnknown
	switch {
	case err == nil && resp != nil:
		label = resp.Store.String()
		s.m.encodeTotal.WithLabelValues(label).Inc()
	case req != nil && req.Store != nil && req.Store.Valid():
		label = req.Store.String()
	}
	s.m.encodeDuration.WithLabelValues(label).Observe(time.Since(start).Seconds())
	return resp, err
}

func (s *instrumented) EncodeBatch(ctx context.Context, req *memory.EncodeBatchRequest) (*memory.EncodeBatchResponse, error) {
	start := time.Now()
	resp, err := s.Service.EncodeBatch(ctx, req)
	s.m.encodeDuration.WithLabelValues(StoreBatch).Observe(time.Since(start).Seconds())
	if err == nil && resp != nil {
		for _, r := range resp.Results {
			s.m.encodeTotal.WithLabelValues(r.Store.String()).Inc()
		}
	}
	return resp, err
}

func (s *instrumented) RecallQuery(ctx context.Context, req *memory.RecallQueryRequest) (*memory.RecallQueryResponse, error) {
	start := time.Now()
	resp, err := s.Service.RecallQuery(ctx, req)
	s.m.recallDuration.Observe(time.Since(start).Seconds())
	if err == nil {
		s.m.recallTotal.Inc()
	}
	return resp, err
}
