package recorder

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"memsvc.dev/memsvc/pkg/spool"
)

// TranscriptSource is a directory tree where an agent writes its session
// transcripts (*.jsonl, in subdirectories of any depth up to
// maxWatchDepth).
type TranscriptSource struct {
	Agent Agent
	Dir   string
}

// DefaultTranscriptDir is where the agent writes its transcripts: Claude
// Code in $CLAUDE_CONFIG_DIR/projects (default ~/.claude/projects), Codex
// in $CODEX_HOME/sessions (default ~/.codex/sessions, in YYYY/MM/DD).
func DefaultTranscriptDir(a Agent, getenv func(string) string) (string, error) {
	env, dir, sub := "CLAUDE_CONFIG_DIR", ".claude", "projects"
	if a == Codex {
		env, dir, sub = "CODEX_HOME", ".codex", "sessions"
	}
	if v := strings.TrimSpace(getenv(env)); v != "" {
		return filepath.Join(v, sub), nil
	}
	home := strings.TrimSpace(getenv("HOME"))
	if home == "" {
		home = strings.TrimSpace(getenv("USERPROFILE"))
	}
	if home == "" {
		return "", fmt.Errorf("no %s transcript directory: set %s or HOME, or name the directory", a.Name(), env)
	}
	return filepath.Join(home, dir, sub), nil
}

// Defaults of WatchConfig.
const (
	DefaultRescanInterval    = time.Minute
	DefaultMaxTranscriptLine = 8 << 20
)

// WatchConfig configures a TranscriptWatcher.
type WatchConfig struct {
	// Recorder is the pipeline the events go through; the watcher uses it
	// alone while it runs. Its spool directory keeps the offsets too.
	Recorder *Recorder
	// Sources are the directories to follow.
	Sources []TranscriptSource
	// Backfill records the files that exist when a source is followed for
	// the first time from their start; without it, only what is written
	// to them afterwards. Files that appear later are always read whole.
	Backfill bool
	// RescanInterval is how often the trees are walked again, as a
	// fallback for missed notifications (DefaultRescanInterval).
	RescanInterval time.Duration
	// Rescans, when set, replaces the rescan ticker (tests).
	Rescans <-chan time.Time
	// MaxLineBytes bounds a transcript line (DefaultMaxTranscriptLine); a
	// longer one is skipped without being held in memory.
	MaxLineBytes int
}

// WatchStats counts what a TranscriptWatcher did.
type WatchStats struct {
	Files         int // transcript files followed
	Lines         int // complete lines read
	Events        int // events recorded from them
	Skipped       int // lines over the size limit, skipped
	Restarts      int // files read again from the start: replaced or truncated
	Reads         int // times a file was read past its offset
	Notifications int // file system notifications received
	Rescans       int // walks of the trees
}

func (s WatchStats) String() string {
	return fmt.Sprintf("files=%d lines=%d events=%d skipped=%d restarts=%d", s.Files, s.Lines, s.Events, s.Skipped, s.Restarts)
}

// Offsets file and lock in the spool directory, and the limits of the
// watcher.
const (
	watchStateFile = "transcript-offsets"
	watchStateV    = 1
	watchLock      = "watch"
	headBytes      = 1024 // the head hash covers this much of a file
	maxWatchDepth  = 8    // directory levels below a source followed
	maxEventBurst  = 4096 // notifications gathered, at most, before reading
)

// watchState is the offsets file: JSON, written atomically and durably
// after each batch is sent or spooled.
type watchState struct {
	Version int `json:"version"`
	// Roots are the sources followed before: the files found in a new
	// one are old (skipped unless Backfill), those that appear in a
	// known one are new.
	Roots []string              `json:"roots"`
	Files map[string]*fileState `json:"files"`
}

