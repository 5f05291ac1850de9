// Package ui serves the memory inspector: a web page, at /ui/, for looking
// at what a memsvc server remembers (newest memories, search, a record with
// its decay forecast, the association graph, a timeline, the raw journal and
// a dashboard).
//
// The page is plain HTML, CSS and JavaScript modules embedded in the binary
// (assets/): nothing is built and nothing is fetched from elsewhere at run
// time. It calls the HTTP API from the browser like any other client, with
// the user's API key as a Bearer header when authentication is on, so the
// assets themselves need no key: every piece of data does. It reads only:
// recalls ask for reconsolidate=false, so looking at a memory never
// reinforces it.
//
// Every answer carries a Content-Security-Policy that allows scripts,
// styles, images and connections from the server's own origin only, and no
// inline script or style; assets are revalidated on each load (ETag, no
// max-age), so an upgraded server is never shown with stale code.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is the path the inspector is served under.
const Prefix = "/ui/"

// ContentSecurityPolicy is sent with every answer of the handler: the
// page's own origin for scripts, styles, images and API calls, nothing
// inline, no frames, no plugins, no form submissions.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed assets
var embedded embed.FS

// contentType is the media type of an asset with extension ext; New
// refuses an asset of another extension.
func contentType(ext string) (string, bool) {
	switch ext {
	case ".html":
		return "text/html; charset=utf-8", true
	case ".css":
		return "text/css; charset=utf-8", true
	case ".js":
		return "text/javascript; charset=utf-8", true
	case ".svg":
		return "image/svg+xml", true
	}
	return "", false
}

// asset is one embedded file, ready to serve.
type asset struct {
	data  []byte
	ctype string
	etag  string
}

// Handler serves the inspector under Prefix. It is safe for concurrent
// use.
type Handler struct {
	files map[string]asset // by path below assets/, "index.html"
}

// New returns the handler of the embedded assets.
func New() (*Handler, error) {
	return newHandler(embedded, "assets")
}

// newHandler reads every file below root of fsys into memory.
func newHandler(fsys fs.FS, root string) (*Handler, error) {
	h := &Handler{files: map[string]asset{}}
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ctype, ok := contentType(path.Ext(p))
		if !ok {
			return fmt.Errorf("ui asset %s: no content type for %q files", p, path.Ext(p))
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		h.files[strings.TrimPrefix(p, root+"/")] = asset{data: data, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ui: %w", err)
	}
	if _, ok := h.files["index.html"]; !ok {
		return nil, fmt.Errorf("ui: no index.html among the assets")
	}
	return h, nil
}

// ServeHTTP answers GET and HEAD for the assets below Prefix ("/ui/" is
// index.html); a path without an asset is 404, another method 405.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", ContentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: the inspector's pages are read with GET", http.StatusMethodNotAllowed)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if name == "" {
		name = "index.html"
	}
	a, ok := h.files[name]
	if !ok {
		http.Error(w, "404 not found: the inspector has no file "+quotePrefix(name), http.StatusNotFound)
		return
	}
	hdr.Set("Content-Type", a.ctype)
	hdr.Set("ETag", a.etag)
	// Revalidate every time: the answer is a 304 while the binary is the
	// same, and the new files after an upgrade.
	hdr.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.data))
}

// quotePrefix quotes at most 64 bytes of a client-supplied name.
func quotePrefix(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// Mount returns a handler that serves the inspector h at Prefix, sends a
// browser asking for "/" or "/ui" there, and passes every other request to
// api. The redirect is relative ("ui/"), so it also works behind a reverse
// proxy that serves memsvc under a path of its own.
func Mount(api, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, Prefix):
			h.ServeHTTP(w, r)
		case (p == "/" || p == "/ui") && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			w.Header().Set("Location", "ui/")
			w.WriteHeader(http.StatusFound)
		default:
			api.ServeHTTP(w, r)
		}
	})
}
