package sm

import (
	"time"

	"github.com/gorun-mpi/gorun/btl"
)

// peerCheckEvery is how often (in Progress calls) Progress looks at the
// clock, and peerCheckPeriod how often it then polls for lost peers: no
// syscall and no clock read per message.
const (
	peerCheckEvery  = 64
	peerCheckPeriod = 5 * time.Millisecond
)

// Progress delivers arrived fragments, returns acknowledged fragments to
// their pools, sends queued acks and retries every pending queue. Only one
// goroutine progresses at a time; a concurrent caller returns 0 at once.
func (m *Module) Progress() int {
	if !m.beginPoll() {
		return 0
	}
	n := 0
	if m.fifoWaiting() {
		n = m.poll()
	}
	n += m.pollBoxes()
	if len(m.prog.ackPeers) > 0 {
		m.flushAcks()
	}
	if m.pendPeers.Load() > 0 {
		for i := range m.peers {
			if p := &m.peers[i]; p.npending.Load() > 0 && !p.lost.Load() {
				n += m.drain(p)
			}
		}
	}
	m.prog.tick++
	if m.prog.tick%peerCheckEvery == 0 && m.monitor.active() {
		if now := time.Now(); now.Sub(m.prog.lastChk) >= peerCheckPeriod {
			m.prog.lastChk = now
			m.monitor.check()
		}
	}
	if m.lostUnrep.Load() {
		n += m.reportLost()
	}
	m.progMu.Unlock()
	return n
}

// PollFrom implements btl.SourcePoller: Progress for src alone. In
// Progress's order: the FIFO only when a slot waits there (fifoWaiting, a
// load), src's fast box, the acks we owe (a rendezvous's fragments return
// to their sender so), and src's queue of pending sends (a pipelined
// send's fragments wait there when the FIFO is full). Other peers' boxes
// and queues, and the checks for lost peers, wait for the next Progress.
// src outside the job polls the FIFO and the acks alone.
func (m *Module) PollFrom(src int) int {
	if !m.beginPoll() {
		return 0
	}
	n := 0
	if m.fifoWaiting() {
		n = m.poll()
	}
	var p *peer
	if uint(src) < uint(len(m.peers)) {
		p = &m.peers[src]
		if b := p.in; b != nil {
			if k := m.pollIn(b); k > 0 {
				n += k
				storeSeq(&m.recvEpoch, m.recvEpoch.Load()+1) // as pollBoxes
			}
		}
	}
	if len(m.prog.ackPeers) > 0 {
		m.flushAcks()
	}
	if p != nil && p.npending.Load() > 0 && !p.lost.Load() {
		n += m.drain(p)
	}
	m.progMu.Unlock()
	return n
}

var _ btl.SourcePoller = (*Module)(nil)

// Waiting implements btl.SourcePoller: a published slot at our released
// tail (fifoReady without its look at the head, a line every sender
// writes), a record at src's box's published read position (boxIn.ready),
// or sends to src queued. The released positions may lag what Progress
// has consumed; the answer is then a stale yes, and that poll, finding
// the FIFO or the box dry, publishes the true position. Acks waiting for
// room in a sender's FIFO (prog.ackPeers, progMu's) are not looked at:
// the caller's next poll sends them.
func (m *Module) Waiting(src int) bool {
	if t := m.ctl.tail.Load(); m.fifo[t&m.mask].seq.Load() == t+1 {
		return true
	}
	if uint(src) >= uint(len(m.peers)) {
		return false
	}
	p := &m.peers[src]
	if b := p.inPub.Load(); b != nil && b.ready() {
		return true
	}
	return p.npending.Load() > 0
}

// beginPoll takes progMu for a poll (Progress, PollFrom); false when
// another goroutine is polling or the module is closed.
func (m *Module) beginPoll() bool {
	if !m.progMu.TryLock() {
		return false
	}
	if m.closed.Load() {
		m.progMu.Unlock()
		return false
	}
	return true
}

