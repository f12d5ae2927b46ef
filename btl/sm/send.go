package sm

import (
	"fmt"
	"unsafe"

	"github.com/gorun-mpi/gorun/btl"
	"github.com/gorun-mpi/gorun/internal/memcpy"
	"github.com/gorun-mpi/gorun/internal/spinlock"
)

// claim reserves the next slot of p's FIFO, or reports that it is full.
//
// The FIFO is multi-producer, single-consumer: senders of many processes and
// goroutines claim slots with a CAS on head (UCX mm's scheme), never with a
// lock, so a sender preempted between claim and publish delays only the
// receiver, not the other senders. The sender compares head with its cached
// copy of the receiver's tail and re-reads the shared tail only when the
// FIFO looks full.
func (p *peer) claim(slots uint64) (*elem, uint64, bool) {
	return p.claimN(slots, 1)
}

// claimN reserves k consecutive slots (a multi-slot inline message) and
// returns the first.
func (p *peer) claimN(slots, k uint64) (*elem, uint64, bool) {
	c := p.ctl
	for {
		h := c.head.Load()
		if h+k-p.cachedTail.Load() > slots {
			t := c.tail.Load()
			p.cachedTail.Store(t)
			if h+k-t > slots {
				return nil, 0, false
			}
		}
		storeSeq(&p.self.claim, claimWord(p.rank, h, k)) // before the CAS: see gone.go
		if c.head.CompareAndSwap(h, h+k) {
			return &p.fifo[h&(slots-1)], h, true
		}
	}
}

// sendInline writes hdr+payload (more than one slot's worth) into
// consecutive slots of p's FIFO: the continuations first (data and seq),
// then the first slot, whose seq publishes them all. It reports false when
// the FIFO has not enough free slots.
func (m *Module) sendInline(p *peer, tag btl.Tag, hdr, payload []byte, seq uint32) bool {
	n := len(hdr) + len(payload)
	k := inlineSlots(n)
	e, h, ok := p.claimN(m.mask+1, uint64(k))
	if !ok {
		return false
	}
	// The message as one stream: hdr then payload, split at slot bounds.
	first := e.inline()
	w := copy(first, hdr)
	w += copy(first[w:], payload)
	rest := payload[w-len(hdr):]
	for i := 1; i < k; i++ {
		c := &p.fifo[(h+uint64(i))&m.mask]
		rest = rest[copy(c.cont(), rest):]
		storeSeq(&c.seq, h+uint64(i)+1) // ordered before the first slot's publish
	}
	e.setHeader(m.rank, kindData, tag, n, 0, seq)
	m.publish(p, e, h)
	return true
}

// setHeader writes slot e's header, everything but seq, whose store
// publishes the slot (publish): the one place a slot header is written.
// n is the bytes of hdr+payload (kindData) or the offsets in data
// (kindAck); frag the fragment holding the data, 0 when inline (kindBox:
// the box number); seq the pair sequence number (0 before the pair has a
// fast box, and for other kinds).
func (e *elem) setHeader(src int, kind uint8, tag btl.Tag, n int, frag int64, seq uint32) {
	e.frag, e.src, e.length, e.tag, e.kind, e.pseq = uint64(frag), uint32(src), uint32(n), uint8(tag), kind, seq
}

// publish makes slot h visible to p's receiver, then wakes it if it sleeps.
//
// Wake-up pairing with Sleep (Dekker): the sender's CAS on head in claim is
// a full fence that comes before its load of armed here; the receiver
// stores armed, then loads head. So either the receiver sees the slot
// claimed (and does not sleep; it waits for the publish by polling), or we
// see armed and wake it after publishing. Because the fence is the claim,
// the seq store itself needs only release order (storeSeq), which on amd64
// is a plain store: no stall on the slot's cache lines per message.
func (m *Module) publish(p *peer, e *elem, h uint64) {
	m.raceSend(p.rank)
	storeSeq(&e.seq, h+1)
	if p.ctl.armed.Load() != 0 {
		wakeCtl(p.ctl)
	}
	// In a burst (no message received since our last send to p), ask for
	// the next slot's line now: the next send's stores then find it
	// writable, and its first locked instruction does not wait ~one
	// cross-core round trip for them. Not in a ping-pong, where p is
	// polling that line: taking it from p would only slow p's poll.
	if m.inBurst(p) {
		memcpy.PrefetchW(unsafe.Pointer(&p.fifo[(h+1)&m.mask]))
	}
}

