package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"memsvc.dev/memsvc/pkg/memory"
)

// State is what the state gauges read when /metrics is scraped.
type State struct {
	// Stats reports the records per store and the dream backlog.
	Stats func(context.Context) (*memory.Stats, error)
	// Volumes are the file systems whose free space is reported, by
	// volume label; Free reads one.
	Volumes map[string]string
	Free    func(path string) (uint64, error)
	// MinFreeBytes is the free-space floor (storage.min_free_bytes).
	MinFreeBytes uint64
	// AuditFailures counts failed audit log appends; nil when the audit
	// log is off, and memsvc_audit_append_failures_total is then not
	// served.
	AuditFailures func() uint64
}

// statsTimeout bounds the Stats call of a scrape.
const statsTimeout = 5 * time.Second

// RegisterState registers the gauges that read s on reg.
func RegisterState(reg prometheus.Registerer, s State) error {
	if reg == nil {
		return fmt.Errorf("metrics: a registerer is required")
	}
	c := &stateCollector{
		s:        s,
		records:  prometheus.NewDesc("memsvc_records", "Curated records, by store.", []string{"store"}, nil),
		pending:  prometheus.NewDesc("memsvc_dream_pending_entries", "Raw journal entries waiting for dream processing (the dream backlog).", nil, nil),
		free:     prometheus.NewDesc("memsvc_storage_free_bytes", "Free bytes on the file system of the data directory (volume=\"data\") and of the audit log when elsewhere (volume=\"audit\").", []string{"volume"}, nil),
		minFree:  prometheus.NewDesc("memsvc_storage_min_free_bytes", "The free-space floor (storage.min_free_bytes) under which writes are refused; 0 when the guard is off.", nil, nil),
		failures: prometheus.NewDesc("memsvc_audit_append_failures_total", "Audit log appends that failed to write or sync (a full disk, say); they are retried every few seconds until one succeeds.", nil, nil),
	}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("register state metrics: %w", err)
	}
	return nil
}

type stateCollector struct {
	s                                         State
	records, pending, free, minFree, failures *prometheus.Desc
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.records
	ch <- c.pending
	ch <- c.free
	ch <- c.minFree
	if c.s.AuditFailures != nil {
		ch <- c.failures
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	if c.s.Stats != nil {
		ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
		st, err := c.s.Stats(ctx)
		cancel()
		if err == nil && st != nil {
			for _, store := range memory.AllStores() {
				ch <- prometheus.MustNewConstMetric(c.records, prometheus.GaugeValue, float64(st.RecordsByStore[store]), store.String())
			}
			ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(st.RawJournalPendingDream))
		}
	}
	if c.s.Free != nil {
		for volume, path := range c.s.Volumes {
			if n, err := c.s.Free(path); err == nil {
				ch <- prometheus.MustNewConstMetric(c.free, prometheus.GaugeValue, float64(n), volume)
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(c.minFree, prometheus.GaugeValue, float64(c.s.MinFreeBytes))
	if c.s.AuditFailures != nil {
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(c.s.AuditFailures()))
	}
}