// fifoWaiting reports whether poll has anything to do: a slot published
// at tail, a tail not yet released, or a lost peer (whose claimed slots
// poll may skip). Progress tests it inline, so that a poll of an empty
// FIFO (every poll of a rank whose peers all have boxes) costs a load and
// no call.
func (m *Module) fifoWaiting() bool {
	st := &m.prog
	return m.fifo[st.tail&m.mask].seq.Load() == st.tail+1 || st.released != st.tail || m.someLost.Load()
}

// poll reads our FIFO from tail until an unpublished slot, at most one lap.
func (m *Module) poll() int {
	st := &m.prog
	n := 0
	for n <= int(m.mask) {
		e := &m.fifo[st.tail&m.mask]
		if e.seq.Load() != st.tail+1 {
			if k := m.abandoned(st.tail); k > 0 { // only once a peer is lost
				st.tail += k
				n += int(k)
				continue
			}
			break
		}
		k := 1
		switch e.kind {
		case kindData:
			k = m.deliver(e, st.tail)
		case kindAck:
			m.takeAcks(e)
		case kindBox:
			m.addBox(int(e.src), e.frag)
		default:
			m.log.Error("dropping FIFO slot of unknown kind", "kind", e.kind, "src", e.src, "slot", st.tail)
		}
		st.tail += uint64(k)
		n += k
		// Lazy free: release the tail in batches while busy...
		if st.tail-st.released >= uint64(m.cfg.LazyFree) {
			storeSeq(&m.ctl.tail, st.tail) // release order suffices: our loads of the slots come first
			st.released = st.tail
		}
	}
	if n > 0 {
		storeSeq(&m.recvEpoch, m.recvEpoch.Load()+1) // only a poll under progMu writes it
	}
	// ...and at once when the FIFO runs dry, so senders never wait on slots
	// we have finished with.
	if st.released != st.tail {
		if e := &m.fifo[st.tail&m.mask]; e.seq.Load() != st.tail+1 {
			storeSeq(&m.ctl.tail, st.tail) // release order suffices: our loads of the slots come first
			st.released = st.tail
		}
	}
	return n
}

// deliver hands the data message starting at slot h (e) to its tag's
// callback and returns the number of slots it took. Everything in the slot
// comes from another process and is checked before use: a bad sender rank,
// tag, length or fragment offset is logged and the slot dropped, never
// followed.
func (m *Module) deliver(e *elem, h uint64) int {
	src, tag, n, off := int(e.src), btl.Tag(e.tag), int64(e.length), int64(e.frag)
	if src >= len(m.peers) || src == m.rank || tag >= btl.NumTags {
		m.log.Error("dropping FIFO slot with bad sender or tag", "src", src, "tag", tag, "ranks", len(m.peers))
		return 1
	}
	m.raceRecv(src)
	fn := m.recv[tag]
	if e.pseq != 0 {
		m.catchUp(src, e.pseq)
	}
	if off == 0 {
		switch {
		case n <= inlineMax:
			if fn != nil {
				fn(src, e.inline()[:n:n])
			}
			return 1
		case n > int64(len(m.prog.gather)):
			m.log.Error("dropping inline FIFO slot with bad length", "src", src, "length", n, "max", len(m.prog.gather))
			return 1
		}
		k := inlineSlots(int(n))
		// Gather the continuation slots behind the first one; each must
		// carry its own slot number, or the length is a lie (the slots
		// were never claimed: consuming them could pass the head).
		b := m.prog.gather[:n:n]
		w := copy(b, e.inline())
		for i := 1; i < k; i++ {
			c := &m.fifo[(h+uint64(i))&m.mask]
			if c.seq.Load() != h+uint64(i)+1 {
				m.log.Error("dropping inline FIFO slot whose length claims unwritten slots", "src", src, "length", n, "slots", k)
				return 1
			}
			w += copy(b[w:], c.cont())
		}
		if fn != nil {
			fn(src, b)
		}
		return k
	}
	if !m.validFrag(src, off, n) {
		m.log.Error("dropping FIFO slot with a bad fragment offset", "src", src, "offset", off, "length", n,
			"eager", m.peers[src].region.Eager, "end", m.peers[src].region.End)
		return 1
	}
	if fn != nil {
		fn(src, m.mem[off:off+n:off+n])
	} else {
		m.log.Error("dropping fragment for a tag without a callback", "src", src, "tag", tag)
	}
	m.queueAck(src, off)
	return 1
}