// fileState is where reading a transcript file stands: the file's
// identity (device and inode where the system has them, and a SHA-256 of
// its first HeadLen bytes) and the offset after the last line recorded.
type fileState struct {
	Agent   Agent             `json:"agent"`
	Dev     uint64            `json:"dev,omitempty"`
	Ino     uint64            `json:"ino,omitempty"`
	Offset  int64             `json:"offset"`
	MTime   int64             `json:"mtime_ns,omitempty"` // when the file was last seen as read up to Offset
	HeadLen int64             `json:"head_len,omitempty"`
	Head    string            `json:"head_sha256,omitempty"`
	Context transcriptContext `json:"context"`
}

// TranscriptWatcher follows agents' session transcripts and records what
// no hook delivers: the assistant's messages and tool calls (see
// transcriptEvents).
//
// Each file is read from its offset, whole lines only: a last line without
// its newline waits for the rest. The events of a batch of lines go
// through the Recorder (redaction, sending, spooling); then the offset
// moves past those lines and the offsets file is replaced. A crash between
// the two reads the lines again, which records nothing twice: every event
// carries a record id derived from its line. A file whose device, inode or
// head changed, or that is shorter than its offset, is a new file (rotated
// or truncated) and is read from the start; a removed file is forgotten.
//
// It reads only when notified (fsnotify) and walks the trees again every
// RescanInterval, for notifications that were missed; while batches wait
// in the spool (the server was unreachable) it retries them when the
// recorder's backoff ends. In between it does nothing. It holds one line
// (at most MaxLineBytes) and one batch in memory.
type TranscriptWatcher struct {
	cfg   WatchConfig
	rec   *Recorder
	spool *spool.Dir
	state watchState
	roots []TranscriptSource // cfg.Sources with absolute, resolved paths

	fsw     *fsnotify.Watcher
	watched map[string]bool
	missing map[string]bool // sources not there yet (said once)

	mu    sync.Mutex
	stats WatchStats
}

// NewTranscriptWatcher checks cfg and returns a watcher.
func NewTranscriptWatcher(cfg WatchConfig) (*TranscriptWatcher, error) {
	if cfg.Recorder == nil {
		return nil, errors.New("transcript watcher: a recorder is required")
	}
	if len(cfg.Sources) == 0 {
		return nil, errors.New("transcript watcher: no transcript directory to follow")
	}
	if cfg.RescanInterval <= 0 {
		cfg.RescanInterval = DefaultRescanInterval
	}
	if cfg.MaxLineBytes <= 0 {
		cfg.MaxLineBytes = DefaultMaxTranscriptLine
	}
	w := &TranscriptWatcher{cfg: cfg, rec: cfg.Recorder, spool: cfg.Recorder.cfg.Spool, watched: map[string]bool{}, missing: map[string]bool{}}
	for _, s := range cfg.Sources {
		if s.Agent != Claude && s.Agent != Codex {
			return nil, fmt.Errorf("transcript watcher: unknown agent %q", s.Agent)
		}
		dir, err := filepath.Abs(s.Dir)
		if err != nil {
			return nil, fmt.Errorf("transcript directory %s: %w", s.Dir, err)
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		w.roots = append(w.roots, TranscriptSource{Agent: s.Agent, Dir: dir})
	}
	return w, nil
}

// Stats returns the counts so far; it is safe to call while Run runs.
func (w *TranscriptWatcher) Stats() WatchStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Files = len(w.state.Files)
	return s
}

func (w *TranscriptWatcher) count(f func(*WatchStats)) {
	w.mu.Lock()
	f(&w.stats)
	w.mu.Unlock()
}

