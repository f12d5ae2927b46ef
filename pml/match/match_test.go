package match

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// setNextSeq sets the next expected Seq of (ctx, src), as if that many
// messages had already been released. Tests use it to reach the 2^32 wrap.
func (e *Engine) setNextSeq(ctx uint32, src int, seq uint32) {
	e.context(ctx).peers[src].expect = seq
}

// step is one call in a scripted test. want is the expected outcome,
// written as the step's String form of the result (see run).
type step struct {
	op   string // arrive, post, cancel, probe, mprobe, remove, drop, len, seqbase
	name string // message or receive name ("m1", "r1")
	ctx  uint32
	src  int
	tag  int
	seq  uint32
	want string
}

func arrive(name string, ctx uint32, src, tag int, seq uint32, want string) step {
	return step{op: "arrive", name: name, ctx: ctx, src: src, tag: tag, seq: seq, want: want}
}

func post(name string, ctx uint32, src, tag int, want string) step {
	return step{op: "post", name: name, ctx: ctx, src: src, tag: tag, want: want}
}

func cancel(name, want string) step { return step{op: "cancel", name: name, want: want} }

func probe(ctx uint32, src, tag int, want string) step {
	return step{op: "probe", ctx: ctx, src: src, tag: tag, want: want}
}

func mprobe(ctx uint32, src, tag int, want string) step {
	return step{op: "mprobe", ctx: ctx, src: src, tag: tag, want: want}
}

func remove(name string) step        { return step{op: "remove", name: name} }
func drop(src int, want string) step { return step{op: "drop", src: src, want: want} }
func length(want string) step        { return step{op: "len", want: want} }
func seqBase(ctx uint32, src int, seq uint32) step {
	return step{op: "seqbase", ctx: ctx, src: src, seq: seq}
}

// run executes steps on a fresh engine of size ranks. Outcomes are encoded as:
// arrive → "r1=m1 r2=m2" (pairs in order, "" for none); post, probe and mprobe → the
// message name or "-"; cancel → "true"/"false"; drop → "r1 r2"; len →
// "posted,unexpected,parked".
func run(t *testing.T, size int, steps []step) {
	t.Helper()
	e := New(size)
	msgs := map[string]*Msg{}
	recvs := map[string]*Recv{}
	name := func(v any) string {
		switch v := v.(type) {
		case *Msg:
			if v == nil {
				return "-"
			}
			return v.Data.(string)
		case *Recv:
			return v.Data.(string)
		}
		return "?"
	}
	for i, s := range steps {
		var got string
		switch s.op {
		case "arrive":
			m := &Msg{Envelope: Envelope{Ctx: s.ctx, Src: s.src, Tag: s.tag, Seq: s.seq}, Data: s.name}
			msgs[s.name] = m
			var ps []string
			for _, p := range e.Arrive(m, nil) {
				ps = append(ps, name(p.Recv)+"="+name(p.Msg))
			}
			got = strings.Join(ps, " ")
		case "post":
			r, ok := recvs[s.name]
			if !ok {
				r = &Recv{Data: s.name}
				recvs[s.name] = r
			}
			r.Ctx, r.Src, r.Tag = s.ctx, s.src, s.tag
			m, ok := e.Post(r)
			if ok != (m != nil) {
				t.Fatalf("step %d: Post(%s) = %v, %v: ok disagrees with message", i, s.name, m, ok)
			}
			got = name(m)
		case "cancel":
			got = fmt.Sprint(e.Cancel(recvs[s.name]))
		case "probe":
			m, ok := e.Probe(s.ctx, s.src, s.tag)
			if ok != (m != nil) {
				t.Fatalf("step %d: Probe = %v, %v: ok disagrees with message", i, m, ok)
			}
			got = name(m)
		case "remove":
			e.Remove(msgs[s.name])
		case "mprobe":
			m, ok := e.Mprobe(s.ctx, s.src, s.tag)
			if ok != (m != nil) {
				t.Fatalf("step %d: Mprobe = %v, %v: ok disagrees with message", i, m, ok)
			}
			got = name(m)
		case "drop":
			var rs []string
			for _, r := range e.DropPostedFrom(s.src, nil) {
				rs = append(rs, name(r))
			}
			got = strings.Join(rs, " ")
		case "len":
			p, u, k := e.Len()
			got = fmt.Sprintf("%d,%d,%d", p, u, k)
		case "seqbase":
			e.setNextSeq(s.ctx, s.src, s.seq)
		default:
			t.Fatalf("step %d: unknown op %q", i, s.op)
		}
		if got != s.want {
			t.Fatalf("step %d: %s(%s ctx=%d src=%d tag=%d seq=%d) = %q, want %q",
				i, s.op, s.name, s.ctx, s.src, s.tag, s.seq, got, s.want)
		}
	}
}