// validFrag: off is the start of one of src's fragments and n fits in it.
func (m *Module) validFrag(src int, off, n int64) bool {
	r := &m.peers[src].region
	es, ms := m.cfg.EagerFragSize(), m.cfg.MaxFragSize()
	switch {
	case off >= r.Eager && off < r.Max:
		return (off-r.Eager)%es == 0 && n <= es
	case off >= r.Max && off < r.End:
		return (off-r.Max)%ms == 0 && n <= ms
	}
	return false
}

// queueAck records that fragment off goes back to src; acks leave in
// batches of up to maxAcks per slot (flushAcks, at the end of Progress).
func (m *Module) queueAck(src int, off int64) {
	p := &m.peers[src]
	if len(p.acks) == 0 {
		m.prog.ackPeers = append(m.prog.ackPeers, src)
		if p.acks == nil {
			// Made here, at the first fragment from src, not for every
			// peer at New: 512 B per peer is 512 KiB per rank at 1024
			// ranks (issue 16 item 11), for peers that may never send one.
			p.acks = make([]int64, 0, m.cfg.FreeListMax+m.maxFrags.max)
		}
	}
	p.acks = append(p.acks, off)
}

// flushAcks writes queued acks into their owners' FIFOs. An owner whose FIFO
// is full keeps its acks queued for the next Progress: acks never wait
// inside Progress, so two ranks with full FIFOs cannot deadlock (each still
// drains its own FIFO, which frees the other's slots).
func (m *Module) flushAcks() {
	keep := m.prog.ackPeers[:0]
	for _, r := range m.prog.ackPeers {
		p := &m.peers[r]
		for len(p.acks) > 0 && !p.lost.Load() {
			e, h, ok := p.claim(m.mask + 1)
			if !ok {
				break
			}
			k := min(len(p.acks), maxAcks)
			for i := 0; i < k; i++ {
				e.data[i] = uint64(p.acks[i])
			}
			e.setHeader(m.rank, kindAck, 0, k, 0, 0)
			m.publish(p, e, h)
			p.acks = p.acks[:copy(p.acks, p.acks[k:])]
		}
		if p.lost.Load() {
			p.acks = p.acks[:0]
		}
		if len(p.acks) > 0 {
			keep = append(keep, r)
		}
	}
	m.prog.ackPeers = keep
}

// takeAcks returns the fragments listed in an ack slot to our pools.
func (m *Module) takeAcks(e *elem) {
	k := int(e.length)
	if k > maxAcks {
		m.log.Error("dropping ack slot with bad count", "src", e.src, "count", k, "max", maxAcks)
		return
	}
	for i := 0; i < k; i++ {
		m.putFrag(int64(e.data[i]))
	}
}

// reportLost calls the handler and fails pending sends for every peer found
// lost since the last report.
func (m *Module) reportLost() int {
	m.lostUnrep.Store(false)
	// What a lost peer published before it went is delivered before its
	// loss is reported (its last messages are often the ones a receive
	// waits for: the barrier message of a rank that then left Finalize).
	// A Progress call polls at most boxPollBoxes boxes, and the loss may
	// have been found after this call's polls: read the FIFO again, then
	// the lost peers' boxes to their end. The peer is gone, so nothing it
	// stored can still be on its way.
	n := m.poll()
	for i := range m.peers {
		p := &m.peers[i]
		if !p.lost.Load() || p.reported {
			continue
		}
		if p.in != nil {
			n += m.pollBox(p.in, int(p.in.size), false)
		}
		p.reported = true
		n++
		m.log.Debug("peer lost", "rank", p.rank, "pid", p.pid)
		if m.onLost != nil {
			m.onLost(p.rank)
		}
		m.failPending(p)
	}
	return n
}
