package e2e

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// monitoringDir holds the ops kit: alert rules, their promtool unit
// tests, a scrape configuration and a Grafana dashboard.
const monitoringDir = "../deploy-docs/monitoring"

// ruleFile is the structure of a Prometheus rule file; decoding is strict,
// so a misspelt field fails.
type ruleFile struct {
	Groups []struct {
		Name     string `yaml:"name"`
		Interval string `yaml:"interval"`
		Rules    []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// TestMonitoringKit checks the ops kit against the metrics a real server
// serves: every metric an alert rule or a dashboard panel uses is one
// memsvc serves (or up), the rule file has the structure of a Prometheus
// rule file and covers the alerts operators need, and the dashboard is
// valid JSON with unique panel ids. With MEMSVC_PROMTOOL (a promtool
// binary; CI installs one) it also runs promtool on the rules, their unit
// tests, the scrape example and the dashboard's queries.
func TestMonitoringKit(t *testing.T) {
	served := servedSeries(t)

	// The alert rules.
	raw, err := os.ReadFile(filepath.Join(monitoringDir, "memsvc-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules ruleFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&rules); err != nil {
		t.Fatalf("memsvc-alerts.yml: %v", err)
	}
	if len(rules.Groups) == 0 {
		t.Fatal("memsvc-alerts.yml has no rule group")
	}
	alerts := map[string]bool{}
	for _, g := range rules.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("group %q: a group needs a name and rules", g.Name)
		}
		for _, r := range g.Rules {
			if (r.Alert == "") == (r.Record == "") {
				t.Errorf("rule %q%q: exactly one of alert and record", r.Alert, r.Record)
			}
			if alerts[r.Alert] {
				t.Errorf("alert %s is defined twice", r.Alert)
			}
			alerts[r.Alert] = true
			if r.For != "" {
				if _, err := model.ParseDuration(r.For); err != nil {
					t.Errorf("alert %s: for %q: %v", r.Alert, r.For, err)
				}
			}
			if r.Alert != "" && (r.Labels["severity"] != "warning" && r.Labels["severity"] != "critical" ||
				r.Annotations["summary"] == "" || r.Annotations["description"] == "") {
				t.Errorf("alert %s: needs severity warning or critical, a summary and a description", r.Alert)
			}
			checkNames(t, "alert "+r.Alert, r.Expr, served)
		}
	}
	// What operators need an alert for (issue 18).
	for _, want := range []string{"MemsvcDown", "MemsvcHighErrorRate", "MemsvcDecayPanics", "MemsvcDiskSpaceLow",
		"MemsvcWritesRefused", "MemsvcAuditAppendFailing", "MemsvcDreamBacklog"} {
		if !alerts[want] {
			t.Errorf("no alert %s", want)
		}
	}

	// The dashboard.
	raw, err = os.ReadFile(filepath.Join(monitoringDir, "memsvc-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash dashboard
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("memsvc-dashboard.json is not JSON: %v", err)
	}
	var exprs []string
	ids := map[int]string{}
	var walk func([]dashPanel)
	walk = func(panels []dashPanel) {
		for _, p := range panels {
			if other, dup := ids[p.ID]; dup || p.ID <= 0 {
				t.Errorf("panel %q: id %d is not unique and positive (also %q)", p.Title, p.ID, other)
			}
			ids[p.ID] = p.Title
			if p.Type != "row" {
				if len(p.Targets) == 0 {
					t.Errorf("panel %q has no query", p.Title)
				}
				for _, tg := range p.Targets {
					checkNames(t, "panel "+p.Title, tg.Expr, served)
					exprs = append(exprs, tg.Expr)
				}
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	if dash.Title == "" || len(ids) < 10 {
		t.Errorf("dashboard %q with %d panels", dash.Title, len(ids))
	}
	// The dashboard shows what operators look at.
	for _, want := range []string{"memsvc_http_requests_total", "memsvc_http_request_duration_seconds_bucket", "memsvc_records",
		"memsvc_recall_total", "memsvc_background_rounds_total", "memsvc_decay_panics_total", "memsvc_dream_pending_entries",
		"memsvc_audit_append_failures_total", "memsvc_storage_free_bytes"} {
		if !slices.ContainsFunc(exprs, func(e string) bool { return slices.Contains(metricNames(e), want) }) {
			t.Errorf("no dashboard panel shows %s", want)
		}
	}

	promtool := os.Getenv("MEMSVC_PROMTOOL")
	if promtool == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI sets MEMSVC_PROMTOOL (.ci/run installs promtool); it is unset")
		}
		t.Log("promtool checks not run: set MEMSVC_PROMTOOL to a promtool binary (.ci/run does)")
		return
	}
	runPromtool(t, promtool, monitoringDir, "check", "rules", "memsvc-alerts.yml")
	runPromtool(t, promtool, monitoringDir, "test", "rules", "memsvc-alerts.test.yml")
	runPromtool(t, promtool, monitoringDir, "check", "config", "prometheus-scrape.yml")
	// promtool parses the dashboard's queries as recording rules, with
	// Grafana's variables given values.
	vars := strings.NewReplacer("$__rate_interval", "5m", "$job", "memsvc", "$instance", ".+")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for _, e := range exprs {
		q, err := json.Marshal(vars.Replace(e))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("      - record: dashboard:query\n        expr: " + string(q) + "\n")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard-queries.yml"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, promtool, dir, "check", "rules", "dashboard-queries.yml")
}

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	Title  string      `json:"title"`
	Panels []dashPanel `json:"panels"`
}

type dashPanel struct {
	ID      int         `json:"id"`
	Type    string      `json:"type"`
	Title   string      `json:"title"`
	Panels  []dashPanel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

func runPromtool(t *testing.T, promtool, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(promtool, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// checkNames fails the test for each metric name in expr that is not
// served.
func checkNames(t *testing.T, where, expr string, served map[string]bool) {
	t.Helper()
	names := metricNames(expr)
	if len(names) == 0 {
		t.Errorf("%s: no metric in %q", where, expr)
	}
	for _, n := range names {
		if !served[n] {
			t.Errorf("%s: %s is not a series memsvc serves (%q)", where, n, expr)
		}
	}
}

// servedSeries runs a server, makes it answer a store, a recall and a
// failed request, and returns the names of the series its /metrics
// serves: every family, a histogram's _bucket, _sum and _count, and up,
// which Prometheus adds.
func servedSeries(t *testing.T) map[string]bool {
	t.Helper()
	srv := startServer(t, t.TempDir(), "MEMSVC_HTTP__METRICS_ENABLED=true")
	storeNote(t, srv, "a note for the metrics")
	if code := call(t, "POST", srv.url("/v1/recall/query"), map[string]any{"cue": map[string]any{"text": "note"}}, nil); code != 200 {
		t.Fatalf("recall: %d", code)
	}
	if code := call(t, "GET", srv.url("/v1/introspect/record/not-a-uuid"), nil, nil); code != 400 {
		t.Fatalf("a bad request: %d", code)
	}
	client := http.Client{Timeout: 20 * time.Second}
	resp, err := client.Get(srv.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{"up": true}
	for name, f := range families {
		served[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				served[name+suffix] = true
			}
		}
	}
	t.Logf("series served: %v", slices.Sorted(maps.Keys(served)))
	return served
}

var (
	promqlStrings = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promqlIdent   = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
)

// promqlKeywords are the words of PromQL that are not metric names when
// no parenthesis follows them: operators, modifiers, and aggregations
// (followed by by or without).
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
}

// promqlLabelLists are the words followed by a parenthesised list of
// label names.
var promqlLabelLists = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// metricNames returns the metric names a PromQL expression selects: the
// identifiers outside strings, label matchers ({...}), ranges ([...]) and
// label lists (by (...) and the like) that are neither keywords nor
// followed by "(" (functions and aggregations).
func metricNames(expr string) []string {
	s := promqlStrings.ReplaceAllString(expr, `""`)
	s = stripBetween(s, '{', '}')
	s = stripBetween(s, '[', ']')
	var names []string
	locs := promqlIdent.FindAllStringIndex(s, -1)
	skipUntil := -1
	for _, loc := range locs {
		start, end := loc[0], loc[1]
		if start < skipUntil {
			continue
		}
		// Part of a number such as 1e3 or 0x1f, or of a duration.
		if start > 0 && (s[start-1] >= '0' && s[start-1] <= '9' || s[start-1] == '.') {
			continue
		}
		word := s[start:end]
		rest := strings.TrimLeft(s[end:], " \t\n")
		if promqlLabelLists[word] && strings.HasPrefix(rest, "(") {
			open := len(s) - len(rest)
			skipUntil = open + strings.IndexByte(s[open:], ')') + 1
			continue
		}
		if promqlKeywords[word] || strings.HasPrefix(rest, "(") {
			continue
		}
		if !slices.Contains(names, word) {
			names = append(names, word)
		}
	}
	return names
}

// stripBetween removes what lies between open and close (not nested).
func stripBetween(s string, open, close byte) string {
	var b strings.Builder
	in := false
	for i := range len(s) {
		switch {
		case !in && s[i] == open:
			in = true
			b.WriteByte(open)
		case in && s[i] == close:
			in = false
			b.WriteByte(close)
		case !in:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// TestMetricNames pins the PromQL reading of TestMonitoringKit.
func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`up{job="memsvc"} == 0`, []string{"up"}},
		{`sum by (job, instance) (rate(a_total{status=~"5.."}[5m])) / sum by (job, instance) (rate(a_total[5m])) > 0.05`, []string{"a_total"}},
		{`histogram_quantile(0.99, sum by (le, path) (rate(h_bucket{job="$job"}[$__rate_interval])))`, []string{"h_bucket"}},
		{`free < on (job, instance) group_left () (2 * floor)`, []string{"free", "floor"}},
		{`sum(rate(x[5m])) by (store) and on() y offset 1h unless z{a="by (b)"}`, []string{"x", "y", "z"}},
		{`min_over_time(q[25h:1m]) > 1e3`, []string{"q"}},
		{`label_replace(m, "dst", "$1", "src", "(.*)")`, []string{"m"}},
	} {
		if got := metricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("metricNames(%q) = %v, want %v", tc.expr, got, tc.want)
		}
	}
}
