package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/ui"
)

// The inspector's tests drive the page in a real headless Chromium from
// Debian's packages (.ci/run installs it; MEMSVC_CHROMIUM names another
// binary), with chromedp over the browser's DevTools pipe. The browser
// talks only to the server on 127.0.0.1; its background networking is off.

const (
	// browserBudget bounds a whole browser session; stepTimeout one step.
	browserBudget = 4 * time.Minute
	stepTimeout   = 30 * time.Second
)

// chromiumPath finds the browser: MEMSVC_CHROMIUM, else Debian's
// chromium on PATH. In CI a missing browser fails the test; elsewhere the
// checks that need it are left out with a log line saying how to run them.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MEMSVC_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome-headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium found: CI needs it for the inspector tests (.ci/run installs Debian's chromium); set MEMSVC_CHROMIUM or put chromium on PATH")
	}
	t.Log("browser checks not run: no Chromium on PATH (apt-get install chromium, or set MEMSVC_CHROMIUM)")
	return ""
}

// artifactDir is where the screenshots go: $MEMSVC_ARTIFACTS_DIR/<test>
// when set, else the test's artifact directory (kept with go test
// -artifacts).
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := t.ArtifactDir()
	if base := os.Getenv("MEMSVC_ARTIFACTS_DIR"); base != "" {
		dir = filepath.Join(base, t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots are written to %s", dir)
	return dir
}

// seenRequest is one request the page made, with its answer's status.
type seenRequest struct {
	url, auth, cookie string
	status            int64
}

// browser is a headless Chromium tab on the inspector of one server.
type browser struct {
	t     *testing.T
	ctx   context.Context
	base  string // http://127.0.0.1:port
	shots string
	n     int

	mu       sync.Mutex
	requests map[network.RequestID]*seenRequest
	order    []network.RequestID
	problems []string // exceptions, CSP reports, errors other than failed loads
}

// newBrowser starts a headless Chromium (see chromiumPath) for the
// inspector at base; it returns nil when there is no browser and the
// browser checks are left out.
func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	exe := chromiumPath(t)
	if exe == "" {
		return nil
	}
	parent, cancelParent := context.WithTimeout(t.Context(), browserBudget)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1366, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		cancelParent()
	})
	b := &browser{t: t, ctx: ctx, base: base, shots: artifactDir(t), requests: map[network.RequestID]*seenRequest{}}
	if err := chromedp.Listen(ctx, b.observe); err != nil {
		t.Fatalf("start Chromium (%s): %v", exe, err)
	}
	return b
}

// observe records requests, answers and problems; it runs on the loop
// that reads the browser's messages, so it only takes notes.
func (b *browser) observe(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	header := func(h network.Headers, name string) string {
		for k, v := range h {
			if strings.EqualFold(k, name) {
				return fmt.Sprint(v)
			}
		}
		return ""
	}
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		if _, ok := b.requests[ev.RequestID]; !ok {
			b.order = append(b.order, ev.RequestID)
		}
		b.requests[ev.RequestID] = &seenRequest{url: ev.Request.URL, auth: header(ev.Request.Headers, "Authorization"), cookie: header(ev.Request.Headers, "Cookie")}
	case *network.EventResponseReceived:
		if r, ok := b.requests[ev.RequestID]; ok {
			r.status = ev.Response.Status
		}
	case *runtime.EventExceptionThrown:
		b.problems = append(b.problems, "exception: "+ev.ExceptionDetails.Text+exceptionDesc(ev.ExceptionDetails))
	case *log.EventEntryAdded:
		// A failed load (the 401s and 404s the tests provoke) is logged as
		// an error too; anything else at error level is a problem, and so
		// is any report of the Content-Security-Policy.
		e := ev.Entry
		if strings.Contains(e.Text, "Content Security Policy") || (e.Level == log.EntryLevelError && !strings.HasPrefix(e.Text, "Failed to load resource")) {
			b.problems = append(b.problems, fmt.Sprintf("log %s/%s: %s", e.Source, e.Level, e.Text))
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			b.problems = append(b.problems, "console."+string(ev.Type))
		}
	}
}

func exceptionDesc(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return " " + d.Exception.Description
	}
	return ""
}

// do runs actions with a step timeout.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.fail("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.fail("evaluate %s: %v", expr, err)
	}
	return v
}

// wait polls a JavaScript condition until it holds (bounded).
func (b *browser) wait(what, cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(stepTimeout-time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		b.fail("waiting for %s (%s): %v", what, cond, err)
	}
}