// TestMPIRules checks the MPI point-to-point matching rules, one named
// script per rule. Names cite the rule checked.
func TestMPIRules(t *testing.T) {
	const A, T = AnySource, AnyTag
	tests := []struct {
		name  string
		steps []step
	}{
		{"matching is on (ctx, src, tag): exact triple matches", []step{
			post("r1", 0, 1, 5, "-"),
			arrive("m1", 0, 1, 6, 0, ""),
			arrive("m2", 0, 2, 5, 0, ""),
			arrive("m3", 0, 1, 5, 1, "r1=m3"),
			length("0,2,0"),
		}},
		{"unexpected message waits until a matching receive is posted", []step{
			arrive("m1", 0, 0, 3, 0, ""),
			length("0,1,0"),
			post("r1", 0, 0, 4, "-"),
			post("r2", 0, 0, 3, "m1"),
			length("1,0,0"),
		}},
		{"AnySource matches any source", []step{
			post("r1", 0, A, 2, "-"),
			arrive("m1", 0, 3, 2, 0, "r1=m1"),
		}},
		{"AnyTag matches any tag >= 0, including 0", []step{
			post("r1", 0, 1, T, "-"),
			arrive("m1", 0, 1, 0, 0, "r1=m1"),
			arrive("m2", 0, 1, 77, 1, ""),
			post("r2", 0, 1, T, "m2"),
		}},
		{"tag wildcard with specific source ignores other sources", []step{
			post("r1", 0, 2, T, "-"),
			arrive("m1", 0, 1, 4, 0, ""),
			arrive("m2", 0, 2, 4, 0, "r1=m2"),
			post("r2", 0, 2, T, "-"),
			post("r3", 0, 1, T, "m1"),
		}},
		{"specific tag with AnySource ignores other tags", []step{
			post("r1", 0, A, 9, "-"),
			arrive("m1", 0, 1, 8, 0, ""),
			arrive("m2", 0, 2, 9, 0, "r1=m2"),
			post("r2", 0, A, 9, "-"),
			post("r3", 0, A, 8, "m1"),
		}},
		{"non-overtaking: a receive that could match two queued messages from one source takes the earlier", []step{
			arrive("m1", 0, 1, 7, 0, ""),
			arrive("m2", 0, 1, 7, 1, ""),
			post("r1", 0, 1, 7, "m1"),
			post("r2", 0, A, T, "m2"),
		}},
		{"non-overtaking: a tag-selective receive may take a later message of another tag", []step{
			arrive("m1", 0, 1, 1, 0, ""),
			arrive("m2", 0, 1, 2, 1, ""),
			post("r1", 0, 1, 2, "m2"),
			post("r2", 0, 1, T, "m1"),
		}},
		{"non-overtaking: messages from one source fill posted receives in send order", []step{
			post("r1", 0, 1, T, "-"),
			post("r2", 0, 1, T, "-"),
			arrive("m1", 0, 1, 1, 0, "r1=m1"),
			arrive("m2", 0, 1, 1, 1, "r2=m2"),
		}},
		{"matched probe: the message leaves matching; receives and probes see the next one", []step{
			arrive("m1", 0, 1, 7, 0, ""),
			arrive("m2", 0, 1, 7, 1, ""),
			mprobe(0, 1, 7, "m1"),
			length("0,1,0"),
			probe(0, 1, 7, "m2"),
			post("r1", 0, A, T, "m2"),
			mprobe(0, 1, 7, "-"),
			post("r2", 0, 1, 7, "-"),
			arrive("m3", 0, 1, 7, 2, "r2=m3"),
			length("0,0,0"),
		}},
		{"matched probe takes what a receive would: earliest released, wildcards, contexts apart", []step{
			arrive("m1", 1, 2, 5, 0, ""),
			arrive("m2", 0, 2, 6, 0, ""),
			arrive("m3", 0, 1, 5, 0, ""),
			mprobe(0, A, 5, "m3"),
			mprobe(0, A, T, "m2"),
			mprobe(0, A, T, "-"),
			mprobe(2, A, T, "-"), // a context never used: none, and none created
			mprobe(1, 2, T, "m1"),
			length("0,0,0"),
		}},
		{"matched probe never sees a message ahead of its turn", []step{
			arrive("m2", 0, 1, 3, 1, ""),
			mprobe(0, 1, 3, "-"),
			mprobe(0, A, T, "-"),
			arrive("m1", 0, 1, 4, 0, ""),
			mprobe(0, 1, 3, "m2"),
			mprobe(0, 1, T, "m1"),
		}},
		{"matched probe leaves posted receives alone", []step{
			post("r1", 0, 1, 9, "-"),
			arrive("m1", 0, 1, 8, 0, ""),
			mprobe(0, 1, 9, "-"),
			mprobe(0, 1, 8, "m1"),
			arrive("m2", 0, 1, 9, 1, "r1=m2"),
		}},
		{"out-of-order arrival is parked until the gap fills", []step{
			post("r1", 0, 1, T, "-"),
			arrive("m3", 0, 1, 1, 2, ""),
			arrive("m2", 0, 1, 1, 1, ""),
			length("1,0,2"),
			probe(0, 1, T, "-"),
			arrive("m1", 0, 1, 1, 0, "r1=m1"),
			length("0,2,0"),
			post("r2", 0, 1, T, "m2"),
			post("r3", 0, 1, T, "m3"),
		}},
		{"filling a gap releases and matches several parked messages in Seq order", []step{
			post("r1", 0, 1, T, "-"),
			post("r2", 0, A, T, "-"),
			post("r3", 0, 1, T, "-"),
			arrive("m4", 0, 1, 0, 3, ""),
			arrive("m2", 0, 1, 0, 1, ""),
			arrive("m3", 0, 1, 0, 2, ""),
			arrive("m1", 0, 1, 0, 0, "r1=m1 r2=m2 r3=m3"),
			length("0,1,0"),
			post("r4", 0, 1, T, "m4"),
		}},
		{"a gap in one source does not hold back another source", []step{
			arrive("m1", 0, 1, 0, 1, ""),
			arrive("m2", 0, 2, 0, 0, ""),
			post("r1", 0, A, T, "m2"),
			post("r2", 0, A, T, "-"),
			arrive("m0", 0, 1, 0, 0, "r2=m0"),
			post("r3", 0, A, T, "m1"),
		}},
		{"posted receives match in posting order: AnySource posted first wins over specific", []step{
			post("r1", 0, A, 1, "-"),
			post("r2", 0, 1, 1, "-"),
			arrive("m1", 0, 1, 1, 0, "r1=m1"),
			arrive("m2", 0, 1, 1, 1, "r2=m2"),
		}},
		{"posted receives match in posting order: specific posted first wins over AnySource", []step{
			post("r1", 0, 1, 1, "-"),
			post("r2", 0, A, 1, "-"),
			arrive("m1", 0, 1, 1, 0, "r1=m1"),
			arrive("m2", 0, 1, 1, 1, "r2=m2"),
		}},
		{"posted receives match in posting order: earlier non-matching receives are skipped", []step{
			post("r1", 0, A, 5, "-"),
			post("r2", 0, 1, 6, "-"),
			post("r3", 0, A, 6, "-"),
			post("r4", 0, 1, T, "-"),
			arrive("m1", 0, 1, 6, 0, "r2=m1"),
			arrive("m2", 0, 1, 6, 1, "r3=m2"),
			arrive("m3", 0, 1, 6, 2, "r4=m3"),
			length("1,0,0"),
		}},
		{"AnySource receive takes the unexpected message that arrived first across sources", []step{
			arrive("m1", 0, 2, 4, 0, ""),
			arrive("m2", 0, 0, 4, 0, ""),
			arrive("m3", 0, 1, 4, 0, ""),
			post("r1", 0, A, 4, "m1"),
			post("r2", 0, A, T, "m2"),
			post("r3", 0, A, 4, "m3"),
		}},
		{"arrival order of a parked message is when its gap fills", []step{
			arrive("m2", 0, 1, 0, 1, ""),
			arrive("x1", 0, 2, 0, 0, ""),
			arrive("m1", 0, 1, 0, 0, ""),
			post("r1", 0, A, T, "x1"),
			post("r2", 0, A, T, "m1"),
			post("r3", 0, A, T, "m2"),
		}},
		{"contexts are isolated: nothing matches across ctx", []step{
			post("r1", 1, A, T, "-"),
			arrive("m1", 2, 0, 0, 0, ""),
			probe(1, A, T, "-"),
			post("r2", 3, 0, 0, "-"),
			arrive("m2", 1, 0, 0, 0, "r1=m2"),
			post("r3", 2, A, T, "m1"),
			length("1,0,0"),
		}},
		{"contexts are isolated: sequence numbers are per context", []step{
			arrive("a1", 1, 0, 0, 1, ""),
			arrive("b0", 2, 0, 0, 0, ""),
			length("0,1,1"),
			arrive("a0", 1, 0, 0, 0, ""),
			length("0,3,0"),
		}},
		{"unknown contexts are created on first use by Arrive and Post", []step{
			probe(42, A, T, "-"),
			arrive("m1", 42, 0, 0, 0, ""),
			post("r1", 43, 0, 0, "-"),
			probe(42, A, T, "m1"),
			length("1,1,0"),
		}},
		{"Probe does not consume", []step{
			arrive("m1", 0, 1, 3, 0, ""),
			probe(0, 1, 3, "m1"),
			probe(0, A, T, "m1"),
			probe(0, 1, 4, "-"),
			probe(0, 2, T, "-"),
			length("0,1,0"),
			post("r1", 0, 1, 3, "m1"),
			probe(0, A, T, "-"),
		}},
		{"Probe with AnySource sees the first arrival; with a source, that source's first", []step{
			arrive("m1", 0, 2, 0, 0, ""),
			arrive("m2", 0, 1, 0, 0, ""),
			probe(0, A, T, "m1"),
			probe(0, 1, T, "m2"),
		}},
		{"Remove then later Post does not see the message", []step{
			arrive("m1", 0, 1, 3, 0, ""),
			arrive("m2", 0, 1, 3, 1, ""),
			probe(0, 1, 3, "m1"),
			remove("m1"),
			length("0,1,0"),
			probe(0, A, T, "m2"),
			post("r1", 0, 1, 3, "m2"),
			post("r2", 0, A, T, "-"),
		}},
		{"Cancel of a posted receive removes it; later messages go unexpected", []step{
			post("r1", 0, 1, T, "-"),
			cancel("r1", "true"),
			cancel("r1", "false"),
			arrive("m1", 0, 1, 0, 0, ""),
			length("0,1,0"),
		}},
		{"Cancel of a matched receive returns false", []step{
			post("r1", 0, 1, T, "-"),
			arrive("m1", 0, 1, 0, 0, "r1=m1"),
			cancel("r1", "false"),
			arrive("m2", 0, 1, 0, 1, ""),
			post("r2", 0, 1, T, "m2"),
			cancel("r2", "false"),
		}},
		{"Cancel of an AnySource receive in the middle keeps posting order of the rest", []step{
			post("r1", 0, A, T, "-"),
			post("r2", 0, A, T, "-"),
			post("r3", 0, A, T, "-"),
			cancel("r2", "true"),
			arrive("m1", 0, 0, 0, 0, "r1=m1"),
			arrive("m2", 0, 0, 0, 1, "r3=m2"),
		}},
		{"a matched or cancelled receive may be posted again", []step{
			post("r1", 0, 1, T, "-"),
			arrive("m1", 0, 1, 0, 0, "r1=m1"),
			post("r1", 0, A, T, "-"),
			cancel("r1", "true"),
			post("r1", 0, 1, 0, "-"),
			arrive("m2", 0, 1, 0, 1, "r1=m2"),
		}},
		{"DropPostedFrom removes exact-source receives in every context and keeps AnySource", []step{
			post("r1", 0, 1, T, "-"),
			post("r2", 0, A, T, "-"),
			post("r3", 5, 1, 2, "-"),
			post("r4", 0, 2, T, "-"),
			post("r5", 0, 1, 3, "-"),
			drop(1, "r1 r5 r3"),
			length("2,0,0"),
			arrive("m1", 0, 1, 3, 0, "r2=m1"),
			arrive("m2", 5, 1, 2, 0, ""),
			drop(1, ""),
			cancel("r1", "false"),
		}},
		{"sequence wrap at 2^32: in-order across the wrap", []step{
			seqBase(0, 1, 1<<32-2),
			arrive("m1", 0, 1, 0, 1<<32-2, ""),
			arrive("m2", 0, 1, 0, 1<<32-1, ""),
			arrive("m3", 0, 1, 0, 0, ""),
			arrive("m4", 0, 1, 0, 1, ""),
			post("r1", 0, 1, T, "m1"),
			post("r2", 0, 1, T, "m2"),
			post("r3", 0, 1, T, "m3"),
			post("r4", 0, 1, T, "m4"),
		}},
		{"sequence wrap at 2^32: parked across the wrap is released in order", []step{
			seqBase(0, 1, 1<<32-2),
			post("r1", 0, 1, T, "-"),
			post("r2", 0, 1, T, "-"),
			post("r3", 0, 1, T, "-"),
			arrive("m4", 0, 1, 0, 1, ""),
			arrive("m3", 0, 1, 0, 0, ""),
			arrive("m2", 0, 1, 0, 1<<32-1, ""),
			length("3,0,3"),
			arrive("m1", 0, 1, 0, 1<<32-2, "r1=m1 r2=m2 r3=m3"),
			length("0,1,0"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { run(t, 4, tt.steps) })
	}
}

// TestCallerBugsPanic checks that each documented caller bug panics with a
// message that names the call and the value.
func TestCallerBugsPanic(t *testing.T) {
	tests := []struct {
		name string
		do   func(e *Engine)
		want string // substring of the panic message
	}{
		{"duplicate seq already released", func(e *Engine) {
			e.Arrive(&Msg{Envelope: Envelope{Src: 1, Seq: 0}}, nil)
			e.Arrive(&Msg{Envelope: Envelope{Src: 1, Seq: 0}}, nil)
		}, "seq=0 is behind the expected seq 1"},
		{"duplicate seq already parked", func(e *Engine) {
			e.Arrive(&Msg{Envelope: Envelope{Src: 1, Seq: 5}}, nil)
			e.Arrive(&Msg{Envelope: Envelope{Src: 1, Seq: 5}}, nil)
		}, "seq=5 is already parked"},
		{"stale seq just before expected across the wrap", func(e *Engine) {
			e.Arrive(&Msg{Envelope: Envelope{Src: 1, Seq: 1<<32 - 1}}, nil)
		}, "is behind the expected seq 0"},
		{"message src out of range", func(e *Engine) {
			e.Arrive(&Msg{Envelope: Envelope{Src: 4}}, nil)
		}, "src 4 out of range; want 0..3"},
		{"message src AnySource", func(e *Engine) {
			e.Arrive(&Msg{Envelope: Envelope{Src: AnySource}}, nil)
		}, "src -1 out of range"},
		{"message tag negative", func(e *Engine) {
			e.Arrive(&Msg{Envelope: Envelope{Tag: AnyTag}}, nil)
		}, "tag -1 from src 0; want >= 0"},
		{"message arrived twice", func(e *Engine) {
			m := &Msg{Envelope: Envelope{Seq: 3}}
			e.Arrive(m, nil)
			e.Arrive(m, nil)
		}, "already held"},
		{"receive posted twice", func(e *Engine) {
			r := &Recv{Src: 1}
			e.Post(r)
			e.Post(r)
		}, "already posted"},
		{"receive src out of range", func(e *Engine) { e.Post(&Recv{Src: -2}) }, "src -2 out of range"},
		{"receive tag below AnyTag", func(e *Engine) { e.Post(&Recv{Tag: -2}) }, "tag -2; want AnyTag"},
		{"probe src out of range", func(e *Engine) { e.Probe(0, 9, 0) }, "Probe: src 9"},
		{"matched probe src out of range", func(e *Engine) { e.Mprobe(0, 9, 0) }, "Mprobe: src 9"},
		{"matched probe tag below AnyTag", func(e *Engine) { e.Mprobe(0, 0, -3) }, "Mprobe: tag -3"},
		{"remove a message not unexpected", func(e *Engine) {
			m := &Msg{Envelope: Envelope{Seq: 2}}
			e.Arrive(m, nil)
			e.Remove(m)
		}, "not in the unexpected queue"},
		{"drop src out of range", func(e *Engine) { e.DropPostedFrom(AnySource, nil) }, "DropPostedFrom: src -1"},
		{"new with size 0", func(*Engine) { New(0) }, "size 0; want >= 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				s, _ := r.(string)
				if r == nil || !strings.Contains(s, tt.want) || !strings.HasPrefix(s, "match: ") {
					t.Fatalf("panic = %v, want a message containing %q", r, tt.want)
				}
			}()
			tt.do(New(4))
		})
	}
}