// burstNext reports whether our last send to p came after our last poll
// that received anything (the send being made is part of a burst); the
// send records itself with noteSend once it is made.
func (m *Module) burstNext(p *peer) bool {
	return p.sendEpoch.Load() == m.recvEpoch.Load()+1
}

// noteSend records a send to p that was not part of a burst, for the next
// burstNext.
func (m *Module) noteSend(p *peer) { storeSeq(&p.sendEpoch, m.recvEpoch.Load()+1) }

// inBurst is burstNext, recording the send.
func (m *Module) inBurst(p *peer) bool {
	if m.burstNext(p) {
		return true
	}
	m.noteSend(p)
	return false
}

// Send queues hdr+payload for peer; see btl.Module. Small messages travel in
// the FIFO slot; larger ones in one of our fragments whose offset the slot
// carries. It never blocks and never calls c. After Close (or racing it, see
// close.go) it returns an error wrapping errs.ErrFinalized.
func (m *Module) Send(dst int, tag btl.Tag, hdr, payload []byte, c btl.Completion) (bool, error) {
	if dst < 0 || dst >= len(m.peers) || dst == m.rank || len(hdr) > btl.MaxHeader ||
		len(payload) > m.cfg.MaxSendSize || tag >= btl.NumTags {
		return false, m.badSend(dst, tag, hdr, payload)
	}
	if !m.copyFirst(len(hdr), len(payload)) {
		// Every touch of the segment is under the peer's lock, which
		// guards it against Close (close.go): no count of users.
		return m.send(dst, tag, hdr, payload, c, false)
	}
	if !m.enter() {
		return false, errClosed
	}
	copied, err := m.send(dst, tag, hdr, payload, c, true)
	m.exit()
	return copied, err
}

// TrySend implements btl.TrySender: Send with no Completion, for a message
// that goes now or into the pending queue as a copy (inline or in a
// fragment); one that would be queued by reference is not sent.
func (m *Module) TrySend(dst int, tag btl.Tag, h btl.Header16, payload []byte) (bool, error) {
	if dst < 0 || dst >= len(m.peers) || dst == m.rank ||
		len(payload) > m.cfg.MaxSendSize || tag >= btl.NumTags {
		hb := h.Bytes()
		return false, m.badSend(dst, tag, hb[:], payload)
	}
	p := &m.peers[dst]
	if 16+len(payload) <= m.boxMsgMax {
		// The common case (a PML's eager send once the pair has a box)
		// straight to the box, without send's and sendNow's calls and
		// checks (about a tenth of an eager Isend's instructions).
		p.mu.Lock()
		sent := m.TrySendLocked(dst, tag, h, payload)
		p.mu.Unlock()
		if sent {
			return true, nil
		}
	} else if m.copyFirst(16, len(payload)) {
		return false, nil // the fragment copy outside the lock is Send's
	}
	hb := h.Bytes()
	return m.send(dst, tag, hb[:], payload, tryOnly{}, false) // hb stays on the stack: nothing below keeps it
}

// SendLock implements btl.LockedSender: the peer's mu, which every send
// to it takes.
func (m *Module) SendLock(dst int) *spinlock.Mutex { return &m.peers[dst].mu.Mutex }

// TrySendLocked implements btl.LockedSender: TrySend's fast case, with the
// peer's mu (SendLock) held: a message that fits the box, sent now when
// the pair has a box with room and nothing queued before it.
func (m *Module) TrySendLocked(dst int, tag btl.Tag, h btl.Header16, payload []byte) bool {
	p := &m.peers[dst]
	n := 16 + len(payload)
	if n > m.boxMsgMax || tag >= btl.NumTags || p.out == nil || p.mu.q.Len() != 0 || m.closed.Load() || p.lost.Load() {
		return false
	}
	if len(payload) <= memcpy.TinyMax {
		return m.boxMatch(p, tag, h, payload)
	}
	hb := h.Bytes()
	_, sent := m.sendBox(p, tag, hb[:], payload, n, m.boxMsgMax)
	return sent
}

// TrySendBytesLocked implements btl.LockedSender: TrySendLocked for a
// header of any length, sent only into the box; a serial one up to
// boxSerMax bytes, others up to boxMsgMax.
func (m *Module) TrySendBytesLocked(dst int, tag btl.Tag, hdr, payload []byte, serial bool) bool {
	p := &m.peers[dst]
	n, max := len(hdr)+len(payload), m.boxMsgMax
	if serial {
		max = m.boxSerMax
	}
	if n > max || len(hdr) > btl.MaxHeader || tag >= btl.NumTags || p.out == nil || p.mu.q.Len() != 0 || m.closed.Load() || p.lost.Load() {
		return false
	}
	_, sent := m.sendBox(p, tag, hdr, payload, n, max)
	return sent
}

