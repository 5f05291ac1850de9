package ui

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func newTest(t *testing.T) *Handler {
	t.Helper()
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// checkHardening checks the headers every answer of the handler carries.
func checkHardening(t *testing.T, target string, resp *http.Response) {
	t.Helper()
	for k, want := range map[string]string{
		"Content-Security-Policy": ContentSecurityPolicy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %s = %q, want %q", target, k, got, want)
		}
	}
}

func TestServesAssets(t *testing.T) {
	h := newTest(t)
	for target, ctype := range map[string]string{
		"/ui/":                  "text/html; charset=utf-8",
		"/ui/index.html":        "text/html; charset=utf-8",
		"/ui/app.css":           "text/css; charset=utf-8",
		"/ui/js/main.js":        "text/javascript; charset=utf-8",
		"/ui/js/views/graph.js": "text/javascript; charset=utf-8",
		"/ui/icon.svg":          "image/svg+xml",
	} {
		resp := get(t, h, http.MethodGet, target, nil)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", target, resp.StatusCode)
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != ctype {
			t.Errorf("%s: Content-Type %q, want %q", target, got, ctype)
		}
		if got := resp.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("%s: Cache-Control %q, want no-cache (revalidate, so upgrades show at once)", target, got)
		}
		if !regexp.MustCompile(`^"[0-9a-f]{24}"$`).MatchString(resp.Header.Get("ETag")) {
			t.Errorf("%s: ETag %q", target, resp.Header.Get("ETag"))
		}
		checkHardening(t, target, resp)
		name := strings.TrimPrefix(target, Prefix)
		if name == "" {
			name = "index.html"
		}
		want, err := fs.ReadFile(embedded, "assets/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != string(want) {
			t.Errorf("%s: body is not the embedded file", target)
		}
	}
}

// TestRevalidation: a browser that has the current file gets 304 and no
// body; one with an old copy gets the file.
func TestRevalidation(t *testing.T) {
	h := newTest(t)
	first := get(t, h, http.MethodGet, "/ui/js/api.js", nil)
	etag := first.Header.Get("ETag")
	resp := get(t, h, http.MethodGet, "/ui/js/api.js", map[string]string{"If-None-Match": etag})
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("same ETag: status %d, want 304", resp.StatusCode)
	}
	checkHardening(t, "304", resp)
	resp = get(t, h, http.MethodGet, "/ui/js/api.js", map[string]string{"If-None-Match": `"0000"`})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("old ETag: status %d, want 200", resp.StatusCode)
	}
}

func TestHeadAndMethods(t *testing.T) {
	h := newTest(t)
	resp := get(t, h, http.MethodHead, "/ui/", nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || len(body) != 0 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("HEAD: status %d, %d body bytes, type %q", resp.StatusCode, len(body), resp.Header.Get("Content-Type"))
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		resp := get(t, h, m, "/ui/index.html", nil)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: status %d, Allow %q", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
		checkHardening(t, m, resp)
	}
}

func TestUnknownAssets(t *testing.T) {
	h := newTest(t)
	for _, target := range []string{
		"/ui/nothing.js", "/ui/js/", "/ui/js", "/ui/assets/index.html", "/ui/%2e%2e/ui.go", "/ui/js/../../ui.go",
		"/ui/INDEX.HTML", "/ui/index.html/", "/elsewhere",
	} {
		resp := get(t, h, http.MethodGet, target, nil)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", target, resp.StatusCode)
		}
		if strings.Contains(string(body), "package ui") {
			t.Errorf("%s: served a source file", target)
		}
		checkHardening(t, target, resp)
	}
	long := "/ui/" + strings.Repeat("x", 5000)
	body, _ := io.ReadAll(get(t, h, http.MethodGet, long, nil).Body)
	if len(body) > 200 {
		t.Errorf("404 for a long name quotes %d bytes of it", len(body))
	}
}

