package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"memsvc.dev/memsvc/pkg/memory"
)

// seqWorld stores records with names and reads back their neighbours.
type seqWorld struct {
	t    *testing.T
	h    *harness
	id   map[string]memory.ID
	name map[memory.ID]string
}

func newSeqWorld(t *testing.T) *seqWorld {
	return &seqWorld{t: t, h: newHarness(t, Options{ArchiveKDF: testKDF}), id: map[string]memory.ID{}, name: map[memory.ID]string{}}
}

func (w *seqWorld) named(name string, id memory.ID) {
	w.id[name], w.name[id] = id, name
}

// md is metadata from key/value pairs; a value is JSON.
func md(kv ...string) memory.JSON {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%s", kv[i], kv[i+1])
	}
	b.WriteString("}")
	return memory.JSON(b.String())
}

// store stores one record named name in ctx's namespace, a second after
// the previous store.
func (w *seqWorld) store(ctx context.Context, name string, req memory.EncodeStoreRequest) {
	w.t.Helper()
	w.h.clock.Advance(time.Second)
	req.Content = memory.TextContent("record " + name)
	resp, err := w.h.e.EncodeStore(ctx, &req)
	if err != nil {
		w.t.Fatal(err)
	}
	w.named(name, resp.RecordID)
}

// batch stores one batch of records named names, all with metadata m.
func (w *seqWorld) batch(ctx context.Context, m memory.JSON, infer bool, names ...string) {
	w.t.Helper()
	w.h.clock.Advance(time.Second)
	req := memory.EncodeBatchRequest{InferAssociations: infer}
	for _, n := range names {
		req.Records = append(req.Records, memory.EncodeStoreRequest{Content: memory.TextContent("record " + n), Metadata: m})
	}
	resp, err := w.h.e.EncodeBatch(ctx, &req)
	if err != nil {
		w.t.Fatal(err)
	}
	for i, r := range resp.Results {
		w.named(names[i], r.RecordID)
	}
}