var _ btl.LockedSender = (*Module)(nil)

// tryOnly is TrySend's completion: enqueueLocked refuses to keep a message
// by reference for it, so it is never called.
type tryOnly struct{}

func (tryOnly) SendDone(error) {}

// joinMax is the largest message (hdr+payload) that putJoined assembles
// on the stack first.
const joinMax = 64

// putJoined copies hdr and then payload into d, shared memory the other
// process reads (a box record, a FIFO slot); len(d) is their total. A small
// message with both parts is assembled on the stack and goes into d with
// one copy: two copies straight into d, the second starting while the
// first one's stores still wait for the line to come over from the core
// that polls it, cost the ping-pong 30-70 ns per message on a host whose
// cores are ~160 ns apart (go test -bench PingPong ./btl/sm with the
// PML's 16-byte header in front of 8 bytes of payload: 315-345 -> 256-266
// ns one way).
func putJoined(d, hdr, payload []byte) {
	switch {
	case len(hdr) == 16 && len(payload) == 0:
		*(*[16]byte)(d) = [16]byte(hdr) // the PML's MATCH header alone: one store
	case len(hdr) == 16 && len(payload) <= memcpy.TinyMax:
		// The MATCH header and a few bytes, assembled with word stores
		// rather than two memmove calls.
		var t [16 + memcpy.TinyMax]byte
		*(*[16]byte)(t[:16]) = [16]byte(hdr)
		memcpy.Small(t[16:], payload)
		copy(d, t[:len(d)])
	case len(hdr) > 0 && len(payload) > 0 && len(d) <= joinMax:
		var t [joinMax]byte
		copy(t[copy(t[:], hdr):], payload)
		copy(d, t[:len(d)])
	default:
		memcpy.Copy(d[copy(d, hdr):], payload)
	}
}

// copyFirst reports whether a message of hdr+payload bytes is copied into
// a fragment before the peer's lock is taken (the copy is the long part):
// one that fits neither the inline limit nor a fast box.
func (m *Module) copyFirst(hdr, payload int) bool {
	return payload > m.inlineLimit && hdr+payload > m.boxMsgMax
}

// send is Send once the arguments are checked; counted says whether the
// caller counted itself as a user (copyFirst messages), else it checks for
// Close under the peer's lock. Sends to one peer are serialized by its mu
// (an in-process lock): that is what orders the box and the FIFO (doc.go),
// and what makes the box's ring single-writer.
func (m *Module) send(dst int, tag btl.Tag, hdr, payload []byte, c btl.Completion, counted bool) (bool, error) {
	p := &m.peers[dst]
	if p.lost.Load() {
		return false, errPeerLost(dst)
	}
	n := len(hdr) + len(payload)
	var off int64
	if counted && p.npending.Load() == 0 {
		if off = m.getFrag(len(payload)); off != 0 {
			b := m.mem[off : off+int64(n)]
			memcpy.Copy(b[copy(b, hdr):], payload)
		}
	}
	p.mu.Lock()
	if !counted && m.closed.Load() {
		p.mu.Unlock()
		return false, errClosed
	}
	if p.mu.q.Len() == 0 && m.sendNow(p, tag, hdr, payload, n, &off) {
		p.mu.Unlock()
		return true, nil
	}
	copied, err := m.enqueueLocked(p, tag, hdr, payload, n, off, c)
	p.mu.Unlock()
	return copied, err
}

// sendBox puts hdr+payload (n bytes) in p's fast box and wakes p if it
// sleeps. It reports the pair sequence number the message carries, which
// a message the box cannot take (more than max bytes, or the ring full)
// carries into the FIFO, and whether the box took it. Called with p.mu
// held, p.out set and p's pending queue empty.
func (m *Module) sendBox(p *peer, tag btl.Tag, hdr, payload []byte, n, max int) (uint32, bool) {
	seq := nextSeq(p.seq)
	burst := m.burstNext(p)
	m.raceSend(p.rank)
	if n > max || !p.out.put(tag, seq, hdr, payload, !burst) {
		return seq, false
	}
	m.sentBox(p, seq, burst)
	return seq, true
}

