package match

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// refEngine is the obviously-right reference: plain slices scanned
// linearly. posted is in posting order, unexp in release order.
type refEngine struct {
	posted []*Recv
	unexp  []*Msg
	parked map[refKey]map[uint32]*Msg
	next   map[refKey]uint32
}

type refKey struct {
	ctx uint32
	src int
}

func newRef() *refEngine {
	return &refEngine{parked: map[refKey]map[uint32]*Msg{}, next: map[refKey]uint32{}}
}

func accepts(ctx uint32, src, tag int, m *Msg) bool {
	return ctx == m.Ctx && (src == AnySource || src == m.Src) && (tag == AnyTag || tag == m.Tag)
}

func (f *refEngine) arrive(m *Msg) []Pair {
	k := refKey{m.Ctx, m.Src}
	if m.Seq != f.next[k] {
		if f.parked[k] == nil {
			f.parked[k] = map[uint32]*Msg{}
		}
		f.parked[k][m.Seq] = m
		return nil
	}
	var out []Pair
	for m != nil {
		if i := slices.IndexFunc(f.posted, func(r *Recv) bool { return accepts(r.Ctx, r.Src, r.Tag, m) }); i >= 0 {
			out = append(out, Pair{Recv: f.posted[i], Msg: m})
			f.posted = slices.Delete(f.posted, i, i+1)
		} else {
			f.unexp = append(f.unexp, m)
		}
		f.next[k]++
		m = f.parked[k][f.next[k]]
		delete(f.parked[k], f.next[k])
	}
	return out
}

func (f *refEngine) probe(ctx uint32, src, tag int) *Msg {
	if i := slices.IndexFunc(f.unexp, func(m *Msg) bool { return accepts(ctx, src, tag, m) }); i >= 0 {
		return f.unexp[i]
	}
	return nil
}

func (f *refEngine) remove(m *Msg) {
	f.unexp = slices.DeleteFunc(f.unexp, func(x *Msg) bool { return x == m })
}

func (f *refEngine) post(r *Recv) *Msg {
	if m := f.probe(r.Ctx, r.Src, r.Tag); m != nil {
		f.remove(m)
		return m
	}
	f.posted = append(f.posted, r)
	return nil
}

func (f *refEngine) cancel(r *Recv) bool {
	n := len(f.posted)
	f.posted = slices.DeleteFunc(f.posted, func(x *Recv) bool { return x == r })
	return len(f.posted) < n
}

func (f *refEngine) dropPostedFrom(src int) []*Recv {
	var out []*Recv
	f.posted = slices.DeleteFunc(f.posted, func(r *Recv) bool {
		if r.Src == src {
			out = append(out, r)
			return true
		}
		return false
	})
	return out
}

func (f *refEngine) len() (posted, unexpected, parked int) {
	for _, p := range f.parked {
		parked += len(p)
	}
	return len(f.posted), len(f.unexp), parked
}

// chooser supplies the random decisions of a model run; ok is false when
// the source is exhausted.
type chooser interface {
	intn(n int) (v int, ok bool)
}

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) (int, bool) { return c.r.IntN(n), true }

type bytesChooser struct{ b []byte }

func (c *bytesChooser) intn(n int) (int, bool) {
	if len(c.b) == 0 {
		return 0, false
	}
	v := int(c.b[0]) % n
	c.b = c.b[1:]
	return v, true
}

// modelConfig sizes a model run. Few ranks, contexts and tags make matches
// and wildcard races common.
type modelConfig struct {
	size, ctxs, tags int
	maxOps           int
}

