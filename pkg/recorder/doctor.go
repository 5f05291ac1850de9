package recorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/spool"
)

// DoctorService is what doctor talks to: *client.Client.
type DoctorService interface {
	Sender
	Health(ctx context.Context) error
	Ready(ctx context.Context) error
	RecallRaw(ctx context.Context, req *memory.RecallRawQueryRequest) (*memory.RecallRawQueryResponse, error)
}

// DoctorOptions configure Doctor.
type DoctorOptions struct {
	Service   DoctorService
	ServerURL string // for the report
	// SpoolDir is the spool directory to check; SpoolErr, when set, is
	// why there is none (the spool check fails with it).
	SpoolDir string
	SpoolErr error
	// SkipRawIngestProbe checks authentication with a raw recall of
	// limit 0 instead of writing a probe record.
	SkipRawIngestProbe bool
	// APIKeySet says whether MEMSVC_SERVER_API_KEY is set (for advice).
	APIKeySet bool
	Now       func() time.Time
	IDs       *memory.IDSource
}

// Check is one line of the doctor report.
type Check struct {
	Name   string // health, readiness, spool, auth, raw_ingest
	OK     bool
	Detail string
}

func (c Check) String() string {
	status := "fail"
	if c.OK {
		status = "ok"
	}
	return fmt.Sprintf("%s %s - %s", status, c.Name, c.Detail)
}

// Doctor runs the four checks, all of them whatever fails: the server's
// health, its readiness, the spool directory, and an authenticated raw
// ingest (a one-record batch with visibility private_scratch, or with
// SkipRawIngestProbe a raw recall with limit 0, which writes nothing).
func Doctor(ctx context.Context, o DoctorOptions) []Check {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IDs == nil {
		o.IDs = memory.NewIDSource(o.Now, nil)
	}
	var checks []Check
	add := func(name string, err error, okDetail string) {
		if err != nil {
			checks = append(checks, Check{Name: name, Detail: err.Error()})
		} else {
			checks = append(checks, Check{Name: name, OK: true, Detail: okDetail})
		}
	}
	add("health", o.Service.Health(ctx), "GET /health answered 200 at "+o.ServerURL)
	add("readiness", o.Service.Ready(ctx), "GET /readiness answered 200: the server can serve requests")
	checks = append(checks, checkSpool(o))
	if o.SkipRawIngestProbe {
		checks = append(checks, authProbe(ctx, o),
			Check{Name: "raw_ingest", OK: true, Detail: "skipped by --skip-raw-ingest-probe (nothing was written)"})
	} else {
		checks = append(checks, ingestProbe(ctx, o))
	}
	return checks
}

// FailedChecks counts the failed checks.
func FailedChecks(checks []Check) int {
	n := 0
	for _, c := range checks {
		if !c.OK {
			n++
		}
	}
	return n
}

// WriteReport writes one line per check.
func WriteReport(w io.Writer, checks []Check) error {
	var b strings.Builder
	for _, c := range checks {
		b.WriteString(c.String() + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func checkSpool(o DoctorOptions) Check {
	fail := func(err error) Check { return Check{Name: "spool", Detail: err.Error()} }
	if o.SpoolErr != nil {
		return fail(o.SpoolErr)
	}
	d, err := spool.Open(o.SpoolDir, spool.Options{StaleTemp: -1})
	if err != nil {
		return fail(err)
	}
	if err := d.Probe(); err != nil {
		return fail(err)
	}
	pending, err := d.Pending()
	if err != nil {
		return fail(err)
	}
	bad, err := d.Quarantined()
	if err != nil {
		return fail(err)
	}
	detail := fmt.Sprintf("writable at %s (%d pending batch file(s), %d quarantined)", d.Path(), len(pending), len(bad))
	return Check{Name: "spool", OK: true, Detail: detail}
}

// ingestProbe writes the probe record through the same conversion as
// every event.
func ingestProbe(ctx context.Context, o DoctorOptions) Check {
	session := "recorder-doctor-" + o.IDs.New().String()
	ev := TextEvent(session, SessionSummary, "memsvc-recorder doctor probe")
	ev.Source = "doctor"
	ev.Timestamp = o.Now().UTC()
	ev.Visibility = memory.VisibilityPrivateScratch
	ev.Secrecy = memory.SecrecySensitive
	ev.Metadata = json.RawMessage(`{"doctor_probe":true}`)
	e, err := toEntry(&ev, o.IDs.New(), "")
	if err != nil {
		return Check{Name: "raw_ingest", Detail: err.Error()}
	}
	sctx, status := withStatus(ctx)
	resp, err := o.Service.EncodeBatchRaw(sctx, &memory.EncodeBatchStoreRawRequest{Records: []memory.EncodeStoreRawRequest{e.req}})
	if err != nil {
		return probeFailure("raw_ingest", err, *status, o.APIKeySet)
	}
	if len(resp.Results) != 1 {
		return Check{Name: "raw_ingest", Detail: fmt.Sprintf("server answered %d result(s) for 1 record", len(resp.Results))}
	}
	return Check{Name: "raw_ingest", OK: true, Detail: fmt.Sprintf("accepted 1 record (private_scratch, session %s)", session)}
}

func authProbe(ctx context.Context, o DoctorOptions) Check {
	session := "recorder-doctor-auth-probe-" + o.IDs.New().String()
	req := memory.DefaultRecallRawQueryRequest()
	req.SessionID = &session
	req.Limit = 0
	sctx, status := withStatus(ctx)
	if _, err := o.Service.RecallRaw(sctx, &req); err != nil {
		return probeFailure("auth", err, *status, o.APIKeySet)
	}
	detail := "raw recall with limit 0 accepted using MEMSVC_SERVER_API_KEY"
	if !o.APIKeySet {
		detail = "raw recall with limit 0 accepted without an API key (the server does not require one)"
	}
	return Check{Name: "auth", OK: true, Detail: detail}
}

// probeFailure words a failed probe; an authentication failure is
// reported as the auth check whatever probe found it.
func probeFailure(name string, err error, status int, keySet bool) Check {
	switch out := classify(err, status); {
	case out == auth && keySet:
		return Check{Name: "auth", Detail: fmt.Sprintf("server rejected MEMSVC_SERVER_API_KEY (HTTP %d)", status)}
	case out == auth:
		return Check{Name: "auth", Detail: fmt.Sprintf("server requires an API key (HTTP %d): set MEMSVC_SERVER_API_KEY", status)}
	case errors.Is(err, memory.ErrRateLimited) || status == 429:
		d := "rate limited (HTTP 429)"
		if w := retryAfter(err); w > 0 {
			d += fmt.Sprintf("; retry after %v", w)
		}
		return Check{Name: name, Detail: d}
	case errors.Is(err, client.ErrUnavailable):
		return Check{Name: name, Detail: err.Error()}
	case status != 0:
		return Check{Name: name, Detail: fmt.Sprintf("HTTP %d: %v", status, err)}
	default:
		return Check{Name: name, Detail: err.Error()}
	}
}

// PlainHTTPRemote reports whether serverURL sends journal text in the
// clear to another machine (plain http to a non-loopback host).
func PlainHTTPRemote(serverURL string) bool {
	u, err := url.Parse(strings.TrimSpace(serverURL))
	return err == nil && u.Scheme == "http" && !isLoopback(u.Hostname())
}
