package sm

import (
	"testing"

	"github.com/gorun-mpi/gorun/btl"
)

// isIdle is idle's answer without its every-idleEvery-th full call.
func isIdle(m *Module) bool {
	m.idleTick.Store(0)
	idle, _ := m.idle()
	return idle
}

// TestIdleSeesWork: Progress's lock-free check (idle) reports work whenever
// a full call would find some: a FIFO slot, a box record, acks its owner's
// full FIFO refused, sends queued for a full FIFO. Were it to answer idle
// then, a waiting rank would never take the message.
func TestIdleSeesWork(t *testing.T) {
	cfg := smallConfig()  // 4-slot FIFOs: full after four messages
	cfg.FboxThreshold = 5 // a pair's first four messages take the FIFO
	mods := newJob(t, 2, cfg)
	a, b := mods[0], mods[1]
	var got int
	b.Register(btl.TagPMLMatch, func(src int, data []byte) { got++ })
	a.Register(btl.TagPMLMatch, func(src int, data []byte) {})
	if !isIdle(a) || !isIdle(b) {
		t.Fatal("a fresh module is not idle")
	}
	hdr := make([]byte, 16)
	// The first messages go through the FIFO, the later ones through the box.
	for i := 0; i < 6; i++ {
		if _, err := a.Send(1, btl.TagPMLMatch, hdr, []byte{byte(i)}, nil); err != nil {
			t.Fatal(err)
		}
		if isIdle(b) {
			t.Fatalf("message %d published (box announced: %v), but the receiver looks idle", i, a.peers[1].out != nil)
		}
		for !isIdle(b) {
			b.Progress()
		}
		if got != i+1 {
			t.Fatalf("after message %d the receiver looks idle with %d delivered", i, got)
		}
	}
	if a.peers[1].out == nil {
		t.Fatal("no fast box after 6 messages (threshold 5)")
	}

	// Fill a's FIFO from b: b's next send is queued, and b is not idle.
	for i := 0; i < 5; i++ {
		if _, err := b.Send(0, btl.TagPMLMatch, hdr, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if b.pendPeers.Load() == 0 || isIdle(b) {
		t.Fatalf("b has a send queued (pending peers %d), but looks idle", b.pendPeers.Load())
	}
	// A fragment from a, which b acks: the ack finds a's FIFO full and
	// stays queued (and b's queued send stays queued).
	big := make([]byte, a.boxMsgMax+1) // no box, no inline slots: a fragment
	if _, err := a.Send(1, btl.TagPMLMatch, hdr, big, nil); err != nil {
		t.Fatal(err)
	}
	pumpUntil(t, []*Module{b}, func() bool { return got == 7 })
	b.pendPeers.Add(-1) // hide the queued send: only the ack is left to see
	idle := isIdle(b)
	b.pendPeers.Add(1)
	if !b.acksLeft.Load() || idle {
		t.Fatalf("b holds an ack for a's full FIFO (acksLeft %v), but looks idle", b.acksLeft.Load())
	}
	pumpUntil(t, mods, func() bool { return isIdle(a) && isIdle(b) })
	if b.acksLeft.Load() || b.pendPeers.Load() != 0 {
		t.Fatalf("both idle with acks left %v, pending peers %d", b.acksLeft.Load(), b.pendPeers.Load())
	}
}