// Run follows the transcripts until ctx ends (then it returns nil: what
// was read is recorded) or the recording fails for good: the server
// refused the API key or answered something unexpected (the events are
// spooled and the offsets saved), or the spool cannot be written (the
// offsets stay before the lines that were not recorded). Only one Run may
// use a spool directory at a time.
func (w *TranscriptWatcher) Run(ctx context.Context) error {
	unlock, err := w.spool.TryLock(watchLock)
	if errors.Is(err, spool.ErrLocked) {
		return fmt.Errorf("another memsvc-recorder watch uses the spool directory %s; stop it, or give this one its own --spool-dir", w.spool.Path())
	}
	if err != nil {
		return err
	}
	defer unlock()
	if w.fsw, err = fsnotify.NewWatcher(); err != nil {
		return fmt.Errorf("watch transcripts: %w", err)
	}
	defer w.fsw.Close()
	w.loadState()
	w.rec.FlushSpool(ctx)
	w.scan(ctx)
	for _, s := range w.roots {
		w.rec.log.Info("following transcripts", "agent", string(s.Agent), "dir", s.Dir)
	}
	rescans := w.cfg.Rescans
	if rescans == nil {
		t := time.NewTicker(w.cfg.RescanInterval)
		defer t.Stop()
		rescans = t.C
	}
	// While the spool holds files, a timer retries them when the
	// recorder's backoff ends; otherwise nothing wakes the loop but
	// notifications and rescans.
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	retrying := false
	var wait time.Duration // grows while retries fail, as the recorder's backoff does
	for {
		if err := w.failure(); err != nil {
			return err
		}
		if !retrying {
			if pending, _ := w.spool.Pending(); len(pending) > 0 {
				retry.Reset(max(w.rec.holdUntil.Sub(w.rec.cfg.Now()), wait, minBackoff))
				retrying = true
			} else {
				wait = 0
			}
		}
		select {
		case <-retry.C:
			retrying = false
			w.rec.FlushSpool(ctx)
			wait = min(max(2*wait, minBackoff), maxBackoff)
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return errors.New("watch transcripts: the notifier stopped")
			}
			// Gather what is queued (a line written in pieces, a file
			// and its directory) and read each file once.
			dirty := map[string]bool{}
			appeared := w.notice(ev, dirty)
			for n, gathered := 1, false; !gathered && n < maxEventBurst; n++ {
				select {
				case ev, ok := <-w.fsw.Events:
					if ok {
						appeared = w.notice(ev, dirty) || appeared
					}
					gathered = !ok
				default:
					gathered = true
				}
			}
			for _, path := range slices.Sorted(maps.Keys(dirty)) {
				w.drain(ctx, path)
			}
			if appeared {
				w.scan(ctx)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return errors.New("watch transcripts: the notifier stopped")
			}
			w.rec.log.Warn("transcript notifications lost; walking the directories again", "err", err)
			w.scan(ctx)
		case <-rescans:
			w.scan(ctx)
		}
	}
}

// failure says why the watcher must stop, or nil.
func (w *TranscriptWatcher) failure() error {
	switch {
	case w.rec.blocked != nil:
		return fmt.Errorf("%w; what was read is spooled in %s (offsets saved); fix it and start watch again", w.rec.blocked, w.spool.Path())
	case w.rec.lostErr != nil:
		return fmt.Errorf("cannot spool transcript events (%w); the offsets stay before them, so they are read again after a restart", w.rec.lostErr)
	}
	return nil
}

