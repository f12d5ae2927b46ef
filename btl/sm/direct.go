package sm

import "github.com/gorun-mpi/gorun/btl"

// TakeFrom implements btl.DirectTaker for src's fast box: the record at
// the box's read position, when it is the pair's next (the sequence
// pollBox checks) and a data record with a tag in tags, goes to t instead
// of the registered callback, and is consumed when t takes it. It does
// not look when the poll would have other work first: FIFO slots (which
// may carry src's earlier messages: catchUp), acks to send, sends to src
// queued, a box found corrupt. The read position is published as pollBox
// does it in ping-pong style: when the box is found empty, or half of it
// read.
func (m *Module) TakeFrom(src int, tags btl.TagSet, t btl.Taker) int {
	if uint(src) >= uint(len(m.peers)) || !m.beginPoll() {
		return -1
	}
	p := &m.peers[src]
	b := p.in
	if b == nil || b.dead || m.fifoWaiting() || len(m.prog.ackPeers) > 0 || p.npending.Load() > 0 {
		m.progMu.Unlock()
		return -1
	}
	off := b.r & (b.size - 1)
	w := b.word(off).Load()
	if w == 0 {
		if b.r != b.released {
			b.release()
		}
		m.progMu.Unlock()
		return 0
	}
	rs, data := dataRecord(w, off, b.size, m.boxSerMax)
	rec := recordOf(w)
	if !data || rec.seq != b.exp || !tags.Has(rec.tag) {
		m.progMu.Unlock()
		return -1
	}
	m.raceRecv(b.src)
	if !t.Take(src, rec.tag, b.record(off, rec.n)) {
		m.progMu.Unlock()
		return -1
	}
	b.r += rs
	b.exp = nextSeq(b.exp)
	b.hot = false
	if b.r-b.released >= b.size/2 {
		b.release()
	}
	storeSeq(&m.recvEpoch, m.recvEpoch.Load()+1)
	m.progMu.Unlock()
	return 1
}

var _ btl.DirectTaker = (*Module)(nil)
