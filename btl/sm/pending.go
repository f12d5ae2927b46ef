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

// ring is a FIFO queue of pendingOps that grows by doubling and reuses its
// storage: no allocation in steady state.
type ring struct {
	ops        []pendingOp
	head, size int
}

func (r *ring) len() int { return r.size }

// push returns the new last element for the caller to fill.
func (r *ring) push() *pendingOp {
	if r.size == len(r.ops) {
		n := max(8, 2*len(r.ops))
		ops := make([]pendingOp, n)
		for i := 0; i < r.size; i++ {
			ops[i] = r.ops[(r.head+i)%len(r.ops)]
		}
		r.ops, r.head = ops, 0
	}
	op := &r.ops[(r.head+r.size)%len(r.ops)]
	r.size++
	return op
}

func (r *ring) front() *pendingOp { return &r.ops[r.head] }

// pop drops the front element, clearing its references.
func (r *ring) pop() {
	op := &r.ops[r.head]
	op.payload, op.c = nil, nil
	r.head = (r.head + 1) % len(r.ops)
	r.size--
}

// Queued implements btl.Flusher: a send to peer waits in its pending queue.
func (m *Module) Queued(peer int) bool {
	if peer < 0 || peer >= len(m.peers) || peer == m.rank {
		return false
	}
	p := &m.peers[peer]
	return p.npending.Load() > 0 && !p.lost.Load()
}

var (
	_ btl.Sleeper = (*Module)(nil)
	_ btl.Flusher = (*Module)(nil)
)
