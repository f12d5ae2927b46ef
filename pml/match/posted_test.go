package match

import "testing"

// TestMatchPosted: a message whose bytes are still coming is matched at
// once only when Arrive would pair it with a posted receive right now (its
// source's turn, nothing of that source parked, the receive Arrive would
// pick, accepted by ok); otherwise nothing changes and the message can
// arrive later through Arrive as if MatchPosted had not been called.
// TakeInTurn, MatchPosted for a test that accepts every receive, passes
// the same cases.
func TestMatchPosted(t *testing.T) {
	yes := func(*Recv) bool { return true }
	no := func(*Recv) bool { return false }
	post := func(src, tag int) func(e *Engine) *Recv {
		return func(e *Engine) *Recv {
			r := &Recv{Ctx: 1, Src: src, Tag: tag}
			if _, ok := e.Post(r); ok {
				t.Fatal("post matched an unexpected message")
			}
			return r
		}
	}
	for _, tc := range []struct {
		name  string
		posts []func(e *Engine) *Recv
		pre   []Envelope // arrived before (Arrive)
		env   Envelope
		ok    func(*Recv) bool
		want  int // index into the posted receives, -1: none
	}{
		{"specific", []func(*Engine) *Recv{post(0, 5)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, yes, 0},
		{"ok refuses", []func(*Engine) *Recv{post(0, 5)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, no, -1},
		{"no receive", []func(*Engine) *Recv{post(0, 6)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, yes, -1},
		{"other source", []func(*Engine) *Recv{post(1, 5)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, yes, -1},
		{"unknown context", nil, nil, Envelope{Ctx: 9, Src: 0, Tag: 5}, yes, -1},
		{"earlier wildcard wins", []func(*Engine) *Recv{post(AnySource, AnyTag), post(0, 5)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, yes, 0},
		{"earlier specific wins", []func(*Engine) *Recv{post(0, 5), post(AnySource, 5)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, yes, 0},
		{"ahead of its turn", []func(*Engine) *Recv{post(0, 5)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5, Seq: 1}, yes, -1},
		{"in turn after others", []func(*Engine) *Recv{post(0, 5)}, []Envelope{{Ctx: 1, Src: 0, Tag: 7, Seq: 0}}, Envelope{Ctx: 1, Src: 0, Tag: 5, Seq: 1}, yes, 0},
		{"a later one parked", []func(*Engine) *Recv{post(0, 5)}, []Envelope{{Ctx: 1, Src: 0, Tag: 5, Seq: 1}}, Envelope{Ctx: 1, Src: 0, Tag: 5, Seq: 0}, yes, -1},
		{"first that takes the tag", []func(*Engine) *Recv{post(0, 6), post(0, 5), post(0, 5)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, yes, 1},
		{"any tag", []func(*Engine) *Recv{post(0, 6), post(0, AnyTag)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, yes, 1},
		{"wildcard only", []func(*Engine) *Recv{post(1, 5), post(AnySource, 5)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, yes, 1},
		{"later wildcard loses", []func(*Engine) *Recv{post(0, AnyTag), post(AnySource, 5)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, yes, 0},
		{"wildcard of another tag", []func(*Engine) *Recv{post(AnySource, 6), post(0, 5)}, nil, Envelope{Ctx: 1, Src: 0, Tag: 5}, yes, 1},
	} {
		for _, take := range []bool{false, true} {
			name := tc.name
			if take {
				if !tc.ok(nil) {
					continue // TakeInTurn has no test
				}
				name += "/TakeInTurn"
			}
			t.Run(name, func(t *testing.T) {
				e := New(2)
				var rs []*Recv
				for _, p := range tc.posts {
					rs = append(rs, p(e))
				}
				for _, env := range tc.pre {
					e.Arrive(&Msg{Envelope: env}, nil)
				}
				posted, unexp, parked := e.Len()
				if err := e.Check(&tc.env); err != nil {
					t.Fatal(err)
				}
				var got *Recv
				if take {
					got = e.TakeInTurn(tc.env.Ctx, tc.env.Src, tc.env.Tag, tc.env.Seq)
				} else {
					got = e.MatchPosted(&tc.env, tc.ok)
				}
				p2, u2, k2 := e.Len()
				if tc.want < 0 {
					if got != nil || p2 != posted || u2 != unexp || k2 != parked {
						t.Fatalf("matched %v, len %d,%d,%d (was %d,%d,%d); want no match and no change", got, p2, u2, k2, posted, unexp, parked)
					}
					// It arrives later as usual (Arrive panics on a seq
					// counted twice).
					e.Arrive(&Msg{Envelope: tc.env}, nil)
					return
				}
				if got != rs[tc.want] || p2 != posted-1 || u2 != unexp || k2 != parked {
					t.Fatalf("matched %p (want %p), len %d,%d,%d (was %d,%d,%d)", got, rs[tc.want], p2, u2, k2, posted, unexp, parked)
				}
				// The next message of the source is in turn now.
				next := tc.env
				next.Seq++
				if err := e.Check(&next); err != nil {
					t.Fatalf("the next message after a matched one: %v", err)
				}
				if err := e.Check(&tc.env); err == nil {
					t.Fatal("the matched message's seq is still expected")
				}
			})
		}
	}
}

// TestInbound counts the messages of one source and context released to
// matching, whether a posted receive took them (MatchPosted, Arrive) or
// they wait unexpected; a parked one counts once its turn comes; other
// sources and contexts, and unknown ones, are apart. expecting follows the
// receives posted for the source or for AnySource.
func TestInbound(t *testing.T) {
	e := New(3)
	if n, exp := e.Inbound(1, 0); n != 0 || exp {
		t.Fatalf("unknown context: Inbound %d, %v; want 0, false", n, exp)
	}
	r := &Recv{Ctx: 1, Src: 0, Tag: 5}
	e.Post(r)
	if _, exp := e.Inbound(1, 0); !exp {
		t.Error("a receive posted for source 0: not expecting")
	}
	if _, exp := e.Inbound(1, 1); exp {
		t.Error("a receive posted for source 0 only: expecting from source 1")
	}
	if got := e.MatchPosted(&Envelope{Ctx: 1, Src: 0, Tag: 5, Seq: 0}, func(*Recv) bool { return true }); got != r {
		t.Fatal("MatchPosted did not match the posted receive")
	}
	if _, exp := e.Inbound(1, 0); exp {
		t.Error("the receive was matched: still expecting")
	}
	e.Arrive(&Msg{Envelope: Envelope{Ctx: 1, Src: 0, Tag: 6, Seq: 1}}, nil) // unexpected
	e.Arrive(&Msg{Envelope: Envelope{Ctx: 1, Src: 0, Tag: 6, Seq: 3}}, nil) // parked
	e.Arrive(&Msg{Envelope: Envelope{Ctx: 1, Src: 1, Tag: 6, Seq: 0}}, nil) // another source
	e.Arrive(&Msg{Envelope: Envelope{Ctx: 2, Src: 0, Tag: 6, Seq: 0}}, nil) // another context
	if n, _ := e.Inbound(1, 0); n != 2 {
		t.Errorf("Inbound(1, 0) released %d, want 2 (the parked message not yet)", n)
	}
	e.Arrive(&Msg{Envelope: Envelope{Ctx: 1, Src: 0, Tag: 6, Seq: 2}}, nil) // releases the parked one too
	e.Post(&Recv{Ctx: 1, Src: AnySource, Tag: 9})
	for _, tt := range []struct {
		ctx       uint32
		src, want int
		exp       bool
	}{{1, 0, 4, true}, {1, 1, 1, true}, {1, 2, 0, true}, {2, 0, 1, false}, {1, -1, 0, false}, {1, 3, 0, false}} {
		if n, exp := e.Inbound(tt.ctx, tt.src); int(n) != tt.want || exp != tt.exp {
			t.Errorf("Inbound(%d, %d) = %d, %v; want %d, %v", tt.ctx, tt.src, n, exp, tt.want, tt.exp)
		}
	}
}