// boxMatch is sendBox for TrySend's messages: a 16-byte header as two
// words and at most memcpy.TinyMax bytes of payload, which putMatch
// writes from registers. Its arguments, unlike sendBox's twelve words,
// all travel in registers (callgrind: 12 instructions less per message of
// a window, 10 per ping-pong message).
func (m *Module) boxMatch(p *peer, tag btl.Tag, h btl.Header16, payload []byte) bool {
	seq := nextSeq(p.seq)
	burst := m.burstNext(p)
	m.raceSend(p.rank)
	if !p.out.putMatch(tag, seq, h, payload, !burst) {
		return false
	}
	m.sentBox(p, seq, burst)
	return true
}

// sentBox ends sendBox and boxMatch for a message the box took, number
// seq: the pair's sequence advances, a sleeping receiver is woken, and a
// burst asks for the ring's next line (else the send is noted).
func (m *Module) sentBox(p *peer, seq uint32, burst bool) {
	p.seq = seq
	if p.ctl.armed.Load() != 0 {
		wakeCtl(p.ctl)
	}
	if burst {
		p.out.prefetch()
	} else {
		m.noteSend(p)
	}
}

// sendNow sends at once: in p's fast box when there is one and the message
// fits, else in p's FIFO (inline, in consecutive slots, or in a fragment:
// *off when the caller filled one, else one it takes and fills). It reports
// false when the FIFO or our fragments are full; *off is then the filled
// fragment, if any. Called with p.mu held and p's pending queue empty.
func (m *Module) sendNow(p *peer, tag btl.Tag, hdr, payload []byte, n int, off *int64) bool {
	if p.out == nil && !p.noBox {
		if p.sends++; p.sends >= m.cfg.FboxThreshold {
			m.setupBox(p)
		}
	}
	var seq uint32
	if p.out != nil {
		var sent bool
		if seq, sent = m.sendBox(p, tag, hdr, payload, n, m.boxMsgMax); sent {
			return true
		}
	}
	switch {
	case n <= inlineMax:
		e, h, ok := p.claim(m.mask + 1)
		if !ok {
			return false
		}
		e.setHeader(m.rank, kindData, tag, n, 0, seq)
		putJoined(e.inline()[:n], hdr, payload)
		m.publish(p, e, h)
	case len(payload) <= m.inlineLimit:
		if !m.sendInline(p, tag, hdr, payload, seq) {
			return false
		}
	default:
		if *off == 0 {
			if *off = m.getFrag(len(payload)); *off == 0 {
				return false
			}
			b := m.mem[*off : *off+int64(n)]
			memcpy.Copy(b[copy(b, hdr):], payload)
		}
		e, h, ok := p.claim(m.mask + 1)
		if !ok {
			return false
		}
		e.setHeader(m.rank, kindData, tag, n, *off, seq)
		m.publish(p, e, h)
	}
	if p.out != nil {
		p.seq = seq
	}
	return true
}

func (m *Module) badSend(dst int, tag btl.Tag, hdr, payload []byte) error {
	switch {
	case m.closed.Load():
		return errClosed
	case dst < 0 || dst >= len(m.peers) || dst == m.rank:
		return fmt.Errorf("btl/sm: send to rank %d: not reachable; allowed 0..%d except this rank %d", dst, len(m.peers)-1, m.rank)
	case len(hdr) > btl.MaxHeader:
		return fmt.Errorf("btl/sm: header of %d bytes; allowed at most %d", len(hdr), btl.MaxHeader)
	case len(payload) > m.cfg.MaxSendSize:
		return fmt.Errorf("btl/sm: payload of %d bytes; allowed at most btl_sm_max_send_size=%d", len(payload), m.cfg.MaxSendSize)
	}
	return fmt.Errorf("btl/sm: tag %d; allowed below %d", tag, btl.NumTags)
}

// getFrag takes a fragment for a payload of size n: an eager one when it
// fits, else (or when those are all out) a max-size one. 0 means none.
func (m *Module) getFrag(n int) int64 {
	if n <= m.cfg.EagerLimit {
		if off := m.eager.get(); off != 0 {
			return off
		}
	}
	return m.maxFrags.get()
}