// notice adds what a notification concerns to dirty: a transcript file,
// or every transcript file of a new directory (which it starts watching).
// It reports whether a directory on the way to a missing source appeared.
func (w *TranscriptWatcher) notice(ev fsnotify.Event, dirty map[string]bool) bool {
	w.count(func(s *WatchStats) { s.Notifications++ })
	path := ev.Name
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		w.forgetTree(path)
		return false
	}
	if isTranscript(path) {
		dirty[path] = true
		return false
	}
	if !ev.Has(fsnotify.Create) {
		return false
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	if _, _, ok := w.sourceOf(path); !ok {
		for dir := range w.missing {
			if strings.HasPrefix(dir, path+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	for _, f := range w.walk(path) {
		dirty[f] = true
	}
	return false
}

// watchAncestor watches the nearest existing directory above a missing
// source, so that the source's appearance is noticed at once.
func (w *TranscriptWatcher) watchAncestor(dir string) {
	for anc := filepath.Dir(dir); ; anc = filepath.Dir(anc) {
		if fi, err := os.Stat(anc); err == nil && fi.IsDir() {
			if !w.watched[anc] && w.fsw.Add(anc) == nil {
				w.watched[anc] = true
			}
			return
		}
		if filepath.Dir(anc) == anc {
			return
		}
	}
}

func isTranscript(path string) bool { return strings.HasSuffix(path, ".jsonl") }

// sourceOf is the source a path is in.
func (w *TranscriptWatcher) sourceOf(path string) (TranscriptSource, int, bool) {
	for _, s := range w.roots {
		rel, err := filepath.Rel(s.Dir, path)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			depth := 0
			if rel != "." {
				depth = strings.Count(rel, string(filepath.Separator)) + 1
			}
			return s, depth, true
		}
	}
	return TranscriptSource{}, 0, false
}

// walk watches dir and the directories below it (up to maxWatchDepth
// below its source, never through links) and returns the transcript files
// in them.
func (w *TranscriptWatcher) walk(dir string) []string {
	var files []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone, or unreadable: skip it
		}
		_, depth, ok := w.sourceOf(path)
		switch {
		case !ok:
			return filepath.SkipDir
		case d.IsDir():
			if depth > maxWatchDepth {
				return filepath.SkipDir
			}
			if !w.watched[path] {
				if err := w.fsw.Add(path); err != nil {
					w.rec.log.Warn("cannot watch transcript directory; the rescan covers it", "dir", path, "err", err)
				} else {
					w.watched[path] = true
				}
			}
		case d.Type().IsRegular() && isTranscript(path):
			files = append(files, path)
		}
		return nil
	})
	return files
}

// scan walks every source: it watches new directories, reads every file
// that changed, and forgets files that are gone.
func (w *TranscriptWatcher) scan(ctx context.Context) {
	w.count(func(s *WatchStats) { s.Rescans++ })
	for _, src := range w.roots {
		if fi, err := os.Stat(src.Dir); err != nil || !fi.IsDir() {
			if !w.missing[src.Dir] {
				w.missing[src.Dir] = true
				w.rec.log.Info("transcript directory not there (yet); looking again at each rescan", "agent", string(src.Agent), "dir", src.Dir)
			}
			w.knowRoot(src.Dir) // what appears in it later is new
			w.watchAncestor(src.Dir)
			continue
		}
		delete(w.missing, src.Dir)
		files := w.walk(src.Dir)
		found := make(map[string]bool, len(files))
		for _, f := range files {
			if ctx.Err() != nil {
				return
			}
			found[f] = true
			w.drain(ctx, f)
		}
		for path := range w.state.Files {
			if s, _, ok := w.sourceOf(path); ok && s.Dir == src.Dir && !found[path] {
				w.forget(path)
			}
		}
		w.knowRoot(src.Dir)
	}
}

// knowRoot notes that a source has been followed: from now on its files
// are read from the start.
func (w *TranscriptWatcher) knowRoot(dir string) {
	if !slices.Contains(w.state.Roots, dir) {
		w.mu.Lock()
		w.state.Roots = append(w.state.Roots, dir)
		w.mu.Unlock()
		w.saveState()
	}
}

// forgetTree forgets a removed or renamed file, or the files below a
// removed or renamed directory.
func (w *TranscriptWatcher) forgetTree(path string) {
	prefix := path + string(filepath.Separator)
	for p := range w.state.Files {
		if p == path || strings.HasPrefix(p, prefix) {
			w.forget(p)
		}
	}
	for d := range w.watched {
		if d == path || strings.HasPrefix(d, prefix) {
			delete(w.watched, d)
			_ = w.fsw.Remove(d)
		}
	}
}

func (w *TranscriptWatcher) forget(path string) {
	if _, ok := w.state.Files[path]; !ok {
		return
	}
	w.mu.Lock()
	delete(w.state.Files, path)
	w.mu.Unlock()
	w.saveState()
}

