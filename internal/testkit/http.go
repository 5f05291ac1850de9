package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/wire"
)

// Request is one HTTP request a test sends to a server.
type Request struct {
	Method, URL string
	// Body is sent as an archive (application/octet-stream) when it is
	// []byte, JSON-encoded (application/json) otherwise; nil sends none.
	Body any
	// ContentType, when set, replaces the one Body implies.
	ContentType string
	// Key, when set, is sent as a bearer API key.
	Key string
	// Namespace, when set, is sent as the namespace header.
	Namespace string
}

// Answer is a server's answer to a Request.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends req, waits at most 30 seconds for the whole answer and returns
// it; a request that cannot be sent or answered ends the test.
func Do(t testing.TB, req Request) Answer {
	t.Helper()
	var body io.Reader
	ct := req.ContentType
	switch b := req.Body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
		if ct == "" {
			ct = wire.ContentTypeArchive
		}
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(data)
		if ct == "" {
			ct = wire.ContentTypeJSON
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, req.Method, req.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	if req.Key != "" {
		r.Header.Set("Authorization", "Bearer "+req.Key)
	}
	if req.Namespace != "" {
		r.Header.Set(wire.HeaderNamespace, req.Namespace)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	return Answer{Status: resp.StatusCode, Header: resp.Header, Body: data}
}
