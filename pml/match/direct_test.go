package match

import "testing"

// TestTakeDirect: a message goes to a receive that is not posted only when
// it is its source's next in turn, no receive posted before accepts it (an
// exact one with its tag or AnyTag, or any AnySource one), and nothing
// from its source waits unexpected or parked; taking it moves the turn on,
// and a refusal changes nothing.
func TestTakeDirect(t *testing.T) {
	const ctx, other = 7, 8
	for _, tc := range []struct {
		name  string
		setup func(e *Engine)
		seq   uint32
		want  bool
	}{
		{"nothing else", func(e *Engine) {}, 0, true},
		{"not in turn", func(e *Engine) {}, 1, false},
		{"posted for src, same tag", func(e *Engine) { e.Post(&Recv{Ctx: ctx, Src: 1, Tag: 5}) }, 0, false},
		{"posted for src, AnyTag", func(e *Engine) { e.Post(&Recv{Ctx: ctx, Src: 1, Tag: AnyTag}) }, 0, false},
		{"posted for src, other tag", func(e *Engine) { e.Post(&Recv{Ctx: ctx, Src: 1, Tag: 6}) }, 0, true},
		{"posted for another src", func(e *Engine) { e.Post(&Recv{Ctx: ctx, Src: 2, Tag: 5}) }, 0, true},
		{"posted for AnySource, other tag", func(e *Engine) { e.Post(&Recv{Ctx: ctx, Src: AnySource, Tag: 6}) }, 0, false},
		{"posted in another context", func(e *Engine) { e.Post(&Recv{Ctx: other, Src: 1, Tag: 5}) }, 0, true},
		{"unexpected from src", func(e *Engine) { e.Arrive(&Msg{Envelope: Envelope{Ctx: ctx, Src: 1, Tag: 9, Seq: 0}}, nil) }, 1, false},
		{"unexpected from another src", func(e *Engine) { e.Arrive(&Msg{Envelope: Envelope{Ctx: ctx, Src: 2, Tag: 5, Seq: 0}}, nil) }, 0, true},
		{"parked from src", func(e *Engine) { e.Arrive(&Msg{Envelope: Envelope{Ctx: ctx, Src: 1, Tag: 5, Seq: 1}}, nil) }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := New(4)
			tc.setup(e)
			before, _ := e.Inbound(ctx, 1)
			posted, unexp, parked := e.Len()
			if got := e.TakeDirect(ctx, 1, 5, tc.seq); got != tc.want {
				t.Fatalf("TakeDirect(seq %d) = %v, want %v", tc.seq, got, tc.want)
			}
			after, _ := e.Inbound(ctx, 1)
			wantAfter := before // a refusal leaves src's turn
			if tc.want {
				wantAfter++
			}
			if after != wantAfter {
				t.Errorf("src's turn %d -> %d, want %d", before, after, wantAfter)
			}
			if p, u, k := e.Len(); p != posted || u != unexp || k != parked {
				t.Errorf("queues (posted, unexpected, parked) %d %d %d -> %d %d %d; want unchanged", posted, unexp, parked, p, u, k)
			}
		})
	}
}
