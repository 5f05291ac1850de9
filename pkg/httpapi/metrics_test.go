package httpapi

import (
	"bytes"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/wire"
)

// TestMetricsScrape makes a few requests, scrapes /metrics as Prometheus
// would and checks the series, their labels and buckets.
func TestMetricsScrape(t *testing.T) {
	eng := newEngine(t)
	a, _ := seed(t, eng)
	f := newFixture(t, eng, Options{MetricsEnabled: true})
	calls := []request{
		{method: http.MethodPost, path: wire.PathEncode, body: textRecord("one")},
		{method: http.MethodPost, path: wire.PathEncodeBatch, body: `{"records":[` + textRecord("two") + `,` + textRecord("three") + `]}`},
		{method: http.MethodPatch, path: wire.RecordPath(wire.PathEncodeUpdate, a), body: `{"metadata":{"x":1}}`},
		{method: http.MethodGet, path: wire.RecordPath(wire.PathRecord, a)},
		{method: http.MethodPost, path: wire.PathRecallQuery, body: `{"cue":{"text":"cat"}}`},
		{method: http.MethodGet, path: "/v1/no/such/" + a.String()},
		{method: "BREW", path: wire.PathHealth},
	}
	for _, c := range calls {
		if resp, body := f.do(t, c); resp.StatusCode >= 500 {
			t.Fatalf("%s %s: %d %s", c.method, c.path, resp.StatusCode, body)
		}
	}
	f.m.DecayPanic()

	resp, body := f.do(t, request{method: http.MethodGet, path: wire.PathMetrics})
	if resp.StatusCode != 200 {
		t.Fatalf("scrape: %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse scrape: %v\n%s", err, body)
	}

	want := map[string]dto.MetricType{
		"memsvc_http_requests_total":           dto.MetricType_COUNTER,
		"memsvc_http_request_duration_seconds": dto.MetricType_HISTOGRAM,
		"memsvc_encode_total":                  dto.MetricType_COUNTER,
		"memsvc_encode_duration_seconds":       dto.MetricType_HISTOGRAM,
		"memsvc_recall_total":                  dto.MetricType_COUNTER,
		"memsvc_recall_duration_seconds":       dto.MetricType_HISTOGRAM,
		"memsvc_decay_panics_total":            dto.MetricType_COUNTER,
		// Beyond the spec's list: what metrics.New registers besides
		// (the state gauges are registered by the server).
		"memsvc_background_rounds_total":       dto.MetricType_COUNTER,
		"memsvc_config_last_reload_successful": dto.MetricType_GAUGE,
	}
	for name, fam := range fams {
		typ, ok := want[name]
		if !ok {
			t.Errorf("unexpected series family %s", name)
			continue
		}
		if fam.GetType() != typ {
			t.Errorf("%s is a %s, want %s", name, fam.GetType(), typ)
		}
	}
	for name := range want {
		if fams[name] == nil {
			t.Errorf("series family %s missing", name)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	templates := []string{"unknown"}
	for _, rt := range wire.Routes() {
		templates = append(templates, rt.Path)
	}
	labels := func(m *dto.Metric) map[string]string {
		out := map[string]string{}
		for _, l := range m.GetLabel() {
			out[l.GetName()] = l.GetValue()
		}
		return out
	}
	find := func(fam string, want map[string]string) *dto.Metric {
		for _, m := range fams[fam].GetMetric() {
			got := labels(m)
			match := true
			for k, v := range want {
				match = match && got[k] == v
			}
			if match {
				return m
			}
		}
		t.Errorf("%s has no series %v", fam, want)
		return &dto.Metric{}
	}

	for _, fam := range []string{"memsvc_http_requests_total", "memsvc_http_request_duration_seconds"} {
		for _, m := range fams[fam].GetMetric() {
			l := labels(m)
			if len(l) != 3 || l["method"] == "" || l["status"] == "" {
				t.Errorf("%s labels %v, want method, path, status", fam, l)
			}
			if !slices.Contains(templates, l["path"]) {
				t.Errorf("%s path label %q is not a route template", fam, l["path"])
			}
			if strings.Contains(l["path"], a.String()) {
				t.Errorf("%s path label carries a record id: %q", fam, l["path"])
			}
		}
	}
	reqs := "memsvc_http_requests_total"
	for _, c := range []struct {
		method, path, status string
	}{
		{"POST", wire.PathEncode, "200"},
		{"PATCH", wire.PathEncodeUpdate, "204"},
		{"GET", wire.PathRecord, "200"},
		{"GET", "unknown", "404"},
		{"OTHER", wire.PathHealth, "405"},
	} {
		if got := find(reqs, map[string]string{"method": c.method, "path": c.path, "status": c.status}).GetCounter().GetValue(); got != 1 {
			t.Errorf("%s %s %s counted %v times, want 1", c.method, c.path, c.status, got)
		}
	}

	h := find("memsvc_http_request_duration_seconds", map[string]string{"method": "POST", "path": wire.PathEncode, "status": "200"}).GetHistogram()
	var bounds []float64
	for _, b := range h.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	if !slices.Equal(bounds, requestBucketsForTest()) || h.GetSampleCount() != 1 {
		t.Errorf("request histogram buckets %v (count %d)", bounds, h.GetSampleCount())
	}

	if got := find("memsvc_encode_total", map[string]string{"store": "episodic"}).GetCounter().GetValue(); got != 3 {
		t.Errorf("encode_total{episodic} = %v, want 3 (one store, two batch records)", got)
	}
	if got := find("memsvc_encode_duration_seconds", map[string]string{"store": "episodic"}).GetHistogram().GetSampleCount(); got != 1 {
		t.Errorf("encode duration{episodic} count %d, want 1", got)
	}
	if got := find("memsvc_encode_duration_seconds", map[string]string{"store": "batch"}).GetHistogram().GetSampleCount(); got != 1 {
		t.Errorf("encode duration{batch} count %d, want 1", got)
	}
	if got := fams["memsvc_recall_total"].GetMetric()[0].GetCounter().GetValue(); got != 1 {
		t.Errorf("recall_total = %v", got)
	}
	rd := fams["memsvc_recall_duration_seconds"].GetMetric()[0]
	if len(rd.GetLabel()) != 0 || rd.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("recall duration: %v", rd)
	}
	if got := fams["memsvc_decay_panics_total"].GetMetric()[0].GetCounter().GetValue(); got != 1 {
		t.Errorf("decay_panics_total = %v", got)
	}
}

// requestBucketsForTest is the bucket layout the HTTP histogram must have.
func requestBucketsForTest() []float64 {
	return []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, math.Inf(1)}
}

// TestMetricsDisabled: no route, and nothing registered twice.
func TestMetricsDisabled(t *testing.T) {
	f := newFixture(t, &stubService{}, Options{})
	resp, body := f.do(t, request{method: http.MethodGet, path: wire.PathMetrics})
	if resp.StatusCode != 404 || memory.Code(jsonString(t, envelope(t, resp, body)["code"])) != memory.CodeValidation {
		t.Errorf("metrics disabled: %d %q", resp.StatusCode, body)
	}
}
