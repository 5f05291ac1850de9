package store

import (
	"errors"
	"fmt"
	"sync"

	"memsvc.dev/memsvc/pkg/memory"
)

// RecordBatch is consecutive records of one store, decoded by
// DB.ScanRecordsParallel.
type RecordBatch struct {
	Seq     int // position of the batch in the scan, from 0
	Store   memory.StoreType
	Records []*memory.MemoryRecord
}

// Bounds of a batch of ScanRecordsParallel: records, and bytes of keys
// and stored values.
const (
	parBatchRecords = 256
	parBatchBytes   = 256 << 10
)

// parJob is a batch of stored keys and values, copied out of the
// iterator: spans holds, per record, where its key starts, where its
// value starts and where it ends in buf.
type parJob struct {
	seq   int
	st    memory.StoreType
	buf   []byte
	spans []int
}

// ScanRecordsParallel reads the records of the stores sts of namespace
// ns, in that order and in id order within each store, as ScanRecords
// does, and decodes (decrypting where sealed) on workers goroutines, in
// batches of consecutive records: one goroutine only copies the stored
// bytes out of the database, so a start spends its cores on decoding
// however the records are spread over the stores. Worker w calls
// fn(w, batch) for each batch it decoded, in increasing Seq; fn runs on up
// to workers goroutines at once, and the batches of different workers in
// no fixed order. Quarantined values are left out, as ScanRecords leaves
// them. The first error, of fn or of the scan, stops the scan and is
// returned.
func (db *DB) ScanRecordsParallel(ns NS, sts []memory.StoreType, workers int, fn func(worker int, b *RecordBatch) error) error {
	workers = max(workers, 1)
	var (
		work  = make(chan *parJob, workers)
		free  = make(chan *parJob, 2*workers) // decoded jobs, for their buffers
		stop  = make(chan struct{})
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() {
			first = err
			close(stop)
		})
	}
	for w := range workers {
		wg.Go(func() {
			for j := range work {
				select {
				case <-stop:
					continue
				default:
				}
				b, err := db.decodeJob(ns, j)
				if err == nil {
					err = fn(w, b)
				}
				if err != nil {
					fail(err)
				}
				select {
				case free <- j:
				default:
				}
			}
		})
	}
	err := db.copyRecords(ns, sts, work, free, stop)
	close(work)
	wg.Wait()
	return errors.Join(first, err)
}

// copyRecords copies the stored records of stores sts into jobs sent to
// work, reusing the jobs of free, until stop is closed.
func (db *DB) copyRecords(ns NS, sts []memory.StoreType, work, free chan *parJob, stop chan struct{}) error {
	seq := 0
	newJob := func(st memory.StoreType) *parJob {
		var j *parJob
		select {
		case j = <-free:
			j.buf, j.spans = j.buf[:0], j.spans[:0]
		default:
			j = &parJob{buf: make([]byte, 0, parBatchBytes+parBatchBytes/4), spans: make([]int, 0, 3*parBatchRecords)}
		}
		j.seq, j.st = seq, st
		return j
	}
	// send hands j to the workers and reports whether the scan goes on.
	send := func(j *parJob) bool {
		select {
		case work <- j:
			seq++
			return true
		case <-stop:
			return false
		}
	}
	for _, st := range sts {
		p := append(ns.key(kindCurated, 1), byte(st))
		j := newJob(st)
		stopped := false
		err := scan(db.pdb, p, PrefixEnd(p), false, func(k, v []byte) (bool, error) {
			at := len(j.buf)
			j.buf = append(append(j.buf, k...), v...)
			j.spans = append(j.spans, at, at+len(k), len(j.buf))
			if len(j.spans) < 3*parBatchRecords && len(j.buf) < parBatchBytes {
				return true, nil
			}
			if !send(j) {
				stopped = true
				return false, nil
			}
			j = newJob(st)
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("scan %s records: %w", st, err)
		}
		if stopped || (len(j.spans) > 0 && !send(j)) {
			return nil
		}
	}
	return nil
}

// decodeJob decodes the records of j, decrypting in place, and leaves
// out (quarantining) values that cannot be read.
func (db *DB) decodeJob(ns NS, j *parJob) (*RecordBatch, error) {
	b := &RecordBatch{Seq: j.seq, Store: j.st, Records: make([]*memory.MemoryRecord, 0, len(j.spans)/3)}
	p := len(ns.key(kindCurated, 1)) + 1
	for i := 0; i < len(j.spans); i += 3 {
		k, v := j.buf[j.spans[i]:j.spans[i+1]], j.buf[j.spans[i+1]:j.spans[i+2]]
		rec, err := decodeAt(db.keys, k, v, true, DecodeRecord)
		if err != nil {
			if db.damaged(k, ns, j.st, err) {
				continue
			}
			return nil, fmt.Errorf("%s record %x: %w", j.st, k[min(p, len(k)):], err)
		}
		b.Records = append(b.Records, rec)
	}
	return b, nil
}