// waitView waits until the inspector has drawn view name and its heading
// is h1 (a prefix of it, when h1 ends with "…").
func (b *browser) waitView(name, h1 string) {
	b.t.Helper()
	cond := fmt.Sprintf(`(() => { const m = document.getElementById('main'); const h = m.querySelector('h1');
		return m.dataset.ready === 'true' && m.dataset.view === %q && !!h && h.textContent === %q; })()`, name, h1)
	b.wait("view "+name+" titled "+h1, cond)
}

// text is the text content of the first element matching css.
func (b *browser) text(css string) string {
	b.t.Helper()
	return eval[string](b, fmt.Sprintf(`(document.querySelector(%q) || {textContent: '<missing %s>'}).textContent`, css, css))
}

// texts are the text contents of every element matching css.
func (b *browser) texts(css string) []string {
	b.t.Helper()
	return eval[[]string](b, fmt.Sprintf(`[...document.querySelectorAll(%q)].map((e) => e.textContent)`, css))
}

// attrs are the values of attribute name of every element matching css.
func (b *browser) attrs(css, name string) []string {
	b.t.Helper()
	return eval[[]string](b, fmt.Sprintf(`[...document.querySelectorAll(%q)].map((e) => e.getAttribute(%q))`, css, name))
}

// shot saves a screenshot of the viewport (or the whole page) as a PNG.
func (b *browser) shot(name string, full bool) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	action := chromedp.CaptureScreenshot()
	if full {
		action = chromedp.FullScreenshot(100)
	}
	buf, err := chromedp.Run(ctx, action)
	if err != nil {
		b.fail("screenshot %s: %v", name, err)
	}
	b.n++
	path := filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", b.n, name))
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// fail stops the test with the page's heading and status for context.
func (b *browser) fail(format string, args ...any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), 5*time.Second)
	defer cancel()
	state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash + ' | ' + (document.querySelector('#main h1') || {}).textContent + ' | ' + document.getElementById('status').textContent + ' | ' + (document.querySelector('.error-box, #login-error') || {}).textContent`))
	b.t.Fatalf(format+"\npage: %s", append(args, state)...)
}

// seen returns the requests made so far, in order.
func (b *browser) seen() []seenRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]seenRequest, 0, len(b.order))
	for _, id := range b.order {
		out = append(out, *b.requests[id])
	}
	return out
}

// checkClean fails on any request to another origin and on any problem
// the page reported (exceptions, CSP violations, console errors).
func (b *browser) checkClean() {
	b.t.Helper()
	for _, r := range b.seen() {
		// data: URLs are the browser's own (form control icons), not loads.
		if !strings.HasPrefix(r.url, b.base+"/") && !strings.HasPrefix(r.url, "data:") {
			b.t.Errorf("the page requested %s, outside %s", r.url, b.base)
		}
		if r.cookie != "" {
			b.t.Errorf("a request to %s carried a cookie", r.url)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		b.t.Errorf("the page reported: %s", p)
	}
}

// apiCall sends a JSON request with an optional key and decodes the answer.
func apiCall(t *testing.T, method, url, key string, body, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v\n%.300s", method, url, err, data)
		}
	}
	return resp.StatusCode
}

// inspectorData is what seedInspector stored.
type inspectorData struct {
	deploy, tea, db memory.ID // procedural, episodic with emotion, semantic with links to both
	fillers         int
}

const (
	deployText = "The deploy pipeline uses blue-green releases behind the load balancer."
	teaText    = "Alice prefers tea over coffee during the morning standup."
	dbText     = "Postgres 16 is the database of record; Redis only caches sessions."
)

// seedInspector stores fillers (in one batch), then three records with
// associations, emotion and meta-memory, and raw entries in two sessions.
func seedInspector(t *testing.T, base, key string, fillers int) inspectorData {
	t.Helper()
	d := inspectorData{fillers: fillers}
	if fillers > 0 {
		batch := memory.EncodeBatchRequest{}
		for i := range fillers {
			batch.Records = append(batch.Records, memory.EncodeStoreRequest{Content: memory.TextContent(fmt.Sprintf("Standup note %03d: worked on ticket MEM-%d.", i, 1000+i))})
		}
		var out memory.EncodeBatchResponse
		if code := apiCall(t, "POST", base+"/v1/encode/batch", key, batch, &out); code != 200 || len(out.Results) != fillers {
			t.Fatalf("batch: %d, %d results", code, len(out.Results))
		}
	}
	store := func(req memory.EncodeStoreRequest) memory.ID {
		var out memory.EncodeStoreResponse
		if code := apiCall(t, "POST", base+"/v1/encode", key, req, &out); code != 200 {
			t.Fatalf("encode: %d", code)
		}
		return out.RecordID
	}
	d.deploy = store(memory.EncodeStoreRequest{
		Content: memory.TextContent(deployText), Store: new(memory.StoreProcedural),
		Meta: &memory.MetaMemory{Intent: new("remember how we deploy"), Rationale: new("rollbacks must be instant"), Tags: []string{"deploy", "ops"}},
	})
	d.tea = store(memory.EncodeStoreRequest{
		Content:      memory.TextContent(teaText),
		Emotion:      &memory.EmotionVector{Joy: 0.8, Intensity: 0.6, Valence: 0.7},
		Associations: []memory.ManualAssociation{{TargetID: d.deploy, AssociationType: memory.AssocCausal, Weight: 0.7}},
	})
	dbContent := memory.TextContent(dbText)
	dbContent.Summary = new("Database choices")
	d.db = store(memory.EncodeStoreRequest{
		Content: dbContent, Store: new(memory.StoreSemantic),
		Associations: []memory.ManualAssociation{
			{TargetID: d.deploy, AssociationType: memory.AssocSemantic, Weight: 0.9},
			{TargetID: d.tea, AssociationType: memory.AssocTemporal, Weight: 0.4},
		},
	})
	raw := func(session string, speaker memory.RawSpeaker, vis memory.Visibility, sec memory.SecrecyLevel, text string) memory.EncodeStoreRawRequest {
		return memory.EncodeStoreRawRequest{SessionID: session, Source: memory.SourceConversation, Speaker: speaker, Visibility: vis, SecrecyLevel: sec, Content: memory.TextContent(text)}
	}
	rawBatch := memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{
		raw("sess-alpha", memory.SpeakerUser, memory.VisibilityNormal, memory.SecrecyPublic, "Can you check why the build is red?"),
		raw("sess-alpha", memory.SpeakerAssistant, memory.VisibilityNormal, memory.SecrecyPublic, "The lint step fails on an unused import."),
		raw("sess-beta", memory.SpeakerUser, memory.VisibilityPrivateScratch, memory.SecrecyPublic, "scratch thought: try bisect"),
		raw("sess-beta", memory.SpeakerTool, memory.VisibilityNormal, memory.SecrecySecret, "deploy token rotated"),
	}}
	if code := apiCall(t, "POST", base+"/v1/encode/raw/batch", key, rawBatch, nil); code != 200 {
		t.Fatalf("raw batch: %d", code)
	}
	return d
}

// TestInspectorInBrowser drives the inspector in headless Chromium over a
// server holding 323 memories: the newest page and the next, a search, a
// record with its forecast, emotion and associations, the graph around it
// and a click on a node, the timeline and its second page, by day and by
// week, the journal with and without its filters, the dashboard, the
// store and time filters of the search form, and the keyboard path. It
// checks the rendered text, that the page asked nothing of another origin
// and reported no error or CSP violation, and that looking at memories
// did not reinforce them. Screenshots go to the artifact directory.
func TestInspectorInBrowser(t *testing.T) {
	srv := startServer(t, t.TempDir(), "MEMSVC_HTTP__METRICS_ENABLED=true")
	base := "http://" + srv.addr
	d := seedInspector(t, base, "", 320)
	total := d.fillers + 3

	// Without a browser: the page and its assets are served with the
	// policy, and / leads to it.
	resp, err := http.Get(base + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("/ui/: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if code := apiCall(t, "GET", base+"/", "", nil, nil); code != http.StatusFound {
		t.Fatalf("GET / answered %d, want a redirect to the inspector", code)
	}

	b := newBrowser(t, base)
	if b == nil {
		return
	}

	// The first page lists the newest memories, a page of 25.
	b.do("open the inspector", chromedp.Navigate(base+"/ui/"))
	b.waitView("memories", "Newest memories")
	if got := b.text("#result-summary"); got != "25 memories, newest first" {
		t.Errorf("summary %q", got)
	}
	titles := b.texts(".result-title")
	if len(titles) != 25 || titles[0] != "Database choices" || titles[1] != teaText || titles[3] != "Standup note 319: worked on ticket MEM-1319." {
		t.Errorf("newest page: %d titles, first %q", len(titles), titles[:min(4, len(titles))])
	}
	first := b.attrs(".result", "data-id")
	b.shot("newest", false)

	// The next page starts just before the oldest shown, without overlap.
	b.do("older", chromedp.Click(chromedp.CSS(`a[rel="next"]`)))
	b.waitView("memories", "Older memories")
	older := b.attrs(".result", "data-id")
	if len(older) != 25 {
		t.Errorf("older page has %d memories", len(older))
	}
	for _, id := range older {
		if slices.Contains(first, id) {
			t.Errorf("memory %s is on both pages", id)
		}
	}
	if got := b.texts(".result-title"); len(got) == 0 || got[0] != "Standup note 297: worked on ticket MEM-1297." {
		t.Errorf("older page starts with %q", got[:min(1, len(got))])
	}

	// Search, in perfect mode.
	b.do("search",
		chromedp.SendKeys(chromedp.ID("q"), "Postgres"),
		chromedp.SetValue(chromedp.ID("mode"), "perfect"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
	)
	b.waitView("memories", "Search: Postgres")
	if got := b.texts(".result-title"); len(got) == 0 || got[0] != "Database choices" {
		t.Fatalf("search results %q", got)
	}
	if !strings.Contains(b.text(".result-meta .score"), "score ") {
		t.Errorf("a search result shows no score")
	}
	b.shot("search", false)

	// The record: content as text, forecast, meta-memory, associations.
	b.do("open the record", chromedp.Click(chromedp.CSS(".result-title")))
	b.waitView("record", "Database choices")
	if got := b.text("#record-text"); got != dbText {
		t.Errorf("record text %q", got)
	}
	forecast := b.text("#forecast-text")
	if !regexp.MustCompile(`^Fidelity now 1\.000; in \d+ (mo|d|y) 0\.\d{3}\. It falls below 0\.05 \(dormant\) around .+\.$`).MatchString(forecast) {
		t.Errorf("forecast text %q", forecast)
	}
	if n := eval[int](b, `document.querySelectorAll('#forecast-chart circle.dot').length`); n != 13 {
		t.Errorf("forecast curve has %d points, want 13", n)
	}
	links := b.texts("#associations tbody a")
	if len(links) != 2 || links[0] != deployText || links[1] != teaText {
		t.Errorf("associations %q", links)
	}
	if got := b.texts("#record-facts dd"); len(got) < 2 || got[0] != d.db.String() || got[1] != "semantic" {
		t.Errorf("record facts %q", got)
	}
	b.shot("record", true)

	// An association leads to its record, with its emotion.
	b.do("follow an association", chromedp.Click(chromedp.CSS(`#associations tbody tr:nth-child(2) a`)))
	b.waitView("record", teaText)
	if got := b.text("#emotion-text"); got != "Mostly joy; intensity 0.60, valence 0.70." {
		t.Errorf("emotion %q", got)
	}
	b.do("back to the first record", chromedp.NavigateBack())
	b.waitView("record", "Database choices")

	// The graph around it; a node is a link to its record.
	b.do("open the graph", chromedp.Click(chromedp.CSS(`#record-assoc a[href^="#/graph/"]`)))
	b.waitView("graph", "Association graph around a record")
	nodes := b.attrs("#graph-svg a.node", "data-id")
	for _, id := range []memory.ID{d.db, d.deploy, d.tea} {
		if !slices.Contains(nodes, id.String()) {
			t.Errorf("graph lacks %s; nodes %v", id, nodes)
		}
	}
	if got := b.attrs("#graph-svg a.node.center", "data-id"); len(got) != 1 || got[0] != d.db.String() {
		t.Errorf("centre %v", got)
	}
	if n := eval[int](b, `document.querySelectorAll('#graph-svg line.edge').length`); n < 3 {
		t.Errorf("graph draws %d edges, want at least the 3 stored", n)
	}
	if got := b.text("#graph-summary"); !strings.HasPrefix(got, fmt.Sprintf("%d records, ", len(nodes))) {
		t.Errorf("graph summary %q for %d nodes", got, len(nodes))
	}
	b.shot("graph", false)
	b.do("click a node", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#graph-svg a.node[data-id=%q] circle`, d.deploy))))
	b.waitView("record", deployText)
	if got := b.texts("#meta dd"); !slices.Contains(got, "remember how we deploy") || !slices.Contains(got, "rollbacks must be instant") {
		t.Errorf("meta-memory %q", got)
	}

	// The timeline: 300 memories, truncated, then the rest.
	b.do("open the timeline", chromedp.Click(chromedp.CSS(`#nav a[data-view="timeline"]`)))
	b.waitView("timeline", "Timeline")
	if got := b.text("#timeline-summary"); !strings.HasPrefix(got, "300 memories in 1 day.") {
		t.Errorf("timeline summary %q", got)
	}
	if !strings.Contains(b.text("#timeline-truncated"), "more memories than the 300 shown") {
		t.Errorf("timeline does not say it is truncated")
	}
	if n := eval[int](b, `document.querySelectorAll('#timeline-list .result').length`); n != 300 {
		t.Errorf("timeline lists %d memories", n)
	}
	if got := b.texts(".bucket h2"); len(got) != 1 || !strings.HasSuffix(got[0], "— 300 memories") {
		t.Errorf("timeline buckets %q", got)
	}
	if n := eval[int](b, `[...document.querySelectorAll('svg.chart rect.bar')].filter((r) => Number(r.getAttribute('height')) > 0).length`); n != 1 {
		t.Errorf("timeline draws %d non-empty bars, want 1", n)
	}
	firstPage := b.attrs("#timeline-list .result", "data-id")
	b.shot("timeline", false)
	b.do("later in the window", chromedp.Click(chromedp.CSS("#timeline-truncated a")))
	b.wait("the second timeline page", `document.getElementById('main').dataset.ready === 'true' && !!document.getElementById('timeline-summary') && document.getElementById('timeline-summary').textContent.includes('continuing')`)
	rest := b.attrs("#timeline-list .result", "data-id")
	if len(rest) != total-300 {
		t.Errorf("second timeline page has %d memories, want %d", len(rest), total-300)
	}
	for _, id := range rest {
		if slices.Contains(firstPage, id) {
			t.Errorf("memory %s is on both timeline pages", id)
		}
	}

	// Bars per week: the same window in one week, also truncated.
	b.do("bars per week",
		chromedp.SetValue(chromedp.ID("t-g"), "week"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
	)
	// (The day view's second page says "continuing"; the week view's first does not.)
	b.wait("the week view", `location.hash.includes('g=week') && document.getElementById('main').dataset.ready === 'true' && !!document.getElementById('timeline-summary') && !document.getElementById('timeline-summary').textContent.includes('continuing')`)
	if got := b.text("#timeline-summary"); !strings.HasPrefix(got, "300 memories in 1 week.") {
		t.Errorf("week timeline summary %q", got)
	}
	if got := b.texts(".bucket h2"); len(got) != 1 || !strings.HasPrefix(got[0], "Week of ") || !strings.HasSuffix(got[0], "— 300 memories") {
		t.Errorf("week timeline buckets %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll('svg.chart rect.bar').length`); n < 5 || n > 6 {
		t.Errorf("the week timeline draws %d bars, want one per week of the 30-day window", n)
	}
	b.shot("timeline-week", false)

	// The journal: by default normal, public and sensitive entries only.
	b.do("open the journal", chromedp.Click(chromedp.CSS(`#nav a[data-view="journal"]`)))
	b.waitView("journal", "Raw journal")
	if got := b.texts("#journal-list pre.content"); !slices.Equal(got, []string{"The lint step fails on an unused import.", "Can you check why the build is red?"}) {
		t.Errorf("journal by default %q", got)
	}
	b.do("widen the journal filters",
		chromedp.Click(chromedp.ID("j-scratch")),
		chromedp.Click(chromedp.ID("j-sec-secret")),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
	)
	b.wait("the widened journal", `location.hash.includes('scratch=1') && document.getElementById('main').dataset.ready === 'true' && document.querySelectorAll('#journal-list article.entry').length === 4`)
	if got := b.texts(".session-group h2 code"); !slices.Equal(got, []string{"sess-beta", "sess-alpha"}) {
		t.Errorf("journal sessions %q", got)
	}
	if got := b.texts("#journal-list .badge.warn"); !slices.Equal(got, []string{"private scratch"}) {
		t.Errorf("journal visibility badges %q", got)
	}
	if got := b.texts("#journal-list .secrecy-secret"); !slices.Equal(got, []string{"secret"}) {
		t.Errorf("journal secrecy badges %q", got)
	}
	b.shot("journal", false)

	// The dashboard, from the stats route and /metrics.
	b.do("open the dashboard", chromedp.Click(chromedp.CSS(`#nav a[data-view="dashboard"]`)))
	b.waitView("dashboard", "Dashboard")
	for stat, want := range map[string]string{
		"total_records":    fmt.Sprint(total),
		"store_episodic":   fmt.Sprint(d.fillers + 1),
		"store_semantic":   "1",
		"store_procedural": "1",
		"dream_backlog":    "2 of 4 raw entries", // dreaming leaves private scratch and secret entries out by default
		"decay_loop":       "running",
	} {
		if got := b.text(fmt.Sprintf(`[data-stat=%q]`, stat)); got != want {
			t.Errorf("dashboard %s = %q, want %q", stat, got, want)
		}
	}
	if got := b.texts("#dashboard .card dt"); !slices.Contains(got, "decay rounds") {
		t.Errorf("dashboard shows no decay rounds from /metrics: %q", got)
	}
	b.shot("dashboard", false)

	// The dark scheme follows prefers-color-scheme.
	scheme := func(value string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
		defer cancel()
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: value}},
		}); err != nil {
			t.Fatalf("emulate %s: %v", value, err)
		}
	}
	light := eval[string](b, `getComputedStyle(document.body).backgroundColor`)
	scheme("dark")
	if dark := eval[string](b, `getComputedStyle(document.body).backgroundColor`); dark == light || dark != "rgb(20, 24, 31)" {
		t.Errorf("dark scheme background %q (light %q)", dark, light)
	}
	b.shot("dashboard-dark", false)
	scheme("light")

	// The store and time filters of the search form: two stores, created
	// since 2000, list the two records of those stores; created until
	// 2000 lists none.
	b.do("the newest page again", chromedp.Navigate(base+"/ui/#/"))
	b.waitView("memories", "Newest memories")
	b.do("filter by store and time",
		chromedp.Click(chromedp.ID("st-semantic")),
		chromedp.Click(chromedp.ID("st-procedural")),
		chromedp.SetValue(chromedp.ID("from"), "2000-01-01T00:00"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
	)
	b.wait("the filtered list", `location.hash.includes('stores=semantic%2Cprocedural') && location.hash.includes('from=') && document.getElementById('main').dataset.ready === 'true' && document.getElementById('result-summary').textContent === '2 memories, newest first'`)
	if got := b.texts(".result-title"); !slices.Equal(got, []string{"Database choices", deployText}) {
		t.Errorf("semantic and procedural memories since 2000: %q", got)
	}
	if got := b.texts(`.result .badge[class*="store-"]`); !slices.Equal(got, []string{"semantic", "procedural"}) {
		t.Errorf("store badges %q", got)
	}
	b.shot("search-filters", false)
	b.do("created until 2000",
		chromedp.Click(chromedp.ID("st-semantic")),
		chromedp.Click(chromedp.ID("st-procedural")),
		chromedp.SetValue(chromedp.ID("from"), ""),
		chromedp.SetValue(chromedp.ID("to"), "2000-01-01T00:00"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
	)
	b.wait("the empty list", `location.hash.includes('to=') && !location.hash.includes('stores=') && document.getElementById('main').dataset.ready === 'true' && document.getElementById('result-summary').textContent === '0 memories, newest first'`)
	if n := eval[int](b, `document.querySelectorAll('.result').length`); n != 0 {
		t.Errorf("%d memories created until 2000", n)
	}
	if got := b.text(".empty"); got != "No memories here yet." {
		t.Errorf("the empty list says %q", got)
	}
	// "Until" a minute takes in the whole minute: until the minute the
	// newest memory was created in lists it.
	var newest memory.MemoryRecord
	if code := apiCall(t, "GET", base+"/v1/introspect/record/"+d.db.String(), "", nil, &newest); code != 200 {
		t.Fatalf("inspect: %d", code)
	}
	at := newest.CreatedAt.Format(time.RFC3339Nano)
	eval[bool](b, fmt.Sprintf(`(() => { const d = new Date(%q); const p = (n) => String(n).padStart(2, '0');
		document.getElementById('to').value = d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes());
		return true; })()`, at))
	b.do("created until the newest memory's minute", chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)))
	b.wait("the list until that minute", `!location.hash.includes('to=2000') && document.getElementById('main').dataset.ready === 'true' && !!document.querySelector('.result')`)
	if got := b.texts(".result-title"); len(got) == 0 || got[0] != "Database choices" {
		t.Errorf("until the minute of %s the list starts with %q", at, got[:min(1, len(got))])
	}

	// Keyboard: the skip link comes first and moves focus to the content;
	// a result link opens with Enter and focus moves to the new heading.
	b.do("load the first page afresh", chromedp.Navigate(base+"/ui/#/"), chromedp.Reload())
	b.waitView("memories", "Newest memories")
	b.do("tab to the skip link", chromedp.KeyEvent("\t"))
	if got := eval[string](b, `document.activeElement.textContent`); got != "Skip to content" {
		t.Errorf("first Tab focuses %q", got)
	}
	b.do("use the skip link", chromedp.KeyEvent("\r"))
	if got := eval[string](b, `document.activeElement.id`); got != "main" {
		t.Errorf("the skip link moved focus to %q", got)
	}
	b.do("open a result with Enter", chromedp.Focus(chromedp.CSS(".result-title")), chromedp.KeyEvent("\r"))
	b.waitView("record", "Database choices")
	if got := eval[string](b, `document.activeElement.tagName + ' ' + document.activeElement.textContent`); got != "H1 Database choices" {
		t.Errorf("after opening a record focus is on %q", got)
	}

	// Looking never reinforced anything.
	var rec memory.MemoryRecord
	if code := apiCall(t, "GET", base+"/v1/introspect/record/"+d.db.String(), "", nil, &rec); code != 200 {
		t.Fatalf("inspect: %d", code)
	}
	if rec.AccessCount != 0 || rec.Fidelity.ReinforcementCount != 0 {
		t.Errorf("the inspector reinforced a record it showed: access_count %d, reinforcements %d", rec.AccessCount, rec.Fidelity.ReinforcementCount)
	}
	b.checkClean()
}

