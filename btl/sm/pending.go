package sm

import "github.com/gorun-mpi/gorun/btl"

// pendingOp is a send that could not go into the receiver's FIFO yet. Its
// data is in exactly one place:
//   - frag != 0: hdr+payload already copied into our fragment frag (copied);
//   - frag == 0 && payload == nil: hdr+payload copied into inline (copied);
//   - frag == 0 && payload != nil: hdr copied, payload still the caller's;
//     c.SendDone is owed once it has been copied into a fragment.
type pendingOp struct {
	tag     btl.Tag
	n       int // bytes of hdr+payload
	frag    int64
	hdrLen  int
	payload []byte
	c       btl.Completion
	inline  [inlineMax]byte // hdr+payload (small sends), or hdr alone (by reference)
}

// QueueMark implements btl.Flusher: the count of sends to peer that went
// through its pending queue so far.
func (m *Module) QueueMark(peer int) uint64 {
	if peer < 0 || peer >= len(m.peers) || peer == m.rank {
		return 0
	}
	p := &m.peers[peer]
	p.mu.Lock()
	n := p.mu.q.Pushed()
	p.mu.Unlock()
	return n
}

// Flushed implements btl.Flusher: the first mark sends of peer's pending
// queue have left it (into peer's FIFO, or dropped because peer is lost).
// Sends that did not queue went into the FIFO inside Send.
func (m *Module) Flushed(peer int, mark uint64) bool {
	if peer < 0 || peer >= len(m.peers) || peer == m.rank {
		return true
	}
	p := &m.peers[peer]
	p.mu.Lock()
	done := p.mu.q.Popped() >= mark
	p.mu.Unlock()
	return done || p.lost.Load()
}

// NoneQueued reports whether no peer's pending queue holds a send: every
// send accepted so far has been handed over (Finalize then needs no
// QueueMark per peer).
func (m *Module) NoneQueued() bool { return m.pendPeers.Load() == 0 }

var (
	_ btl.Sleeper = (*Module)(nil)
	_ btl.Flusher = (*Module)(nil)
)