// TestArriveAppendsToOut checks that Arrive appends to, and does not
// overwrite, the caller's slice.
func TestArriveAppendsToOut(t *testing.T) {
	e := New(2)
	r := &Recv{Src: 0, Tag: AnyTag}
	e.Post(r)
	m := &Msg{}
	prev := Pair{Recv: &Recv{}, Msg: &Msg{}}
	out := e.Arrive(m, []Pair{prev})
	if want := []Pair{prev, {Recv: r, Msg: m}}; !slices.Equal(out, want) {
		t.Fatalf("Arrive(m, [prev]) = %v, want %v", out, want)
	}
}

// TestSteadyStateAllocatesNothing checks that, once a context exists, the
// matching calls allocate nothing (intrusive links, reused context state).
func TestSteadyStateAllocatesNothing(t *testing.T) {
	e := New(4)
	spec := &Recv{Ctx: 3, Src: 2, Tag: 1}
	wild := &Recv{Ctx: 3, Src: AnySource, Tag: AnyTag}
	m1 := &Msg{Envelope: Envelope{Ctx: 3, Src: 2, Tag: 1}}
	m2 := &Msg{Envelope: Envelope{Ctx: 3, Src: 2, Tag: 1}}
	out := make([]Pair, 0, 4)
	drops := make([]*Recv, 0, 4)
	var seq uint32
	cycle := func() {
		// m2 arrives ahead of its turn and is parked; m1 fills the gap and
		// releases both, matching the two posted receives.
		e.Post(wild)
		e.Post(spec)
		m1.Seq, m2.Seq = seq, seq+1
		seq += 2
		e.Arrive(m2, out[:0])
		if out = e.Arrive(m1, out[:0]); len(out) != 2 {
			t.Fatalf("Arrive released %d pairs, want 2", len(out))
		}
		// Unexpected path, probe, remove, cancel, drop.
		m1.Seq = seq
		seq++
		e.Arrive(m1, out[:0])
		if m, ok := e.Probe(3, AnySource, AnyTag); ok {
			e.Remove(m)
		}
		e.Post(spec)
		e.DropPostedFrom(2, drops[:0])
		e.Post(wild)
		e.Cancel(wild)
	}
	cycle() // creates context 3
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Fatalf("steady-state cycle allocates %v times, want 0", n)
	}
	if p, u, k := e.Len(); p+u+k != 0 {
		t.Fatalf("Len() = %d,%d,%d after balanced cycles, want 0,0,0", p, u, k)
	}
}

// Finalize cancels every posted receive: DropAllPosted returns specific and
// AnySource receives of every context, in the order its doc says, and
// leaves the engine with none.
func TestDropAllPosted(t *testing.T) {
	e := New(3)
	rs := []*Recv{{Ctx: 0, Src: 1, Tag: 1}, {Ctx: 0, Src: AnySource, Tag: 2}, {Ctx: 5, Src: 2, Tag: AnyTag}, {Ctx: 5, Src: AnySource, Tag: AnyTag}}
	for _, r := range rs {
		if _, ok := e.Post(r); ok {
			t.Fatal("matched with nothing queued")
		}
	}
	got := e.DropAllPosted(nil)
	// Specific ones by source, then AnySource ones by context.
	want := []*Recv{rs[0], rs[2], rs[1], rs[3]}
	if len(got) != len(want) {
		t.Fatalf("dropped %d receives, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("dropped receive %d is %+v, want %+v", i, *got[i], *want[i])
		}
	}
	if posted, _, _ := e.Len(); posted != 0 {
		t.Fatalf("%d receives still posted", posted)
	}
	for _, r := range rs {
		if e.Cancel(r) {
			t.Errorf("receive %+v still cancellable after DropAllPosted", r)
		}
	}
}