// drain reads a transcript file from its offset to its last complete line
// and records the events of the lines, a batch at a time.
func (w *TranscriptWatcher) drain(ctx context.Context, path string) {
	src, _, ok := w.sourceOf(path)
	if !ok {
		return
	}
	st := w.state.Files[path]
	if fi, err := os.Stat(path); err == nil && st != nil && fi.Size() == st.Offset && fi.ModTime().UnixNano() == st.MTime {
		if dev, ino := fileID(fi); dev == st.Dev && ino == st.Ino {
			return // untouched: the usual answer to a rescan
		}
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		w.forget(path)
		return
	}
	if err != nil {
		w.rec.log.Warn("cannot read transcript", "file", path, "err", err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	size := fi.Size()
	dev, ino := fileID(fi)
	switch {
	case st == nil:
		st = &fileState{Agent: src.Agent, Dev: dev, Ino: ino}
		if !w.cfg.Backfill && !slices.Contains(w.state.Roots, src.Dir) {
			// Found when the source is first followed: only what is
			// written from now on is recorded.
			st.Offset = lastLineEnd(f, size)
			w.setHead(f, st)
		}
		w.mu.Lock()
		w.state.Files[path] = st
		w.mu.Unlock()
		w.saveState()
	case st.Dev != dev || st.Ino != ino || size < st.Offset || !headMatches(f, st):
		w.rec.log.Info("transcript replaced or truncated; reading it from the start", "file", path)
		*st = fileState{Agent: src.Agent, Dev: dev, Ino: ino}
		w.count(func(s *WatchStats) { s.Restarts++ })
	}
	if size == st.Offset {
		if mtime := fi.ModTime().UnixNano(); st.MTime != mtime {
			st.MTime = mtime // touched, not grown: no need to look again
			w.saveState()
		}
		return
	}
	w.count(func(s *WatchStats) { s.Reads++ })
	if _, err := f.Seek(st.Offset, io.SeekStart); err != nil {
		w.rec.log.Warn("cannot read transcript", "file", path, "err", err)
		return
	}
	tr := newTailReader(f, w.cfg.MaxLineBytes)
	pctx := st.Context
	offset := st.Offset
	var batch []Event
	bytesIn := 0
	for ctx.Err() == nil {
		line, n, err := tr.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				w.rec.log.Warn("cannot read transcript", "file", path, "err", err)
			}
			break
		}
		offset += n
		if line == nil {
			w.count(func(s *WatchStats) { s.Lines++; s.Skipped++ })
			w.rec.log.Warn("transcript line over the size limit skipped", "file", path, "bytes", n, "limit", w.cfg.MaxLineBytes)
			continue
		}
		w.count(func(s *WatchStats) { s.Lines++ })
		for _, ev := range transcriptEvents(st.Agent, path, line, &pctx) {
			batch = append(batch, ev)
			bytesIn += len(ev.Content) + len(ev.Metadata)
		}
		if len(batch) >= w.rec.cfg.MaxBatchRecords || 4*bytesIn >= w.rec.cfg.MaxBatchBytes {
			if !w.commit(ctx, f, st, batch, offset, pctx) {
				return
			}
			batch, bytesIn = nil, 0
		}
	}
	if ctx.Err() == nil && offset != st.Offset {
		w.commit(ctx, f, st, batch, offset, pctx)
	}
}

// commit records a batch and then moves the file's offset past its lines
// and saves the offsets. When the batch could be neither sent nor spooled
// it leaves the offset where it was and reports false.
func (w *TranscriptWatcher) commit(ctx context.Context, f *os.File, st *fileState, batch []Event, offset int64, pctx transcriptContext) bool {
	if len(batch) > 0 {
		lost := w.rec.stats.Lost
		w.record(ctx, batch)
		if w.rec.stats.Lost > lost {
			return false
		}
		w.count(func(s *WatchStats) { s.Events += len(batch) })
	}
	st.Offset, st.Context = offset, pctx
	st.MTime = 0
	if fi, err := f.Stat(); err == nil && fi.Size() == offset {
		st.MTime = fi.ModTime().UnixNano()
	}
	w.setHead(f, st)
	w.saveState()
	return true
}