// order lists, for every named record of ctx's namespace, "prev<name>next"
// with "-" for none, sorted.
func (w *seqWorld) order(ctx context.Context) []string {
	w.t.Helper()
	e := w.h.e
	ns := e.space(ctx)
	if ns == nil {
		w.t.Fatal("no namespace")
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	c := conversation{ns.st}
	label := func(id memory.ID, ok bool) string {
		if !ok {
			return "-"
		}
		if n, named := w.name[id]; named {
			return n
		}
		return "?" + id.String()
	}
	// The second stage finds the same neighbours, and looking theirs up
	// from where it found them finds them too.
	same := func(id memory.ID) {
		cp, cpok := c.Prev(id)
		cn, cnok := c.Next(id)
		st := newStage(1)
		st.add(id, seqPlace{})
		st.neighbours(c)
		at := func(j int32) (memory.ID, bool) {
			if j < 0 {
				return memory.ID{}, false
			}
			return st.ids[j], true
		}
		mp, mpok := at(st.prev[0])
		mn, mnok := at(st.next[0])
		if mp != cp || mpok != cpok || mn != cn || mnok != cnok {
			w.t.Errorf("second stage's neighbours of %s: %s, %s; want %s, %s", label(id, true), label(mp, mpok), label(mn, mnok), label(cp, cpok), label(cn, cnok))
		}
		for j := 1; j < len(st.ids); j++ {
			nb := st.ids[j]
			p, n, _, _ := ns.st.neighboursAt(nb, st.at[j])
			wp, wpok := c.Prev(nb)
			wn, wnok := c.Next(nb)
			if p.id != wp || p.ok != wpok || n.id != wn || n.ok != wnok {
				w.t.Errorf("neighbours of %s looked up from where the second stage found it: %s, %s; want %s, %s", label(nb, true), label(p.id, p.ok), label(n.id, n.ok), label(wp, wpok), label(wn, wnok))
			}
		}
		// A place that is not the record's is not trusted.
		for i := range 3 {
			p, n, _, _ := ns.st.neighboursAt(id, seqPlace{key: ns.st.entries[id].session, i: i, ok: true})
			if p.id != cp || p.ok != cpok || n.id != cn || n.ok != cnok {
				w.t.Errorf("neighbours of %s looked up from place %d: %s, %s; want %s, %s", label(id, true), i, label(p.id, p.ok), label(n.id, n.ok), label(cp, cpok), label(cn, cnok))
			}
		}
	}
	var out []string
	for id := range ns.st.entries {
		same(id)
		n, ok := w.name[id]
		if !ok {
			continue
		}
		out = append(out, label(c.Prev(id))+"<"+n+">"+label(c.Next(id)))
	}
	slices.Sort(out)
	return out
}

func (w *seqWorld) want(ctx context.Context, when string, want ...string) {
	w.t.Helper()
	slices.Sort(want)
	if got := w.order(ctx); !slices.Equal(got, want) {
		w.t.Errorf("%s: neighbours\n got %q\nwant %q", when, got, want)
	}
}

// TestSequenceOrder: sessions in creation order, batches in batch order,
// each conversation apart from the others, and the sequential
// associations a client makes where there is no sequence.
func TestSequenceOrder(t *testing.T) {
	w := newSeqWorld(t)
	ctx := context.Background()
	s := func(key, v string) memory.EncodeStoreRequest { return memory.EncodeStoreRequest{Metadata: md(key, v)} }
	// Two sessions stored one turn at a time, interleaved.
	w.store(ctx, "a1", s("session", `"A"`))
	w.store(ctx, "b1", s("session", `"B"`))
	w.store(ctx, "a2", s("session", `"A"`))
	w.store(ctx, "b2", s("session", `"B"`))
	w.store(ctx, "a3", s("session", `"A"`))
	// The session key's other forms: the encode context, session_id, a
	// number, and a conversation for records that name no session.
	sid := "C"
	w.store(ctx, "c1", memory.EncodeStoreRequest{Context: &memory.EncodeContext{SessionID: &sid}})
	w.store(ctx, "c2", memory.EncodeStoreRequest{Context: &memory.EncodeContext{SessionID: &sid}, Metadata: md("session", `"other"`)})
	w.store(ctx, "n1", s("session_id", "7"))
	w.store(ctx, "n2", s("session_id", "7"))
	w.store(ctx, "v1", s("conversation", `"V"`))
	w.store(ctx, "v2", s("conversation", `"V"`))
	// The same value as a session and as a conversation, and a string
	// "7" against the number 7: different keys.
	w.store(ctx, "vs", s("session", `"V"`))
	w.store(ctx, "n3", s("session_id", `"7"`))
	// Values that name no session: empty, or neither string nor number.
	w.store(ctx, "e1", s("session", `""`))
	w.store(ctx, "e2", s("session", `{"id":1}`))
	// Batches: with a session, without one, with inferred associations.
	w.batch(ctx, md("session", `"D"`), false, "d1", "d2", "d3")
	w.batch(ctx, nil, false, "x1", "x2", "x3")
	w.batch(ctx, nil, true, "y1", "y2")
	// A session continued by a later batch.
	w.batch(ctx, md("session", `"A"`), false, "a4", "a5")
	// A record alone, and one a client links to it as its predecessor.
	w.store(ctx, "lone", memory.EncodeStoreRequest{})
	w.store(ctx, "next", memory.EncodeStoreRequest{Associations: []memory.ManualAssociation{{TargetID: w.id["lone"], AssociationType: memory.AssocSequential, Weight: 0.5}}})

	all := []string{
		"-<a1>a2", "a1<a2>a3", "a2<a3>a4", "a3<a4>a5", "a4<a5>-",
		"-<b1>b2", "b1<b2>-",
		"-<c1>c2", "c1<c2>-",
		"-<n1>n2", "n1<n2>-", "-<n3>-",
		"-<v1>v2", "v1<v2>-", "-<vs>-",
		"-<e1>-", "-<e2>-",
		"-<d1>d2", "d1<d2>d3", "d2<d3>-",
		"-<x1>x2", "x1<x2>x3", "x2<x3>-",
		"-<y1>y2", "y1<y2>-",
		"-<lone>-", "lone<next>-",
	}
	w.want(ctx, "after storing", all...)

	// An update that keeps session and creation time keeps the place.
	if err := w.h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: w.id["a2"], Content: ptr(memory.TextContent("changed"))}); err != nil {
		t.Fatal(err)
	}
	w.want(ctx, "after an update", all...)
	// One that moves the record to another session moves it.
	if err := w.h.e.EncodeUpdate(ctx, &memory.EncodeUpdateRequest{RecordID: w.id["b2"], Metadata: md("session", `"D"`)}); err != nil {
		t.Fatal(err)
	}
	moved := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return strings.Contains(s, "<b") || strings.Contains(s, "<d") })
	moved = append(moved, "-<b1>-", "-<b2>d1", "b2<d1>d2", "d1<d2>d3", "d2<d3>-")
	w.want(ctx, "after moving b2 to session D", moved...)

	// A forgotten record leaves the sequence; its neighbours meet.
	if _, err := w.h.e.Forget(ctx, &memory.ForgetRequest{RecordIDs: []memory.ID{w.id["a3"]}, Confirm: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	delete(w.name, w.id["a3"])
	gone := slices.DeleteFunc(slices.Clone(moved), func(s string) bool { return strings.Contains(s, "a3") })
	gone = append(gone, "a1<a2>a4", "a2<a4>a5")
	w.want(ctx, "after forgetting a3", gone...)
}

// TestSequenceSurvives: the order is the same after a restart and in a
// copy made by export and import.
func TestSequenceSurvives(t *testing.T) {
	w := newSeqWorld(t)
	ctx := context.Background()
	for i := range 3 {
		w.store(ctx, fmt.Sprintf("a%d", i), memory.EncodeStoreRequest{Metadata: md("session", `"A"`)})
		w.store(ctx, fmt.Sprintf("b%d", i), memory.EncodeStoreRequest{Metadata: md("session", `"B"`)})
	}
	w.batch(ctx, nil, false, "x1", "x2", "x3", "x4")
	w.batch(ctx, md("conversation", `"C"`), true, "c1", "c2")
	want := w.order(ctx)
	if len(want) != 12 || !slices.Contains(want, "a0<a1>a2") || !slices.Contains(want, "x2<x3>x4") {
		t.Fatalf("fixture: %q", want)
	}
	w.h.reopen()
	w.want(ctx, "after a restart", want...)

	data, _ := exportBytes(t, w.h, memory.ExportRequest{Format: "cma"})
	dst := &seqWorld{t: t, h: newHarness(t, Options{}), id: w.id, name: w.name}
	dst.h.clock.Advance(w.h.clock.Now().Sub(dst.h.clock.Now()) + time.Minute)
	if resp, err := importBytes(t, dst.h, data, nil); err != nil || resp.RecordsImported != 12 {
		t.Fatalf("import: %+v %v", resp, err)
	}
	dst.want(ctx, "after export and import", want...)
	dst.h.reopen()
	dst.want(ctx, "after import and a restart", want...)
}

// TestSequenceNamespaces: one session key in two namespaces makes two
// sequences.
func TestSequenceNamespaces(t *testing.T) {
	w := newSeqWorld(t)
	red, blue := memory.WithNamespace(context.Background(), "red"), memory.WithNamespace(context.Background(), "blue")
	for i := range 2 {
		w.store(red, fmt.Sprintf("r%d", i), memory.EncodeStoreRequest{Metadata: md("session", `"S"`)})
		w.store(blue, fmt.Sprintf("b%d", i), memory.EncodeStoreRequest{Metadata: md("session", `"S"`)})
	}
	w.want(red, "red", "-<r0>r1", "r0<r1>-")
	w.want(blue, "blue", "-<b0>b1", "b0<b1>-")
}

// TestSessionKey pins which metadata names a session.
func TestSessionKey(t *testing.T) {
	key := func(s string) uint64 { return sessionKey(memory.JSON(s)) }
	same := func(a, b string) {
		t.Helper()
		if key(a) == 0 || key(a) != key(b) {
			t.Errorf("%s and %s: keys %x and %x, want one session", a, b, key(a), key(b))
		}
	}
	differ := func(a, b string) {
		t.Helper()
		if key(a) == key(b) {
			t.Errorf("%s and %s: both key %x, want different sessions", a, b, key(a))
		}
	}
	none := func(s string) {
		t.Helper()
		if k := key(s); k != 0 {
			t.Errorf("%s: key %x, want none", s, k)
		}
	}
	same(`{"session":"s1"}`, `{"session_id":"s1","speaker":"x"}`)
	same(`{"_context":{"session_id":"s1"}}`, `{"session":"s1"}`)
	same(`{"_context":{"session_id":"s1"},"session":"s2"}`, `{"session_id":"s1"}`)
	same(`{"session":"s1","conversation":"c1"}`, `{"session":"s1"}`)
	same(`{"conversation_id":3}`, `{"conversation":3}`)
	differ(`{"session":"s1"}`, `{"conversation":"s1"}`)
	differ(`{"session":7}`, `{"session":"7"}`)
	differ(`{"session":"s1"}`, `{"session":"s2"}`)
	for _, s := range []string{``, `{}`, `null`, `"session"`, `[1]`, `{"session":""}`, `{"session":null}`,
		`{"session":true}`, `{"session":{"id":1}}`, `{"session":["a"]}`, `{"sessions":"x"}`, `{"session":`} {
		none(s)
	}
	// sequenceKey falls back to the creation instant: one per batch.
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if sequenceKey(nil, t0) != sequenceKey(memory.JSON(`{}`), t0) || sequenceKey(nil, t0) == sequenceKey(nil, t0.Add(1)) {
		t.Error("sequenceKey: records that name no session are not keyed by their creation instant")
	}
	if sequenceKey(nil, t0) == 0 || sequenceKey(memory.JSON(`{"session":"s"}`), t0) != key(`{"session":"s"}`) {
		t.Error("sequenceKey: want the session key when there is one, and never 0")
	}
}