// runModel drives an Engine and the reference with the same operations and
// fails on the first difference. Messages are "sent" with consecutive Seqs
// per (ctx, src), starting at a base that may sit just below 2^32, and
// arrive in random order (so some are parked). Returns the number of ops run.
func runModel(t testing.TB, cfg modelConfig, ch chooser) int {
	e, f := New(cfg.size), newRef()
	pick := func(n int) int {
		v, ok := ch.intn(n)
		if !ok {
			panic(errExhausted)
		}
		return v
	}
	sendSeq := map[refKey]uint32{}
	var inflight []*Msg
	var recvs []*Recv // every receive ever posted, for Cancel
	var nextID int
	ops := 0
	defer func() {
		if r := recover(); r != nil && r != errExhausted {
			panic(r)
		}
	}()
	for ops < cfg.maxOps {
		ops++
		ctx := uint32(pick(cfg.ctxs))
		switch op := pick(10); op {
		case 0, 1, 2: // send: a new message goes in flight
			src := pick(cfg.size)
			k := refKey{ctx, src}
			seq, started := sendSeq[k]
			if !started {
				// Half the (ctx, src) pairs start just below the wrap.
				if pick(2) == 0 {
					seq = ^uint32(0) - uint32(pick(3))
				}
				e.setNextSeq(ctx, src, seq)
				f.next[k] = seq
			}
			sendSeq[k] = seq + 1
			nextID++
			inflight = append(inflight, &Msg{Envelope: Envelope{Ctx: ctx, Src: src, Tag: pick(cfg.tags), Seq: seq}, Data: nextID})
		case 3, 4: // arrive: a random in-flight message, so order is not Seq order
			if len(inflight) == 0 {
				continue
			}
			i := pick(len(inflight))
			m := inflight[i]
			inflight = slices.Delete(inflight, i, i+1)
			got, want := e.Arrive(m, nil), f.arrive(m)
			if !slices.Equal(got, want) {
				t.Fatalf("op %d: Arrive(%s) pairs = %s, want %s", ops, fmtMsg(m), fmtPairs(got), fmtPairs(want))
			}
		case 5, 6: // post
			nextID++
			r := &Recv{Ctx: ctx, Src: pick(cfg.size+1) - 1, Tag: pick(cfg.tags+1) - 1, Data: nextID}
			recvs = append(recvs, r)
			got, ok := e.Post(r)
			if want := f.post(r); got != want || ok != (want != nil) {
				t.Fatalf("op %d: Post(%s) = %s, %v, want %s", ops, fmtRecv(r), fmtMsg(got), ok, fmtMsg(want))
			}
		case 7: // cancel any receive, matched or not
			if len(recvs) == 0 {
				continue
			}
			r := recvs[pick(len(recvs))]
			if got, want := e.Cancel(r), f.cancel(r); got != want {
				t.Fatalf("op %d: Cancel(%s) = %v, want %v", ops, fmtRecv(r), got, want)
			}
		case 8: // probe, and sometimes remove what it found or take it by a matched probe
			src, tag := pick(cfg.size+1)-1, pick(cfg.tags+1)-1
			got, ok := e.Probe(ctx, src, tag)
			want := f.probe(ctx, src, tag)
			if got != want || ok != (want != nil) {
				t.Fatalf("op %d: Probe(ctx=%d src=%d tag=%d) = %s, %v, want %s", ops, ctx, src, tag, fmtMsg(got), ok, fmtMsg(want))
			}
			switch pick(3) {
			case 0:
				if got != nil {
					e.Remove(got)
					f.remove(got)
				}
			case 1: // a matched probe takes exactly what Probe showed
				m, ok := e.Mprobe(ctx, src, tag)
				if m != want || ok != (want != nil) {
					t.Fatalf("op %d: Mprobe(ctx=%d src=%d tag=%d) = %s, %v, want %s", ops, ctx, src, tag, fmtMsg(m), ok, fmtMsg(want))
				}
				if want != nil {
					f.remove(want)
				}
			}
		case 9: // peer lost (rarely)
			if pick(8) != 0 {
				continue
			}
			src := pick(cfg.size)
			got, want := e.DropPostedFrom(src, nil), f.dropPostedFrom(src)
			byID := func(a, b *Recv) int { return a.Data.(int) - b.Data.(int) }
			slices.SortFunc(got, byID)
			slices.SortFunc(want, byID)
			if !slices.Equal(got, want) {
				t.Fatalf("op %d: DropPostedFrom(%d) = %d receives, want %d", ops, src, len(got), len(want))
			}
		}
		gp, gu, gk := e.Len()
		wp, wu, wk := f.len()
		if gp != wp || gu != wu || gk != wk {
			t.Fatalf("op %d: Len() = %d,%d,%d, want %d,%d,%d", ops, gp, gu, gk, wp, wu, wk)
		}
	}
	return ops
}

var errExhausted = fmt.Errorf("chooser exhausted")

func fmtMsg(m *Msg) string {
	if m == nil {
		return "<nil>"
	}
	return fmt.Sprintf("msg#%v{ctx=%d src=%d tag=%d seq=%d}", m.Data, m.Ctx, m.Src, m.Tag, m.Seq)
}

func fmtRecv(r *Recv) string {
	return fmt.Sprintf("recv#%v{ctx=%d src=%d tag=%d}", r.Data, r.Ctx, r.Src, r.Tag)
}

func fmtPairs(ps []Pair) string {
	s := "["
	for _, p := range ps {
		s += fmtRecv(p.Recv) + "=" + fmtMsg(p.Msg) + " "
	}
	return s + "]"
}

// TestModelRandom compares the engine with the reference over many random
// operations, with fixed seeds so failures reproduce.
func TestModelRandom(t *testing.T) {
	configs := []modelConfig{
		{size: 1, ctxs: 1, tags: 1, maxOps: 5000},
		{size: 3, ctxs: 2, tags: 3, maxOps: 20000},
		{size: 8, ctxs: 3, tags: 2, maxOps: 20000},
	}
	for _, cfg := range configs {
		for seed := uint64(1); seed <= 5; seed++ {
			t.Run(fmt.Sprintf("size=%d/ctxs=%d/tags=%d/seed=%d", cfg.size, cfg.ctxs, cfg.tags, seed), func(t *testing.T) {
				runModel(t, cfg, randChooser{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))})
			})
		}
	}
}

// FuzzEngine drives random operation sequences decoded from the fuzz input
// and checks every result against the reference engine.
func FuzzEngine(f *testing.F) {
	// Empty input: nothing happens.
	f.Add([]byte{})
	// Send then arrive one message, then post a matching AnySource receive.
	f.Add([]byte{0, 0, 0, 1, 0, 0, 3, 0, 0, 5, 0, 0})
	// Two sends from one source, arrive in reverse order (parked), then post.
	f.Add([]byte{0, 0, 1, 1, 0, 0, 0, 1, 0, 3, 1, 0, 3, 0, 0, 5, 2, 0})
	// Posts of both kinds, then a cancel and a drop.
	f.Add([]byte{0, 5, 0, 0, 1, 5, 2, 1, 0, 7, 0, 1, 9, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		runModel(t, modelConfig{size: 3, ctxs: 2, tags: 3, maxOps: 1 << 20}, &bytesChooser{data})
	})
}