func TestMount(t *testing.T) {
	h := newTest(t)
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	})
	m := Mount(api, h)
	for _, tc := range []struct {
		method, target string
		status         int
		location       string
	}{
		{http.MethodGet, "/", http.StatusFound, "ui/"},
		{http.MethodHead, "/", http.StatusFound, "ui/"},
		{http.MethodGet, "/ui", http.StatusFound, "ui/"},
		{http.MethodGet, "/ui/", http.StatusOK, ""},
		{http.MethodPost, "/", http.StatusTeapot, ""},
		{http.MethodGet, "/v1/introspect/stats", http.StatusTeapot, ""},
		{http.MethodGet, "/health", http.StatusTeapot, ""},
		{http.MethodGet, "/uix", http.StatusTeapot, ""},
	} {
		resp := get(t, m, tc.method, tc.target, nil)
		if resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.location {
			t.Errorf("%s %s: status %d location %q, want %d %q", tc.method, tc.target, resp.StatusCode, resp.Header.Get("Location"), tc.status, tc.location)
		}
	}
}

func TestNewRefusesUnknownTypes(t *testing.T) {
	fsys := fstest.MapFS{
		"assets/index.html": {Data: []byte("<!doctype html>")},
		"assets/font.woff2": {Data: []byte("x")},
	}
	if _, err := newHandler(fsys, "assets"); err == nil || !strings.Contains(err.Error(), "font.woff2") {
		t.Fatalf("an asset of unknown type was accepted: %v", err)
	}
	if _, err := newHandler(fstest.MapFS{"assets/a.js": {Data: []byte("")}}, "assets"); err == nil {
		t.Fatal("assets without index.html were accepted")
	}
}

// TestAssetsSelfContained: the page loads nothing from elsewhere, has no
// inline script or style (the CSP would block them), never writes markup
// from strings, and every file it names exists.
func TestAssetsSelfContained(t *testing.T) {
	h := newTest(t)
	urlRE := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	for name, a := range h.files {
		text := string(a.data)
		for _, m := range urlRE.FindAllString(text, -1) {
			if m != "http://www.w3.org" {
				t.Errorf("%s names an address elsewhere: %s", name, m)
			}
		}
		if strings.Contains(text, "@import") || regexp.MustCompile(`url\([^#]`).MatchString(text) {
			t.Errorf("%s loads a resource from CSS (url() other than a #fragment, or @import)", name)
		}
		if path.Ext(name) == ".js" {
			for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "document.cookie", "localStorage"} {
				if strings.Contains(text, bad) {
					t.Errorf("%s uses %s", name, bad)
				}
			}
			for _, m := range regexp.MustCompile(`(?m)^\s*(?:import|export)\b[^;]*?from\s+'([^']+)'`).FindAllStringSubmatch(text, -1) {
				target := path.Join(path.Dir(name), m[1])
				if !strings.HasPrefix(m[1], "./") && !strings.HasPrefix(m[1], "../") {
					t.Errorf("%s imports %q: only relative imports of our own modules", name, m[1])
				} else if _, ok := h.files[target]; !ok {
					t.Errorf("%s imports %q, which is not an asset", name, m[1])
				}
			}
		}
	}
	index := string(h.files["index.html"].data)
	for _, m := range regexp.MustCompile(`<script\b[^>]*>([^<]*)</script>`).FindAllStringSubmatch(index, -1) {
		if !strings.Contains(m[0], `src="`) || strings.TrimSpace(m[1]) != "" {
			t.Errorf("inline script in index.html: %s", m[0])
		}
	}
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`\son[a-z]+=`), regexp.MustCompile(`\sstyle=`), regexp.MustCompile(`<style`)} {
		if bad.MatchString(index) {
			t.Errorf("index.html has inline code or style: %s", bad)
		}
	}
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"#]+)"`).FindAllStringSubmatch(index, -1) {
		if _, ok := h.files[m[1]]; !ok {
			t.Errorf("index.html names %q, which is not an asset", m[1])
		}
	}
}
