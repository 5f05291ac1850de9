package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/ui"
)

// TestInspectorServed: on loopback the inspector is served at /ui/ by
// default, with its security headers, and the banner names its address;
// with http.ui_enabled = false /ui/ and / are the API's 404s. The API is
// unchanged either way.
func TestInspectorServed(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		cfg := testConfig(t)
		if !enabled {
			off := false
			cfg.HTTP.UIEnabled = &off
		}
		var banner bytes.Buffer
		_, s, stop := startWith(t, cfg, Options{Version: "test", Banner: &banner})
		base := "http://" + s.HTTPAddr()
		client := &http.Client{
			Timeout:       10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		fetch := func(path string) (*http.Response, string) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp, string(body)
		}
		page, body := fetch("/ui/")
		root, _ := fetch("/")
		health, _ := fetch("/health")
		if enabled {
			if page.StatusCode != http.StatusOK || !strings.Contains(body, `<script type="module" src="js/main.js">`) {
				t.Errorf("enabled: /ui/ answered %d:\n%.200s", page.StatusCode, body)
			}
			if page.Header.Get("Content-Security-Policy") != ui.ContentSecurityPolicy {
				t.Errorf("enabled: /ui/ CSP %q", page.Header.Get("Content-Security-Policy"))
			}
			if root.StatusCode != http.StatusFound || root.Header.Get("Location") != "ui/" {
				t.Errorf("enabled: / answered %d to %q, want a redirect to ui/", root.StatusCode, root.Header.Get("Location"))
			}
			if want := "UI     " + base + "/ui/\n"; !strings.Contains(banner.String(), want) {
				t.Errorf("enabled: banner lacks %q:\n%s", want, banner.String())
			}
		} else {
			if page.StatusCode != http.StatusNotFound || !strings.Contains(body, "VALIDATION_ERROR") {
				t.Errorf("disabled: /ui/ answered %d:\n%.200s", page.StatusCode, body)
			}
			if root.StatusCode != http.StatusNotFound {
				t.Errorf("disabled: / answered %d, want 404", root.StatusCode)
			}
			if strings.Contains(banner.String(), "UI ") {
				t.Errorf("disabled: banner names the inspector:\n%s", banner.String())
			}
		}
		if health.StatusCode != http.StatusOK {
			t.Errorf("/health answered %d", health.StatusCode)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
}