// TestInspectorNeedsKey: with auth on, the page's files load without a
// key but no data does: the page asks for a key, refuses a wrong one,
// shows the memories with the right one (sent as a Bearer header on every
// API call, never as a cookie), keeps it for the tab, and forgets it.
func TestInspectorNeedsKey(t *testing.T) {
	const key = "inspector-key-0123456789abcdef"
	srv := startServer(t, t.TempDir(), "MEMSVC_AUTH__ENABLED=true", "MEMSVC_AUTH_API_KEYS="+key)
	base := "http://" + srv.addr
	seedInspector(t, base, key, 0)

	for _, path := range []string{"/ui/", "/ui/js/main.js", "/ui/app.css"} {
		if code := apiCall(t, "GET", base+path, "", nil, nil); code != 200 {
			t.Errorf("GET %s without a key: %d, want 200 (the files are not secret)", path, code)
		}
	}
	if code := apiCall(t, "POST", base+"/v1/recall/query", "", map[string]any{}, nil); code != 401 {
		t.Fatalf("recall without a key: %d, want 401", code)
	}

	b := newBrowser(t, base)
	if b == nil {
		return
	}
	b.do("open the inspector", chromedp.Navigate(base+"/ui/"))
	b.wait("the key form", `!document.getElementById('login').hidden && document.activeElement.id === 'login-key'`)
	if got := b.text("#login-title"); got != "API key needed" {
		t.Errorf("login heading %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll('.result').length`); n != 0 {
		t.Errorf("%d memories shown without a key", n)
	}
	// Without a key every API call answers 401, the namespace list
	// included: no route answers data, or even names a namespace.
	api401, nsAsked := 0, false
	for _, r := range b.seen() {
		if strings.Contains(r.url, "/v1/") {
			if r.status != 401 || r.auth != "" {
				t.Errorf("before the key: %s answered %d (auth %q), want 401 without a key", r.url, r.status, r.auth)
			}
			api401++
			nsAsked = nsAsked || strings.HasSuffix(r.url, "/v1/namespaces")
		}
	}
	if api401 == 0 || !nsAsked {
		t.Errorf("before asking for the key the page made %d API calls (namespace list asked: %v), want the namespace list among them", api401, nsAsked)
	}
	b.shot("key-form", false)

	b.do("a wrong key",
		chromedp.SendKeys(chromedp.ID("login-key"), "not-the-key"),
		chromedp.Click(chromedp.CSS(`#login-form button[type="submit"]`)),
	)
	b.wait("the refusal", `document.getElementById('login-error').textContent.includes('refused')`)

	b.do("the right key",
		chromedp.SendKeys(chromedp.ID("login-key"), key),
		chromedp.Click(chromedp.CSS(`#login-form button[type="submit"]`)),
	)
	b.waitView("memories", "Newest memories")
	if got := b.texts(".result-title"); len(got) != 3 || got[0] != "Database choices" {
		t.Errorf("with the key: results %q", got)
	}
	b.shot("with-key", false)
	ok := 0
	for _, r := range b.seen() {
		if !strings.Contains(r.url, "/v1/") {
			continue
		}
		switch {
		case r.auth == "Bearer "+key:
			if r.status == 200 {
				ok++
			}
		case r.status != 401:
			t.Errorf("%s answered %d with auth %q", r.url, r.status, r.auth)
		}
	}
	if ok == 0 {
		t.Error("no API call succeeded with the key")
	}

	// The key stays for the tab (session storage), not in a cookie.
	b.do("reload", chromedp.Reload())
	b.waitView("memories", "Newest memories")
	if got := eval[string](b, `document.cookie`); got != "" {
		t.Errorf("the page set a cookie: %q", got)
	}
	b.do("forget the key", chromedp.Click(chromedp.ID("forget-key")))
	b.wait("the key form again", `!document.getElementById('login').hidden && document.getElementById('main').hidden`)
	b.do("reload", chromedp.Reload())
	b.wait("the key form after reload", `!document.getElementById('login').hidden`)
	b.checkClean()
}

// TestInspectorNamespaces checks the page's side of namespaces against an
// API stand-in that answers GET /v1/namespaces in the shape of
// memory.NamespacesResponse (the server's own route comes with namespace
// support): the selector lists the namespaces with their counts, every
// data call carries X-Memsvc-Namespace, choosing another namespace shows
// its memories, and the choice stays for the tab.
func TestInspectorNamespaces(t *testing.T) {
	inspector, err := ui.New()
	if err != nil {
		t.Fatal(err)
	}
	ids := memory.NewIDSource(nil, nil)
	var mu sync.Mutex
	var seen []string // X-Memsvc-Namespace of each recall
	api := http.NewServeMux()
	api.HandleFunc("GET /v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(memory.NamespacesResponse{Namespaces: []memory.NamespaceInfo{
			{Name: "default", TotalRecords: 3, RecordsByStore: map[string]uint32{"episodic": 3}},
			{Name: "proj-b", TotalRecords: 1, RecordsByStore: map[string]uint32{"episodic": 1}},
		}})
	})
	api.HandleFunc("POST /v1/recall/query", func(w http.ResponseWriter, r *http.Request) {
		ns := r.Header.Get("X-Memsvc-Namespace")
		mu.Lock()
		seen = append(seen, ns)
		mu.Unlock()
		rec := memory.MemoryRecord{ID: ids.New(), Store: memory.StoreEpisodic, CreatedAt: time.Now().UTC(),
			Content: memory.TextContent("a memory of namespace " + ns), Fidelity: memory.FidelityState{Score: 1}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(memory.RecallQueryResponse{Memories: []memory.RecalledMemory{{Record: rec, RenderedContent: rec.Content}}, TotalCandidates: 1})
	})
	ts := httptest.NewServer(ui.Mount(api, inspector))
	defer ts.Close()

	b := newBrowser(t, ts.URL)
	if b == nil {
		return
	}
	b.do("open the inspector", chromedp.Navigate(ts.URL+"/ui/"))
	b.waitView("memories", "Newest memories")
	if got := b.texts("#namespace option"); !slices.Equal(got, []string{"default (3)", "proj-b (1)"}) {
		t.Errorf("namespace options %q", got)
	}
	if got := b.text(".result-title"); got != "a memory of namespace default" {
		t.Errorf("default namespace shows %q", got)
	}
	b.do("choose proj-b", chromedp.Focus(chromedp.ID("namespace")), chromedp.KeyEvent(kb.ArrowDown))
	b.wait("proj-b's memories", `document.getElementById('main').dataset.ready === 'true' && (document.querySelector('.result-title') || {}).textContent === 'a memory of namespace proj-b'`)
	if got := eval[string](b, `document.activeElement.id`); got != "namespace" {
		t.Errorf("after choosing a namespace focus is on %q, want the selector", got)
	}
	b.shot("namespace", false)
	b.do("reload", chromedp.Reload())
	b.waitView("memories", "Newest memories")
	if got := eval[string](b, `document.getElementById('namespace').value`); got != "proj-b" {
		t.Errorf("after a reload the namespace is %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, []string{"default", "proj-b", "proj-b"}) {
		t.Errorf("recalls carried namespaces %q", seen)
	}
	b.checkClean()
}