// record sends a batch, behind what waits in the spool: while files are
// pending after a flush, the batch joins them, so that nothing recorded
// later reaches the server earlier.
func (w *TranscriptWatcher) record(ctx context.Context, batch []Event) {
	if pending, _ := w.spool.Pending(); len(pending) > 0 {
		w.rec.FlushSpool(ctx)
		if pending, _ = w.spool.Pending(); len(pending) > 0 {
			w.rec.Queue(ctx, batch)
			return
		}
	}
	_ = w.rec.Record(ctx, batch) // its failures are in the recorder's state
}

// setHead records the hash of the file's first bytes, up to its offset.
func (w *TranscriptWatcher) setHead(f *os.File, st *fileState) {
	n := min(st.Offset, headBytes)
	if sum, ok := headSum(f, n); ok {
		st.HeadLen, st.Head = n, sum
	}
}

func headMatches(f *os.File, st *fileState) bool {
	if st.HeadLen == 0 {
		return true
	}
	sum, ok := headSum(f, st.HeadLen)
	return ok && sum == st.Head
}

func headSum(f *os.File, n int64) (string, bool) {
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, 0); err != nil && !(errors.Is(err, io.EOF) && n == 0) {
		return "", false
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), true
}

// lastLineEnd is the offset just after the file's last newline (0 when it
// has none), found by reading backwards a chunk at a time.
func lastLineEnd(f *os.File, size int64) int64 {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return 0
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return start + int64(i) + 1
		}
		end = start
	}
	return 0
}

func (w *TranscriptWatcher) loadState() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.state = watchState{Version: watchStateV, Files: map[string]*fileState{}}
	data, err := w.spool.ReadState(watchStateFile)
	if err != nil || data == nil {
		if err != nil {
			w.rec.log.Error("transcript offsets unreadable; starting as if none were kept", "err", err)
		}
		return
	}
	var st watchState
	if err := json.Unmarshal(data, &st); err != nil || st.Version != watchStateV || st.Files == nil {
		w.rec.log.Error("transcript offsets file is damaged; starting as if none were kept", "file", filepath.Join(w.spool.Path(), watchStateFile))
		return
	}
	w.state = st
}

func (w *TranscriptWatcher) saveState() {
	w.mu.Lock()
	data, err := json.Marshal(&w.state)
	w.mu.Unlock()
	if err == nil {
		err = w.spool.WriteState(watchStateFile, data)
	}
	if err != nil {
		// The events are recorded; after a crash their lines are read
		// again, and their record ids keep them from being stored twice.
		w.rec.log.Warn("transcript offsets not saved", "err", err)
	}
}

// tailReader reads complete lines of a file that is still being written.
type tailReader struct {
	r     *bufio.Reader
	limit int
	buf   []byte
}

func newTailReader(r io.Reader, limit int) *tailReader {
	return &tailReader{r: bufio.NewReaderSize(r, lineChunk), limit: limit}
}

// next returns the next line ending in "\n" (without "\n" or "\r\n") and
// the bytes it takes in the file; a line over the limit gives a nil line,
// without having been held in memory. A last line without its newline is
// not returned: next gives io.EOF.
func (t *tailReader) next() ([]byte, int64, error) {
	t.buf = t.buf[:0]
	var n int64
	over := false
	for {
		chunk, err := t.r.ReadSlice('\n')
		n += int64(len(chunk))
		if !over {
			if len(t.buf)+len(chunk) > t.limit+1 { // the limit and "\n"
				over, t.buf = true, t.buf[:0]
			} else {
				t.buf = append(t.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if over {
				return nil, n, nil
			}
			line := t.buf[:len(t.buf)-1]
			return bytes.TrimSuffix(line, []byte{'\r'}), n, nil
		case errors.Is(err, bufio.ErrBufferFull):
		default:
			return nil, 0, err
		}
	}
}
