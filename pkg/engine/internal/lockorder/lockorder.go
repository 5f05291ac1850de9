// Package lockorder gives a component's locks ranks and checks, in test
// binaries built with the race detector, that every goroutine takes them
// in rank order: a goroutine holding a lock of rank r may only take locks
// of a higher rank, except that the locks of one family (a striped set)
// share a rank and are taken in increasing index. A lock taken against
// the order is reported, with the lock held and the lock wanted, so a
// possible deadlock shows up in the test that takes the path, whether or
// not the deadlock happens.
//
// Locks are used like sync.Mutex and sync.RWMutex. A lock joins a checker
// with Init; a lock that never joins one, and every lock in a binary where
// Enabled is false, costs one nil check per operation.
package lockorder

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
)

// Rank orders locks: lower ranks are taken first.
type Rank int

// Enabled reports whether this binary checks lock order: a test binary
// built with the race detector.
func Enabled() bool { return enabled() }

// lock describes one ranked lock.
type lock struct {
	name   string
	rank   Rank
	family bool // one of a striped set: equal ranks in increasing index
	index  int
	c      *Checker
}

func (l *lock) String() string {
	if l.family {
		return fmt.Sprintf("%s[%d] (rank %d)", l.name, l.index, l.rank)
	}
	return fmt.Sprintf("%s (rank %d)", l.name, l.rank)
}

// before reports whether h may be held while l is taken.
func (h *lock) before(l *lock) bool {
	if h.rank != l.rank {
		return h.rank < l.rank
	}
	return h.family && l.family && h.name == l.name && h.index < l.index
}

// Checker records the ranked locks each goroutine holds.
type Checker struct {
	report func(error)

	mu       sync.Mutex
	held     map[uint64][]*lock
	observed map[[2]string]bool // "held, then taken" pairs seen
}

// NewChecker returns a checker that calls report for every lock taken out
// of order; nil report panics instead.
func NewChecker(report func(error)) *Checker {
	if report == nil {
		report = func(err error) { panic(err) }
	}
	return &Checker{report: report, held: map[uint64][]*lock{}, observed: map[[2]string]bool{}}
}

// Observed returns the pairs of lock names seen held together, the held
// one first, sorted; locks of one family appear under their name.
func (c *Checker) Observed() [][2]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][2]string, 0, len(c.observed))
	for p := range c.observed {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b [2]string) int {
		if a[0] != b[0] {
			return cmpString(a[0], b[0])
		}
		return cmpString(a[1], b[1])
	})
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (c *Checker) acquire(l *lock) {
	g := goroutine()
	c.mu.Lock()
	var bad *lock
	for _, h := range c.held[g] {
		c.observed[[2]string{h.name, l.name}] = true
		if bad == nil && !h.before(l) {
			bad = h
		}
	}
	c.held[g] = append(c.held[g], l)
	c.mu.Unlock()
	if bad != nil {
		c.report(fmt.Errorf("lock order: %v taken while holding %v (goroutine %d)", l, bad, g))
	}
}

func (c *Checker) release(l *lock) {
	g := goroutine()
	c.mu.Lock()
	defer c.mu.Unlock()
	held := c.held[g]
	for i := len(held) - 1; i >= 0; i-- {
		if held[i] == l {
			held = slices.Delete(held, i, i+1)
			break
		}
	}
	if len(held) == 0 {
		delete(c.held, g)
	} else {
		c.held[g] = held
	}
}

// goroutine returns the id of the calling goroutine, read from the first
// line of its stack trace ("goroutine 18 [running]:"). Only checks use it.
func goroutine() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("lockorder: cannot read the goroutine id from " + strconv.Quote(string(buf[:])))
	}
	return id
}

// Nest takes the locks in the order given, then releases them in reverse:
// a path for a checker to judge, in tests.
func Nest(locks ...sync.Locker) {
	for _, l := range locks {
		l.Lock()
	}
	for i := len(locks) - 1; i >= 0; i-- {
		locks[i].Unlock()
	}
}

// acquire and release tell the checker, if any, about the lock.
func (l *lock) acquire() {
	if l.c != nil {
		l.c.acquire(l)
	}
}

func (l *lock) release() {
	if l.c != nil {
		l.c.release(l)
	}
}

// Mutex is a sync.Mutex with a rank.
type Mutex struct {
	mu sync.Mutex
	l  lock
}

// Init names the lock and gives it a rank in c; a nil c leaves it
// unchecked. Call it before the lock is first used.
func (m *Mutex) Init(c *Checker, name string, r Rank) { m.l = lock{name: name, rank: r, c: c} }

// InitFamily is Init for lock index of a striped set.
func (m *Mutex) InitFamily(c *Checker, name string, r Rank, index int) {
	m.l = lock{name: name, rank: r, family: true, index: index, c: c}
}

// Lock locks m.
func (m *Mutex) Lock() { m.l.acquire(); m.mu.Lock() }

// Unlock unlocks m.
func (m *Mutex) Unlock() { m.mu.Unlock(); m.l.release() }

// RWMutex is a sync.RWMutex with a rank. Read and write holds count
// alike: taking a read lock again while holding one is reported too, since
// a writer waiting in between deadlocks it.
type RWMutex struct {
	mu sync.RWMutex
	l  lock
}

// Init names the lock and gives it a rank in c; a nil c leaves it
// unchecked. Call it before the lock is first used.
func (m *RWMutex) Init(c *Checker, name string, r Rank) { m.l = lock{name: name, rank: r, c: c} }

// Lock locks m for writing.
func (m *RWMutex) Lock() { m.l.acquire(); m.mu.Lock() }

// Unlock unlocks m for writing.
func (m *RWMutex) Unlock() { m.mu.Unlock(); m.l.release() }

// RLock locks m for reading.
func (m *RWMutex) RLock() { m.l.acquire(); m.mu.RLock() }

// RUnlock undoes one RLock.
func (m *RWMutex) RUnlock() { m.mu.RUnlock(); m.l.release() }

// RLocker returns a sync.Locker that read-locks m.
func (m *RWMutex) RLocker() sync.Locker { return (*rlocker)(m) }

type rlocker RWMutex

func (r *rlocker) Lock()   { (*RWMutex)(r).RLock() }
func (r *rlocker) Unlock() { (*RWMutex)(r).RUnlock() }