// enqueueLocked appends a send to p's pending queue; p.mu is held. frag !=
// 0: hdr+payload are already in that fragment. Otherwise small data is
// copied into the op, and large data into a fragment if one is free and no
// by-reference op is queued (see peer.mu.refs), else kept by reference with
// completion c; when c is tryOnly (TrySend) it is not queued at all and
// enqueueLocked reports false.
func (m *Module) enqueueLocked(p *peer, tag btl.Tag, hdr, payload []byte, n int, frag int64, c btl.Completion) (bool, error) {
	if p.lost.Load() {
		if frag != 0 {
			m.putFrag(frag)
		}
		return false, errPeerLost(p.rank)
	}
	if frag != 0 && p.mu.refs > 0 {
		m.putFrag(frag) // another goroutine queued a by-reference op first
		frag = 0
	}
	if frag == 0 && n > inlineMax && p.mu.refs == 0 {
		if frag = m.getFrag(len(payload)); frag != 0 {
			b := m.mem[frag : frag+int64(n)]
			memcpy.Copy(b[copy(b, hdr):], payload)
		}
	}
	byRef := frag == 0 && n > inlineMax
	if byRef && c == (tryOnly{}) {
		return false, nil // TrySend: by reference needs a real Completion
	}
	op := p.mu.q.Push()
	op.tag, op.n, op.frag, op.hdrLen, op.payload, op.c = tag, n, frag, len(hdr), nil, nil
	switch {
	case frag != 0:
	case n <= inlineMax:
		copy(op.inline[copy(op.inline[:], hdr):], payload)
	default:
		copy(op.inline[:], hdr)
		op.payload, op.c = payload, c
		p.mu.refs++
	}
	if p.npending.Add(1) == 1 {
		m.pendPeers.Add(1)
	}
	return !byRef, nil
}

// drain sends what it can from p's pending queue, in order. It stops at the
// first send that finds no fragment or no FIFO slot. Completions are called
// without the lock held (they may Send). Called from Progress only.
func (m *Module) drain(p *peer) int {
	sent := 0
	for {
		p.mu.Lock()
		if p.mu.q.Len() == 0 {
			p.mu.Unlock()
			return sent
		}
		op := p.mu.q.Front()
		var done btl.Completion
		if op.frag == 0 && op.payload != nil {
			off := m.getFrag(len(op.payload))
			if off == 0 {
				p.mu.Unlock()
				return sent
			}
			b := m.mem[off : off+int64(op.n)]
			memcpy.Copy(b[copy(b, op.inline[:op.hdrLen]):], op.payload)
			op.frag, op.payload, done, op.c = off, nil, op.c, nil
			p.mu.refs--
		}
		var seq uint32
		if p.out != nil {
			seq = nextSeq(p.seq)
		}
		ok := op.frag == 0 && p.out != nil && op.n <= m.boxMsgMax && p.out.put(op.tag, seq, op.inline[:op.n], nil, false)
		if ok {
			if p.ctl.armed.Load() != 0 {
				wakeCtl(p.ctl)
			}
		} else if e, h, claimed := p.claim(m.mask + 1); claimed {
			e.setHeader(m.rank, kindData, op.tag, op.n, op.frag, seq)
			if op.frag == 0 {
				copy(e.inline(), op.inline[:op.n])
			}
			m.publish(p, e, h)
			ok = true
		}
		if ok {
			if p.out != nil {
				p.seq = seq
			}
			p.mu.q.Pop()
			sent++
			// Decrement after publishing: a Send that then sees 0 goes
			// straight to the FIFO behind everything queued before it.
			if p.npending.Add(-1) == 0 {
				m.pendPeers.Add(-1)
			}
		}
		p.mu.Unlock()
		if done != nil {
			done.SendDone(nil)
		}
		if !ok {
			return sent
		}
	}
}

// failPending empties a lost peer's queue: fragments go back to our pools,
// sends by reference get SendDone(ErrPeerLost). Called from Progress only,
// after p.lost is set (so nothing is added any more).
func (m *Module) failPending(p *peer) {
	for {
		p.mu.Lock()
		if p.mu.q.Len() == 0 {
			p.mu.Unlock()
			return
		}
		op := p.mu.q.Front()
		frag, c := op.frag, op.c
		if op.payload != nil {
			p.mu.refs--
		}
		p.mu.q.Pop()
		if p.npending.Add(-1) == 0 {
			m.pendPeers.Add(-1)
		}
		p.mu.Unlock()
		if frag != 0 {
			m.putFrag(frag)
		}
		if c != nil {
			c.SendDone(errPeerLost(p.rank))
		}
	}
}

// putFrag returns one of our fragments to its pool; false if off is not one.
func (m *Module) putFrag(off int64) bool {
	var err error
	switch {
	case m.eager.owns(off):
		err = m.eager.put(off)
	case m.maxFrags.owns(off):
		err = m.maxFrags.put(off)
	default:
		err = fmt.Errorf("btl/sm: ack for offset %d, which is not a fragment of rank %d", off, m.rank)
	}
	if err != nil {
		m.log.Error("dropping bad fragment ack", "error", err)
		return false
	}
	return true
}
